package book

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The docs that quote measurements of the current folders. A number quoted
// there cannot go stale unnoticed: it is either in a block checked against
// the book (between numbersBegin and numbersEnd, every number of which the
// committed book, results/book/, holds), or in a dated record, a paragraph
// (a table with the paragraph above it) that names the commit or the date
// it was measured at, or whose section's heading does, a record that a
// later run does not contradict. A paragraph that names the Go test that
// prints its numbers (line counts, a reference's convergence) quotes no run.
var numberDocs = []string{"../../docs/hommexx.md", "../../docs/loopnest.md", "../../docs/book.md"}

const (
	numbersBegin = "<!-- numbers checked against the book -->"
	numbersEnd   = "<!-- end numbers check -->"
)

// measured are the numbers that come from a run: times (ms, µs), GB/s,
// ratios with decimals ("1.30x"), and a value with its interval.
var measured = regexp.MustCompile(`\b\d+(\.\d+)? ?(ms|µs|us)\b|\b\d+(\.\d+)? GB/s\b|\b\d+\.\d+x\b|\b\d+\.\d+ \[\d`)

// withInterval is a value with its 95% interval, "1.30 [1.29, 1.30]".
var withInterval = regexp.MustCompile(`\b\d+\.\d+ \[\d+\.\d+, \d+\.\d+\]`)

// dated names a commit (7 or more hex digits with a letter and a digit) or
// a date.
var dated = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|\b[0-9a-f]{7,40}\b`)

func isCommit(s string) bool {
	return strings.ContainsAny(s, "abcdef") && strings.ContainsAny(s, "0123456789") || strings.HasPrefix(s, "20")
}

// byTest names a Go test or a go test command.
var byTest = regexp.MustCompile(`\bTest[A-Z]\w+|\bgo test\b`)

func datedBlock(block string) bool {
	for _, m := range dated.FindAllString(block, -1) {
		if isCommit(m) {
			return true
		}
	}
	return false
}

// docBlock is a paragraph of a Markdown file and the line it starts at.
type docBlock struct {
	line    int
	text    string
	heading string // the section's heading
	checked bool   // between numbersBegin and numbersEnd
}

// docBlocks splits a document at blank lines, joining a table to the
// paragraph above it (its caption) and leaving fenced code out.
func docBlocks(doc string) []docBlock {
	var out []docBlock
	var cur []string
	start, checked, fence, heading := 0, false, false, ""
	flush := func() {
		if len(cur) > 0 {
			out = append(out, docBlock{line: start, text: strings.Join(cur, "\n"), heading: heading, checked: checked})
		}
		cur = nil
	}
	for i, l := range strings.Split(doc, "\n") {
		switch t := strings.TrimSpace(l); {
		case strings.HasPrefix(t, "```"):
			fence = !fence
			continue
		case fence:
			continue
		case t == numbersBegin:
			flush()
			checked = true
			continue
		case t == numbersEnd:
			flush()
			checked = false
			continue
		case t == "":
			flush()
			continue
		case strings.HasPrefix(t, "#"):
			flush()
			heading = t
			continue
		case strings.HasPrefix(t, "|") && len(cur) == 0 && len(out) > 0 && out[len(out)-1].checked == checked:
			// a table: one block with its caption
			prev := out[len(out)-1]
			out = out[:len(out)-1]
			cur, start = []string{prev.text}, prev.line
		}
		if len(cur) == 0 {
			start = i + 1
		}
		cur = append(cur, l)
	}
	flush()
	return out
}

// numberIn reports whether the book's text holds the number (its digits,
// not as part of a longer number).
func numberIn(book, n string) bool {
	return regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(n) + `($|[^\d])`).MatchString(book)
}

func TestDocsQuoteNoUncheckedMeasurement(t *testing.T) {
	html, err := os.ReadFile("../../results/book/" + HTMLFile)
	require.NoError(t, err)
	md, err := os.ReadFile("../../results/book/" + MarkdownFile)
	require.NoError(t, err)
	book := string(html) + string(md)
	decimal := regexp.MustCompile(`\b\d+\.\d{2,3}\b`) // in a checked block: every ratio, time, interval bound
	checked := 0
	for _, file := range numberDocs {
		doc, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, b := range docBlocks(string(doc)) {
			nums := measured.FindAllString(b.text, -1)
			switch {
			case b.checked:
				// A value with its interval must be in the book as written;
				// any other decimal as a number.
				text := strings.Join(strings.Fields(b.text), " ")
				for _, n := range withInterval.FindAllString(text, -1) {
					checked++
					assert.True(t, strings.Contains(book, n), "%s:%d quotes %s, which the book (results/book/) does not hold: the folders say otherwise now", file, b.line, n)
				}
				for _, n := range decimal.FindAllString(withInterval.ReplaceAllString(text, ""), -1) {
					checked++
					assert.True(t, numberIn(book, n), "%s:%d quotes %s, which the book (results/book/) does not hold: the folders say otherwise now", file, b.line, n)
				}
			case len(nums) == 0:
			default:
				assert.True(t, datedBlock(b.text) || datedBlock(b.heading) || byTest.MatchString(b.text), "%s:%d quotes %s with no commit or date it was measured at, outside a block checked against the book (%s ... %s)",
					file, b.line, strings.Join(nums, ", "), numbersBegin, numbersEnd)
			}
		}
	}
	assert.Greater(t, checked, 0, "some number is checked against the book")
}

func TestDocBlocks(t *testing.T) {
	doc := "a 1.30x\n\ncaption at 1e2ea6c\n\n| x | 2.00 ms |\n|---|---|\n\n" + numbersBegin + "\nb 2.21 [2.21, 2.21]\n" + numbersEnd + "\n```\n3.00 ms\n```\n## At 4fc7438\nc"
	got := docBlocks(doc)
	var texts []string
	for _, b := range got {
		texts = append(texts, fmt.Sprintf("%d %v %q %q", b.line, b.checked, b.heading, b.text))
	}
	assert.Equal(t, []string{`1 false "" "a 1.30x"`, "3 false \"\" \"caption at 1e2ea6c\\n| x | 2.00 ms |\\n|---|---|\"", `9 true "" "b 2.21 [2.21, 2.21]"`, `15 false "## At 4fc7438" "c"`}, texts)
	assert.True(t, datedBlock(got[1].text))
	assert.False(t, datedBlock("deadbeef is not; 1234567 neither"), "hex needs a digit and a letter")
	assert.Equal(t, []string{"1.30x"}, measured.FindAllString(got[0].text, -1))
	assert.Equal(t, []string{"2.21 [2"}, measured.FindAllString(got[2].text, -1))
	assert.True(t, numberIn("measured 2.21 [2.21", "2.21"))
	assert.False(t, numberIn("measured 12.21", "2.21"))
}
