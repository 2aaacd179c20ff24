// Package book renders the results book: from results/index.yaml, the current
// results folder of each (suite, platform, part), it reports every folder
// (internal/report) and gathers the papers' figures and claims with their
// provenance into one self-contained HTML page and one Markdown summary
// (docs/book.md).
package book

import (
	"path/filepath"

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
	Platforms []Named
	Current   []Entry
}

// Named is a paper, suite or platform: its id and a title for readers.
type Named struct{ ID, Title string }

// Entry names the current folder of one (suite, platform, part).
type Entry struct {
	Suite, Platform string
	Part            string // what of the suite the folder holds, when several folders share it
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
// for one (suite, platform, part), and folders that hold no run.
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
	ix.Platforms = decodeNamed(d, f["platforms"], "platform")
	seen := map[[3]string]bool{}
	for _, n := range d.Seq(f["current"], "current") {
		g := d.Fields(n, "entry", "suite", "platform", "part", "folder", "note", "report")
		if !d.Require(n, g, "entry", "suite", "platform", "folder") {
			continue
		}
		e := Entry{Suite: d.String(g["suite"], "suite"), Platform: d.String(g["platform"], "platform"),
			Part: d.String(g["part"], "part"), Folder: d.String(g["folder"], "folder"), Note: d.String(g["note"], "note"), Report: true}
		if g["report"] != nil {
			e.Report = d.Bool(g["report"], "report")
		}
		known(d, g["suite"], "suite", e.Suite, ix.Suites)
		known(d, g["platform"], "platform", e.Platform, ix.Platforms)
		key := [3]string{e.Suite, e.Platform, e.Part}
		if seen[key] {
			d.Add(n, "a second entry for suite %q, platform %q, part %q: name what each folder holds in part", e.Suite, e.Platform, e.Part)
		}
		seen[key] = true
		if e.Folder != filepath.Base(e.Folder) || e.Folder == "." || e.Folder == ".." {
			d.Add(g["folder"], "folder %q must be a folder name under %s", e.Folder, dir)
		} else if !results.Exists(filepath.Join(dir, e.Folder)) {
			d.Add(g["folder"], "folder %s holds no run (no %s or %s)", filepath.Join(dir, e.Folder), results.RunFile, results.JSONLFile)
		}
		ix.Current = append(ix.Current, e)
	}
	return ix
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
