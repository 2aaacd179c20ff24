// Package book renders the results book: from results/index.yaml, the current
// results folder of each (suite, platform), it reports every folder
// (internal/report) and gathers the papers' figures and claims with their
// provenance into one self-contained HTML page and one Markdown summary
// (docs/book.md).
package book

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
)

// IndexFile is the index, relative to the results root.
const IndexFile = "index.yaml"

// Index is results/index.yaml.
type Index struct {
	Papers    []Named
	Suites    []Named
	Platforms []Platform
	Current   []Entry
}

// Named is a paper or suite: its id and a title for readers.
type Named struct{ ID, Title string }

// Platform is a machine the suites are measured on (or only compiled for):
// the GPU model its folders' run.json names, or for host-only folders the
// host's CPU model; Note says what is not measured (amd: compiles, not run).
type Platform struct {
	ID, Title string
	GPU, CPU  string
	Note      string
}

// Entry names the current folder of one (suite, platform). A folder merged
// from several runs lists them, each with its provenance, in run.json's
// batches (results.MergeWith).
type Entry struct {
	Suite, Platform string
	Folder          string // a folder name under the results root
	Note            string
	Report          bool // whether the book draws figures and claims from it (default true)
}

// Folders lists the distinct folders of entries the book reports, in index order.
func (ix *Index) Folders() []string {
	var out []string
	for _, e := range ix.Current {
		if e.Report {
			out = results.AppendNew(out, e.Folder)
		}
	}
	return out
}

// EntriesOf lists the entries that name folder.
func (ix *Index) EntriesOf(folder string) []Entry {
	var out []Entry
	for _, e := range ix.Current {
		if e.Folder == folder {
			out = append(out, e)
		}
	}
	return out
}

// LoadIndex reads root/index.yaml and reports every problem with its
// position: unknown or repeated fields, names no list declares, two entries
// for one (suite, platform), folders that hold no run, and folders whose
// run.json names another GPU or CPU model than their platform.
func LoadIndex(root string) (*Index, error) {
	file := filepath.Join(root, IndexFile)
	var errs diag.List
	node := diag.ReadYAML(file, &errs)
	if node == nil {
		return nil, errs.Err()
	}
	ix := decodeIndex(diag.Decoder{File: file, Errs: &errs}, node, root)
	return ix, errs.Err()
}

func decodeIndex(d diag.Decoder, root *yaml.Node, dir string) *Index {
	ix := &Index{}
	f := d.Fields(root, "index", "papers", "suites", "platforms", "current")
	d.Require(root, f, "index", "papers", "suites", "platforms", "current")
	ix.Papers = decodeNamed(d, f["papers"], "paper")
	ix.Suites = decodeNamed(d, f["suites"], "suite")
	ix.Platforms = decodePlatforms(d, f["platforms"])
	var suites, platforms []Named
	suites = ix.Suites
	for _, p := range ix.Platforms {
		platforms = append(platforms, Named{p.ID, p.Title})
	}
	seen := map[[2]string]bool{}
	for _, n := range d.Seq(f["current"], "current") {
		g := d.Fields(n, "entry", "suite", "platform", "folder", "note", "report")
		if !d.Require(n, g, "entry", "suite", "platform", "folder") {
			continue
		}
		e := Entry{Suite: d.String(g["suite"], "suite"), Platform: d.String(g["platform"], "platform"),
			Folder: d.String(g["folder"], "folder"), Note: d.String(g["note"], "note"), Report: true}
		if g["report"] != nil {
			e.Report = d.Bool(g["report"], "report")
		}
		known(d, g["suite"], "suite", e.Suite, suites)
		known(d, g["platform"], "platform", e.Platform, platforms)
		key := [2]string{e.Suite, e.Platform}
		if seen[key] {
			d.Add(n, "a second entry for suite %q, platform %q: merge the folders into one (docs/book.md)", e.Suite, e.Platform)
		}
		seen[key] = true
		if e.Folder != filepath.Base(e.Folder) || e.Folder == "." || e.Folder == ".." {
			d.Add(g["folder"], "folder %q must be a folder name under %s", e.Folder, dir)
		} else if !results.Exists(filepath.Join(dir, e.Folder)) {
			d.Add(g["folder"], "folder %s holds no run (no %s or %s)", filepath.Join(dir, e.Folder), results.RunFile, results.JSONLFile)
		} else if p := ix.platform(e.Platform); p != nil {
			samePlatform(d, g["folder"], filepath.Join(dir, e.Folder), *p)
		}
		ix.Current = append(ix.Current, e)
	}
	return ix
}

func (ix *Index) platform(id string) *Platform {
	for i := range ix.Platforms {
		if ix.Platforms[i].ID == id {
			return &ix.Platforms[i]
		}
	}
	return nil
}

// samePlatform reports a folder whose run.json names a GPU other than its
// platform's model, or a host CPU other than its platform's.
func samePlatform(d diag.Decoder, n *yaml.Node, dir string, p Platform) {
	run, err := results.ReadRun(dir)
	if err != nil {
		return // an interrupted run without run.json: its records say
	}
	for _, g := range run.GPUs {
		if p.GPU != "" && !strings.Contains(g.Name, p.GPU) {
			d.Add(n, "folder %s ran on %s, platform %s is %s", filepath.Base(dir), g.Name, p.ID, p.GPU)
			return
		}
	}
	if p.GPU != "" && len(run.GPUs) == 0 {
		d.Add(n, "folder %s names no GPU, platform %s is %s", filepath.Base(dir), p.ID, p.GPU)
	}
	if p.CPU != "" && run.Host.CPU != p.CPU {
		d.Add(n, "folder %s ran on a host of CPU %q, platform %s is %q", filepath.Base(dir), run.Host.CPU, p.ID, p.CPU)
	}
}

func decodePlatforms(d diag.Decoder, seq *yaml.Node) []Platform {
	var out []Platform
	ids := map[string]bool{}
	for _, n := range d.Seq(seq, "platforms") {
		g := d.Fields(n, "platform", "id", "title", "gpu", "cpu", "note")
		if !d.Require(n, g, "platform", "id", "title") {
			continue
		}
		v := Platform{ID: d.String(g["id"], "id"), Title: d.String(g["title"], "title"), GPU: d.String(g["gpu"], "gpu"),
			CPU: d.String(g["cpu"], "cpu"), Note: d.String(g["note"], "note")}
		if ids[v.ID] {
			d.Add(g["id"], "platform %q declared twice", v.ID)
		}
		ids[v.ID] = true
		out = append(out, v)
	}
	return out
}

func decodeNamed(d diag.Decoder, seq *yaml.Node, what string) []Named {
	var out []Named
	ids := map[string]bool{}
	for _, n := range d.Seq(seq, what+"s") {
		g := d.Fields(n, what, "id", "title")
		if !d.Require(n, g, what, "id", "title") {
			continue
		}
		v := Named{ID: d.String(g["id"], "id"), Title: d.String(g["title"], "title")}
		if ids[v.ID] {
			d.Add(g["id"], "%s %q declared twice", what, v.ID)
		}
		ids[v.ID] = true
		out = append(out, v)
	}
	return out
}

// known reports a name that the list does not declare.
func known(d diag.Decoder, n *yaml.Node, what, name string, list []Named) {
	var ids []string
	for _, v := range list {
		if v.ID == name {
			return
		}
		ids = append(ids, v.ID)
	}
	d.Add(n, "unknown %s %q%s", what, name, diag.DidYouMean(name, ids))
}

// Root is the results root of the repository at dir.
func Root(dir string) string { return filepath.Join(dir, "results") }
