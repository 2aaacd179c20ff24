// Package wording keeps the repository's text in the words of the product:
// its docs, code, YAML, results notes and book speak of dates, commits,
// machines, compilers and what ran, never of how the work on the project was
// organised (numbered work sittings, numbered requests, rationed accelerator
// time, borrowed machines). Scan walks the tracked text files and reports each
// line that does, positioned as file:line; the package's test runs it over
// the repository.
package wording

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Pattern matches the wording that speaks of how the project was made rather
// than of the product. Case-insensitive, and a superset of the shorter
// expression it grew from, so that `git grep -niE` with that one finds
// nothing where this test passes; each alternative is one habit (described
// here, not quoted, so that this comment reads clean to the shorter one too):
//   - a numbered work sitting, its plural possessive, "a" or "this" one, and
//     one that "was given";
//   - rationed accelerator time: the words device and time together or
//     hyphenated (which also catches a timer so named: say "the timer on
//     the device");
//   - a borrowed machine: the past tense of lend;
//   - a numbered request: the tracker's word for it with a number of at most
//     three digits, with "#" or "-" before it (an upstream compiler's entry
//     148703 is a citation, not ours), and that word before asks or bars;
//   - numbered remote invocations: a range of them (N to M, N and M), one
//     numbered with a colon, and one's time limit.
//
// The words are spelled with a one-letter class ([e] for e) where the plain
// spelling would itself match the shorter expression, so that this file, too,
// reads clean to it.
var Pattern = regexp.MustCompile(`(?i)` + strings.Join([]string{
	`\bsessions?\W{0,3}[0-9]`,
	`s[e]ssions'`,
	`a s[e]ssion\b`,
	`this s[e]ssion`,
	`\bthe session (was|were) given\b`,
	`\bdevice[- ]time`,
	`\blent\b`,
	`\bissues?[- ]#?[0-9]{1,3}\b`,
	`\bthe issue(?:'s)? (asks|asked|wants|bars?)\b`,
	`\bcalls? [0-9] (to|and) [0-9]`,
	`\bcall [0-9]{1,2}:`,
	`\bcall's (time )?limit\b`,
}, "|"))

// Excluded are the tracked paths Scan skips: generated code (its text comes
// from templates/ and the kernel YAML, which are scanned) and this file,
// which spells the pattern out.
var Excluded = []string{"generated/", "internal/wording/wording.go"}

// Finding is one line that matched.
type Finding struct {
	File  string // relative to the repository root, slash-separated
	Line  int    // 1-based
	Match string // the matched words
	Text  string // the line, trimmed and shortened
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %q speaks of how the project was made, not of the product: %s", f.File, f.Line, f.Match, f.Text)
}

// keywords are cheap lower-case substrings one of which every match holds:
// a line without any is not matched against Pattern (split where the plain
// spelling would match the shorter expression, as in Pattern).
var keywords = []string{"sess" + "ion", "device" + " time", "device-time", "le" + "nt", "issue", "call"}

// Scan reports every line of the tracked text files under root (git ls-files)
// that Pattern matches, in file and line order. Binary files (a NUL byte in
// their first 8000 bytes, as git decides) and Excluded paths are skipped.
func Scan(root string) ([]Finding, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	var found []Finding
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || excluded(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet staged
		}
		if err != nil {
			return nil, err
		}
		found = append(found, ScanText(name, data)...)
	}
	return found, nil
}

// ScanText reports the lines of one file's text that Pattern matches; a
// binary file gives none.
func ScanText(name string, data []byte) []Finding {
	head := data
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	var found []Finding
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !mayMatch(strings.ToLower(line)) {
			continue
		}
		if m := Pattern.FindString(line); m != "" {
			found = append(found, Finding{File: name, Line: n, Match: m, Text: shorten(strings.TrimSpace(line), 160)})
		}
	}
	return found
}

func mayMatch(lower string) bool {
	for _, k := range keywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

func excluded(name string) bool {
	for _, e := range Excluded {
		if name == e || strings.HasSuffix(e, "/") && strings.HasPrefix(name, e) {
			return true
		}
	}
	return false
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
