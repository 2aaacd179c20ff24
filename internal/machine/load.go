package machine

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
	"gopkg.in/yaml.v3"
)

// Set is the models of a folder, by name.
type Set struct {
	Models []*Model // sorted by name
	byName map[string]*Model
}

// Load reads every *.yaml file of dir (machines/ of the repository) and
// reports all problems of all files at once, positioned and sorted.
func Load(dir string) (*Set, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var errs diag.List
	if len(files) == 0 {
		errs.Add(diag.Pos{File: dir}, "no machine models (*.yaml)")
	}
	var models []*Model
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs.Add(diag.Pos{File: f}, "%v", err)
			continue
		}
		if m := parse(f, data, &errs); m != nil {
			models = append(models, m)
		}
	}
	s := newSet(models, &errs)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Parse reads one model from data, named by file's base name.
func Parse(file string, data []byte) (*Model, error) {
	var errs diag.List
	m := parse(file, data, &errs)
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

func newSet(models []*Model, errs *diag.List) *Set {
	s := &Set{byName: map[string]*Model{}}
	reported := map[string]*Model{}
	for _, m := range models {
		s.byName[m.Name] = m
		s.Models = append(s.Models, m)
		for i, r := range m.Reports {
			key := normalName(r)
			if other, dup := reported[key]; dup {
				errs.Add(m.reportPos[i], "reported name %q is also %s's (%s): a device must pick one model", r, other.Name, other.File)
				continue
			}
			reported[key] = m
		}
	}
	sort.Slice(s.Models, func(i, j int) bool { return s.Models[i].Name < s.Models[j].Name })
	return s
}

// Names lists the models' names, sorted.
func (s *Set) Names() []string {
	names := make([]string, len(s.Models))
	for i, m := range s.Models {
		names[i] = m.Name
	}
	return names
}

// Get returns the model of that name; an unknown name is an error that
// lists the known ones.
func (s *Set) Get(name string) (*Model, error) {
	if m, ok := s.byName[name]; ok {
		return m, nil
	}
	names := s.Names()
	return nil, &UnknownError{Name: name, Known: names}
}

// ByReported returns the model whose reports list holds name (the string
// nvidia-smi, cudaDeviceProp.name, rocm-smi or /proc/cpuinfo gives), case
// and runs of spaces ignored.
func (s *Set) ByReported(name string) (*Model, bool) {
	key := normalName(name)
	for _, m := range s.Models {
		for _, r := range m.Reports {
			if normalName(r) == key {
				return m, true
			}
		}
	}
	return nil, false
}

// UnknownError is a model name no file defines.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return "unknown machine model " + quote(e.Name) + diag.DidYouMean(e.Name, e.Known) + " (known: " + strings.Join(e.Known, ", ") + ")"
}

func quote(s string) string { return `"` + s + `"` }

func normalName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	archRE     = map[string]*regexp.Regexp{"nvidia": regexp.MustCompile(`^sm_[0-9]+a?$`), "amd": regexp.MustCompile(`^gfx[0-9a-f]+$`)}
	topFields  = []string{"description", "vendor", "kind", "arch", "reports", "notes", "sources", KindGPU, KindCPU}
	valueParts = []string{"value", "source", "note"}
)

// parse decodes one file; problems go to errs, each at its position.
func parse(file string, data []byte, errs *diag.List) *Model {
	before := len(*errs)
	root := diag.ParseYAML(file, data, errs)
	if root == nil {
		return nil
	}
	d := diag.Decoder{File: file, Errs: errs}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	m := &Model{Name: name, File: file, Sources: map[string]string{}, Values: map[string]Value{}}
	if !nameRE.MatchString(name) {
		errs.Add(diag.Pos{File: file}, "file name %q is the model's name: lower-case letters, digits, '.' and '-'", name)
	}
	top := mapping(d, root, "machine model", topFields)
	d.Require(root, top, "machine model", "description", "vendor", "kind", "arch", "sources")
	m.Description = d.String(top["description"], "description")
	m.Vendor = d.String(top["vendor"], "vendor")
	if top["vendor"] != nil && !slices.Contains(Vendors, m.Vendor) {
		d.Add(top["vendor"], "unknown vendor %q%s (known: %s)", m.Vendor, diag.DidYouMean(m.Vendor, Vendors), strings.Join(Vendors, ", "))
	}
	m.Kind = d.String(top["kind"], "kind")
	kinds := []string{KindGPU, KindCPU}
	if !slices.Contains(kinds, m.Kind) {
		d.Add(top["kind"], "unknown kind %q%s (known: gpu, cpu)", m.Kind, diag.DidYouMean(m.Kind, kinds))
		return nil
	}
	m.Arch = d.String(top["arch"], "arch")
	m.archPos = d.Pos(top["arch"])
	if re := archRE[m.Vendor]; re != nil && !re.MatchString(m.Arch) {
		d.Add(top["arch"], "arch %q is not an architecture name of vendor %s (%s)", m.Arch, m.Vendor, re)
	}
	for _, r := range d.Seq(top["reports"], "reports") {
		if s := d.String(r, "a reported name"); strings.TrimSpace(s) == "" {
			d.Add(r, "a reported name must not be empty")
		} else {
			m.Reports = append(m.Reports, s)
			m.reportPos = append(m.reportPos, d.Pos(r))
		}
	}
	m.Notes = d.Strings(top["notes"], "notes")

	sourceKeys := map[string]*yaml.Node{}
	for _, kv := range d.Pairs(top["sources"], "sources") {
		if _, dup := sourceKeys[kv[0].Value]; dup {
			d.Add(kv[0], "source %q repeated", kv[0].Value)
			continue
		}
		text := d.String(kv[1], "source "+kv[0].Value)
		if strings.TrimSpace(text) == "" {
			d.Add(kv[1], "source %q needs a citation (title, section or table, address)", kv[0].Value)
		}
		m.Sources[kv[0].Value] = text
		sourceKeys[kv[0].Value] = kv[0]
	}

	other := KindCPU
	if m.Kind == KindCPU {
		other = KindGPU
	}
	if top[other] != nil {
		d.Add(top["@"+other], "a %s model has no %q section", m.Kind, other)
	}
	if top[m.Kind] == nil {
		d.Add(root, "a %s model needs a %q section", m.Kind, m.Kind)
		return m
	}
	used := decodeValues(d, m, top[m.Kind])
	for key, n := range sourceKeys {
		if !used[key] {
			d.Add(n, "source %q is cited by no field", key)
		}
	}
	if len(*errs) == before { // numbers that decoded cleanly
		checkConsistency(d, m)
	}
	return m
}

// decodeValues reads the numbers of section n into m and returns the source
// keys they cite.
func decodeValues(d diag.Decoder, m *Model, n *yaml.Node) map[string]bool {
	byName, names := fieldsOf(m.Kind)
	used := map[string]bool{}
	for _, kv := range d.Pairs(n, m.Kind) {
		k, v := kv[0], kv[1]
		f, ok := byName[k.Value]
		if !ok {
			d.Add(k, "unknown field %q in %s%s", k.Value, m.Kind, orKnown(k.Value, names))
			continue
		}
		if _, dup := m.Values[f.name]; dup {
			d.Add(k, "field %q repeated", f.name)
			continue
		}
		what := m.Kind + "." + f.name
		parts := mapping(d, v, what, valueParts)
		if !d.Require(v, parts, what, "value") {
			continue
		}
		val := Value{Pos: d.Pos(parts["value"]), Note: d.String(parts["note"], what+" note")}
		val.Source = d.String(parts["source"], what+" source")
		switch {
		case parts["source"] == nil:
			d.Add(v, "%s needs a source (a key of sources: %s)", what, strings.Join(sortedKeys(m.Sources), ", "))
		case !hasKey(m.Sources, val.Source):
			d.Add(parts["source"], "%s cites unknown source %q%s", what, val.Source, orKnown(val.Source, sortedKeys(m.Sources)))
		default:
			used[val.Source] = true
		}
		if f.dims == 3 {
			val.Ints = d.Ints(parts["value"], what)
			if len(val.Ints) != 3 {
				d.Add(parts["value"], "%s must be a list of 3 integers (x, y, z)", what)
				m.Values[f.name] = Value{Pos: val.Pos} // present, if wrong
				continue
			}
			copy(f.dim3(m)[:], val.Ints)
		} else {
			n := len(*d.Errs)
			x := d.Int(parts["value"], what)
			if len(*d.Errs) > n {
				m.Values[f.name] = Value{Pos: val.Pos}
				continue
			}
			val.Ints = []int64{x}
			*f.int(m) = x
		}
		for _, x := range val.Ints {
			if x < 0 || x == 0 && f.name != "shared_memory_reserved_per_block_bytes" {
				d.Add(parts["value"], "%s must be positive, not %d", what, x)
				break
			}
		}
		m.Values[f.name] = val
	}
	for _, f := range fields {
		if _, present := m.Values[f.name]; f.kind != m.Kind || present {
			continue
		}
		if f.need == always || f.need == occupancy && m.Vendor == "nvidia" {
			why := ""
			if f.need == occupancy {
				why = " (the occupancy rules need it)"
			}
			d.Add(n, "%s needs field %q: %s%s", m.Kind, f.name, f.doc, why)
		}
	}
	return used
}

// checkConsistency compares numbers that depend on each other, so a typo in
// one of them shows.
func checkConsistency(d diag.Decoder, m *Model) {
	at := func(name string) diag.Pos { return m.Values[name].Pos }
	has := func(names ...string) bool {
		for _, n := range names {
			if m.Values[n].Ints == nil {
				return false
			}
		}
		return true
	}
	g, c := m.GPU, m.CPU
	if has("max_threads_per_sm", "max_warps_per_sm", "warp_size") && g.MaxWarpsPerSM*g.WarpSize != g.MaxThreadsPerSM {
		d.Errs.Add(at("max_threads_per_sm"), "max_threads_per_sm %d is not max_warps_per_sm %d x warp_size %d", g.MaxThreadsPerSM, g.MaxWarpsPerSM, g.WarpSize)
	}
	if has("max_block_dims", "max_threads_per_block") && (g.MaxBlockDims[0] > g.MaxThreadsPerBlock || g.MaxBlockDims[1] > g.MaxThreadsPerBlock || g.MaxBlockDims[2] > g.MaxThreadsPerBlock) {
		d.Errs.Add(at("max_block_dims"), "max_block_dims %v exceed max_threads_per_block %d", g.MaxBlockDims, g.MaxThreadsPerBlock)
	}
	if has("max_warps_per_sm", "sm_sub_partitions") && g.MaxWarpsPerSM%g.SMSubPartitions != 0 {
		d.Errs.Add(at("sm_sub_partitions"), "max_warps_per_sm %d is not a multiple of sm_sub_partitions %d", g.MaxWarpsPerSM, g.SMSubPartitions)
	}
	if has("registers_per_block", "registers_per_sm") && g.RegistersPerBlock > g.RegistersPerSM {
		d.Errs.Add(at("registers_per_block"), "registers_per_block %d exceeds registers_per_sm %d", g.RegistersPerBlock, g.RegistersPerSM)
	}
	if has("register_alloc_unit", "warp_size") && g.RegisterAllocUnit%g.WarpSize != 0 {
		d.Errs.Add(at("register_alloc_unit"), "register_alloc_unit %d is not a whole number of registers per thread of a %d-thread warp", g.RegisterAllocUnit, g.WarpSize)
	}
	if has("shared_memory_per_block_bytes", "shared_memory_per_sm_bytes") && g.SharedMemoryPerBlockBytes > g.SharedMemoryPerSMBytes {
		d.Errs.Add(at("shared_memory_per_block_bytes"), "shared_memory_per_block_bytes %d exceeds shared_memory_per_sm_bytes %d", g.SharedMemoryPerBlockBytes, g.SharedMemoryPerSMBytes)
	}
	if has("shared_memory_per_block_bytes", "shared_memory_per_block_optin_bytes") && g.SharedMemoryPerBlockBytes > g.SharedMemoryPerBlockOptin {
		d.Errs.Add(at("shared_memory_per_block_optin_bytes"), "shared_memory_per_block_optin_bytes %d is below shared_memory_per_block_bytes %d", g.SharedMemoryPerBlockOptin, g.SharedMemoryPerBlockBytes)
	}
	if has("shared_memory_per_block_optin_bytes", "shared_memory_reserved_per_block_bytes", "shared_memory_per_sm_bytes") &&
		g.SharedMemoryPerBlockOptin+g.SharedMemoryReservedPerBlock > g.SharedMemoryPerSMBytes {
		d.Errs.Add(at("shared_memory_per_block_optin_bytes"), "shared_memory_per_block_optin_bytes %d + shared_memory_reserved_per_block_bytes %d exceed shared_memory_per_sm_bytes %d",
			g.SharedMemoryPerBlockOptin, g.SharedMemoryReservedPerBlock, g.SharedMemoryPerSMBytes)
	}
	if has("cores", "threads") && c.Threads < c.Cores {
		d.Errs.Add(at("threads"), "threads %d are fewer than cores %d", c.Threads, c.Cores)
	}
}

// mapping is Decoder.Fields with a did-you-mean for an unknown key.
func mapping(d diag.Decoder, n *yaml.Node, what string, allowed []string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.Add(n, "%s must be a mapping", what)
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			known := slices.Clone(allowed)
			sort.Strings(known)
			d.Add(k, "unknown field %q in %s%s", k.Value, what, orKnown(k.Value, known))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.Add(k, "field %q repeated in %s", k.Value, what)
			continue
		}
		out[k.Value] = v
		out["@"+k.Value] = k
	}
	return out
}

// orKnown is "; did you mean X?" for a typo, else the list of known names.
func orKnown(name string, known []string) string {
	if s := diag.DidYouMean(name, known); s != "" {
		return s
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
