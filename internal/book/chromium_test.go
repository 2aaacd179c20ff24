package book

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// measureScript opens every <details>, waits for the images, and writes into
// the page what a laptop reader would meet: the document's width against the
// window's, and the images that did not decode.
const measureScript = `<script>
window.addEventListener('load', () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const root = document.documentElement;
  const imgs = [...document.images];
  const broken = imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt);
  const wide = [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1)
    .slice(0, 5).map(e => e.tagName + '.' + e.className + '#' + e.id);
  const out = document.createElement('pre');
  out.id = 'measure';
  out.textContent = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, images: imgs.length, broken: broken, wide: wide});
  document.body.appendChild(out);
});
</script>`

type measurement struct {
	ScrollWidth int      `json:"scrollWidth"`
	ClientWidth int      `json:"clientWidth"`
	Images      int      `json:"images"`
	Broken      []string `json:"broken"`
	Wide        []string `json:"wide"`
}

var measureOut = regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`)

// measure loads page in headless Chromium with a window of width × 900 px.
func measure(t *testing.T, chromium, page string, width int) measurement {
	t.Helper()
	src, err := os.ReadFile(page)
	require.NoError(t, err)
	probe := filepath.Join(t.TempDir(), "probe.html")
	require.NoError(t, os.WriteFile(probe, []byte(strings.Replace(string(src), "</body>", measureScript+"</body>", 1)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--window-size="+strconv.Itoa(width)+",900", "--virtual-time-budget=20000", "--dump-dom", "file://"+probe)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Run())
	m := measureOut.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, "the page wrote no measurement (did it load?)")
	var got measurement
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &got))
	return got
}

func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): the book's layout at 1366 px is not checked")
	return ""
}

// The book, rendered from the committed index and folders, fits a 1366 px
// laptop window with every <details> open, and every figure decodes; so does
// the report.html of the index's first folder (the widest claims table).
func TestBookFitsALaptopScreen(t *testing.T) {
	chromium := findChromium(t)
	root, b := committedBook(t)
	got := measure(t, chromium, b.HTML, 1366)
	t.Logf("%s at 1366 px: document %d px wide in a %d px window, %d images", b.HTML, got.ScrollWidth, got.ClientWidth, got.Images)
	assert.LessOrEqual(t, got.ScrollWidth, got.ClientWidth, "the book overflows sideways at 1366 px; widest elements: %v", got.Wide)
	assert.Empty(t, got.Broken, "figures that do not render")
	assert.Equal(t, b.Figures, got.Images, "every figure of the book is an image of the page")
	assert.Greater(t, got.Images, 10)

	ix, err := LoadIndex(Root(root))
	require.NoError(t, err)
	page := filepath.Join(Root(root), ix.Folders()[0], "report.html")
	got = measure(t, chromium, page, 1366)
	assert.LessOrEqual(t, got.ScrollWidth, got.ClientWidth, "%s overflows sideways at 1366 px; widest elements: %v", page, got.Wide)
}

// The measurement itself sees a page wider than the window and an image that
// does not decode.
func TestMeasurementSeesOverflowAndBrokenImages(t *testing.T) {
	chromium := findChromium(t)
	page := filepath.Join(t.TempDir(), "wide.html")
	require.NoError(t, os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><div style="width:3000px">wide</div>`+
		`<img alt="bad" src="data:image/svg+xml;base64,bm90IGFuIHN2Zw=="><details><table><tr><td style="white-space:nowrap">`+
		strings.Repeat("x", 10)+`</td></tr></table></details></body></html>`), 0o644))
	got := measure(t, chromium, page, 1366)
	assert.Greater(t, got.ScrollWidth, got.ClientWidth)
	assert.Equal(t, []string{"bad"}, got.Broken)
	assert.NotEmpty(t, got.Wide)
}

var (
	bookOnce sync.Once
	bookRoot string
	bookOut  *Book
	bookErr  error
)

// committedBook renders the book once per test binary from a copy of the
// repository's results (the root lives until the process ends).
func committedBook(t *testing.T) (string, *Book) {
	t.Helper()
	bookOnce.Do(func() {
		if bookRoot, bookErr = os.MkdirTemp("", "book-test-"); bookErr != nil {
			return
		}
		if bookErr = linkTree(bookRoot); bookErr == nil {
			bookOut, bookErr = Render(Options{Root: bookRoot})
		}
	})
	require.NoError(t, bookErr)
	return bookRoot, bookOut
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bookRoot != "" {
		os.RemoveAll(bookRoot)
	}
	os.Exit(code)
}

// linkTree makes root a repository root: the source tree's templates, toolchains, generated programs,
// variants and docs linked, results/ copied (the report writes its derived
// files into each folder).
func linkTree(root string) error {
	for _, name := range []string{"templates", "variants", "docs", "toolchains.yaml", "generated", "machines"} {
		abs, err := filepath.Abs(filepath.Join("../..", name))
		if err != nil {
			return err
		}
		if err := os.Symlink(abs, filepath.Join(root, name)); err != nil {
			return err
		}
	}
	return os.CopyFS(filepath.Join(root, "results"), os.DirFS("../../results"))
}
