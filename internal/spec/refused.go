package spec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Refusal is a kernel description the loader refused, with every problem
// found in it: the other kernels load without it.
type Refusal struct {
	Name string // the kernel's name: its file's base name
	File string
	Errs diag.List
}

// Refused are the refused descriptions. As an error it is every problem of
// every one, positioned and sorted, as diag.List prints them.
type Refused []Refusal

func (r Refused) Error() string {
	var all diag.List
	for _, x := range r {
		all = append(all, x.Errs...)
	}
	if err := all.Err(); err != nil {
		return err.Error()
	}
	return "no kernel refused"
}

// Err is nil when nothing was refused.
func (r Refused) Err() error {
	if len(r) == 0 {
		return nil
	}
	return r
}

// Names are the refused kernels' names, sorted.
func (r Refused) Names() []string {
	var out []string
	for _, x := range r {
		out = append(out, x.Name)
	}
	sort.Strings(out)
	return out
}

// Of is the refusals of the kernels named, every one when names is empty
// (no selection selects all).
func (r Refused) Of(names []string) Refused {
	if len(names) == 0 {
		return r
	}
	var out Refused
	for _, x := range r {
		if slices.Contains(names, x.Name) {
			out = append(out, x)
		}
	}
	return out
}

func (r Refused) find(name string) (Refusal, bool) {
	for _, x := range r {
		if x.Name == name {
			return x, true
		}
	}
	return Refusal{}, false
}

// add records problems of file, with those it has already.
func (r *Refused) add(file string, errs diag.List) {
	for i := range *r {
		if (*r)[i].File == file {
			(*r)[i].Errs = sorted(append((*r)[i].Errs, errs...))
			return
		}
	}
	*r = append(*r, Refusal{Name: strings.TrimSuffix(filepath.Base(file), ".yaml"), File: file, Errs: sorted(errs)})
	sort.Slice(*r, func(i, j int) bool { return (*r)[i].File < (*r)[j].File })
}

func sorted(l diag.List) diag.List {
	var out diag.List
	errors.As(l.Err(), &out)
	return out
}

// Take refuses the kernels err's positioned problems are in (err a
// diag.List, e.g. a later check of the loaded kernels) and those that then
// use or vary a refused kernel, and returns the others, and what of err is
// in no kernel's file (nil when nothing is).
func (r *Refused) Take(kernels []*Kernel, err error) ([]*Kernel, error) {
	if err == nil {
		return kernels, nil
	}
	var list diag.List
	if !errors.As(err, &list) {
		return kernels, err
	}
	files := map[string]bool{}
	for _, k := range kernels {
		files[k.File] = true
	}
	for _, x := range *r {
		files[x.File] = true
	}
	rest := r.takeList(list, func(f string) bool { return files[f] })
	return r.cascade(drop(kernels, *r)), rest.Err()
}

// takeList records the problems of list in a kernel file, returning the
// others.
func (r *Refused) takeList(list diag.List, kernelFile func(string) bool) diag.List {
	byFile := map[string]diag.List{}
	var rest diag.List
	for _, e := range list {
		if kernelFile(e.Pos.File) {
			byFile[e.Pos.File] = append(byFile[e.Pos.File], e)
		} else {
			rest = append(rest, e)
		}
	}
	for f, errs := range byFile {
		r.add(f, errs)
	}
	return rest
}

// drop is kernels without those whose file is refused.
func drop(kernels []*Kernel, r Refused) []*Kernel {
	return slices.DeleteFunc(slices.Clone(kernels), func(k *Kernel) bool {
		return slices.ContainsFunc(r, func(x Refusal) bool { return x.File == k.File })
	})
}

// cascade refuses, until none is left, the kernels that use a refused
// kernel (a composite) or are a variation of one.
func (r *Refused) cascade(kernels []*Kernel) []*Kernel {
	for {
		n := len(*r)
		for _, k := range kernels {
			if k.Variation != nil {
				if base, ok := r.find(k.Variation.Of); ok {
					r.add(k.File, diag.List{{Pos: k.Variation.pos["variation_of"], Msg: fmt.Sprintf("kernel %q is a variation of %q, whose description is refused (%s)", k.Name, k.Variation.Of, base.File)}})
				}
			}
			for _, u := range k.Uses {
				if used, ok := r.find(u); ok {
					r.add(k.File, diag.List{{Pos: k.Pos, Msg: fmt.Sprintf("kernel %q uses kernel %q, whose description is refused (%s)", k.Name, u, used.File)}})
				}
			}
		}
		kernels = drop(kernels, *r)
		if len(*r) == n {
			return kernels
		}
	}
}

// Load reads every *.yaml file of dir as a kernel description. A
// description with a problem (or a variation of one, or a composite using
// one) is refused with all its problems; the others load. err is what stops
// every kernel: no description at all, a directory that does not read.
func Load(dir string) (kernels []*Kernel, refused Refused, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("%s: no kernel descriptions (*.yaml)", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		var errs diag.List
		data, err := os.ReadFile(f)
		if err != nil {
			errs.Add(diag.Pos{File: f}, "%v", err)
		} else if k := Parse(f, data, &errs); k != nil && len(errs) == 0 {
			kernels = append(kernels, k)
		}
		if len(errs) > 0 {
			refused.add(f, errs)
		}
	}
	kernels = refused.cascade(kernels)
	var errs diag.List
	resolved := resolveVariations(kernels, &errs)
	checkUses(resolved, &errs)
	isFile := func(f string) bool { return slices.Contains(files, f) }
	rest := refused.takeList(errs, isFile)
	kernels = refused.cascade(drop(resolved, refused))
	return kernels, refused, rest.Err()
}

// LoadDir reads every *.yaml file of dir as a kernel description and checks
// them together; all problems come back at once (the refused descriptions'
// with the kernels that load: Load).
func LoadDir(dir string) ([]*Kernel, error) {
	kernels, refused, err := Load(dir)
	if err != nil {
		return kernels, err
	}
	return kernels, refused.Err()
}
