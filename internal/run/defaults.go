package run

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/machine"
)

// Model is the machine model that reports the GPU named gpu, or nil and
// why none: its launch defaults are what the papers ran with
// (docs/machines.md, "Launch defaults"). The models are the build folder's
// (build.Machines), so a host with the build folder alone finds the model the
// tree would; a build folder made before the build carried them is read
// from root's machines/, which a line on log says.
func Model(buildDir, root, gpu string, log io.Writer) (*machine.Model, string) {
	if gpu == "" {
		return nil, ""
	}
	set, fallback, err := build.Machines(buildDir, root)
	if fallback != "" && log != nil {
		fmt.Fprintln(log, "run: "+fallback)
	}
	if err != nil {
		return nil, fmt.Sprintf("no machine models (%v): cells run their generated launch values", err)
	}
	m, ok := set.ByReported(gpu)
	if !ok {
		return nil, fmt.Sprintf("no machine model reports %q: cells run their generated launch values", gpu)
	}
	return m, ""
}

// ModelDefaults is what the harness's --defaults gets for a built cell on
// m: the launch parameters its strategy takes from the model, computed from
// the cell's generated tunables and its kernels' resources; notes say where
// one is left at its generated value.
func ModelDefaults(m *machine.Model, e build.Entry) (map[string]int64, []string) {
	if m == nil || len(e.ModelDefaults) == 0 || e.Target == "host" {
		return nil, nil
	}
	if m.Arch != "" && e.Target != m.Arch {
		return nil, []string{fmt.Sprintf("%s: built for %s, the model %s is %s: no model defaults", e.ID, e.Target, m.Name, m.Arch)}
	}
	c := machine.CellLaunch{Blocks: e.Blocks}
	for _, k := range e.Kernels {
		c.Kernels = append(c.Kernels, k.Resources())
	}
	d, notes := machine.Defaults(m, e.ModelDefaults, c)
	for i, n := range notes {
		if e.ResourcesNote != "" {
			n += " (build: " + e.ResourcesNote + ")"
		}
		notes[i] = e.ID + ": " + n
	}
	return d, notes
}

// ModelProvenance is what run.json says of the model defaults: the model's
// name and the notes of the cells that asked for defaults and got fewer.
func ModelProvenance(m *machine.Model, note string, jobs []Job) (string, []string) {
	var notes []string
	asked := false
	for _, j := range jobs {
		_, n := ModelDefaults(m, j.Entry)
		notes = append(notes, n...)
		asked = asked || len(j.Entry.ModelDefaults) > 0 && j.Entry.Target != "host"
	}
	if m == nil {
		if asked && note != "" {
			return "", []string{note}
		}
		return "", nil
	}
	return m.Name, notes
}

// defaultsArg is the value of --defaults: name=value pairs, sorted.
func defaultsArg(d map[string]int64) string {
	var kv []string
	for k, v := range d {
		kv = append(kv, k+"="+strconv.FormatInt(v, 10))
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}
