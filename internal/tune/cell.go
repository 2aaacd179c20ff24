package tune

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// CellSpace is the search space of one cell at one size: its Recorded
// space (what the build records in the manifest) evaluated at the size.
type CellSpace struct {
	Names       []string           // the cell's tunables, sorted
	Values      map[string][]int64 // the values searched, per tunable
	Fixed       map[string]string  // tunables held at one value, and why
	Rendered    map[string]bool    // tunables the renderer decides with (scratch levels): constants of the binary
	Default     Config             // the values the program is generated with
	Constraints []Constraint       // those that apply to the cell
	rec         *Recorded
	env         spec.Env
	teams       []*spec.Node     // team patterns: their leagues and block shapes
	scratch     [][]spec.Scratch // each team launch's scratch views, the kernels' scratch_consts put in: for scratch_bytes
}

// Recorded is a cell's search space without its size: all a CellSpace is
// made of, as the build records it in the manifest (build.Entry.Space,
// Record) so that the tune stage and `run -tuned` need no source tree.
// The size enters through the kernels' scalar arguments (Env).
type Recorded struct {
	Names       []string           `json:"names"`
	Values      map[string][]int64 `json:"values"`
	Fixed       map[string]string  `json:"fixed,omitempty"`
	Rendered    []string           `json:"rendered,omitempty"`
	Default     Config             `json:"default"`
	Constraints []Constraint       `json:"constraints,omitempty"`
	// Machine are the machine properties a constraint may read (a
	// constraint reading one the device does not give is not checked);
	// Blocks the tunables that are a launch's threads (Decl.Block).
	Machine []string `json:"machine,omitempty"`
	Blocks  []string `json:"blocks,omitempty"`
	// Env are the scalar arguments of the kernel, then of the kernels it
	// uses, from which its values at a size are computed (spec.Kernel.Env).
	Env [][]EnvArg `json:"env"`
	// Teams are the team launches: league, team size and vector as the
	// kernel declares them, and their scratch views with the kernels'
	// scratch_consts put in.
	Teams []Team `json:"teams,omitempty"`
	// OtherLaunch: a kernel of the cell launches other patterns than teams
	// (ranges, index sets); Exact: the strategy launches a block of exactly
	// the threads asked for (exactLaunch).
	OtherLaunch bool `json:"other_launch,omitempty"`
	Exact       bool `json:"exact_launch,omitempty"`
	// Error: the space could not be made (RecordCell); the tune stage
	// reports it for the cell.
	Error string `json:"error,omitempty"`
}

// EnvArg is a scalar argument (or a CSR argument built by minife27, its
// Grid) of a kernel: what spec.Kernel.Env reads.
type EnvArg struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
	Init  string `json:"init,omitempty"`
	Grid  string `json:"grid,omitempty"`
}

// Team is a team launch of a recorded space.
type Team struct {
	League   string        `json:"league,omitempty"`
	TeamSize string        `json:"team_size"`
	Vector   string        `json:"vector"`
	Scratch  []TeamScratch `json:"scratch,omitempty"`
}

// TeamScratch is a scratch view of a team launch: its level ("0", "1" or
// a tunable) and elements per team.
type TeamScratch struct {
	Level string `json:"level"`
	Size  string `json:"size"`
}

// Cell is the space of kernel k (with the kernels a composite uses) under
// variant v at size (Record, then At).
func (s *Spaces) Cell(k *spec.Kernel, uses []*spec.Kernel, v *matrix.Variant, size int64) (*CellSpace, error) {
	return s.CellOn(k, uses, v, size, false)
}

// CellOn is Cell for a program that runs on the host CPU (host) or on a
// GPU: on the host the strategy's host_ignores are not part of it.
func (s *Spaces) CellOn(k *spec.Kernel, uses []*spec.Kernel, v *matrix.Variant, size int64, host bool) (*CellSpace, error) {
	r, err := s.RecordOn(k, uses, v, host)
	if err != nil {
		return nil, err
	}
	return r.At(size), nil
}

// Record is the space of kernel k (with the kernels a composite uses)
// under variant v, at any size. A tunable's space is the kernel's scope in
// the file, else the strategy's, else its declaration; a tunable a knob
// value sets is held at that value, since the knob value is what makes the
// variant (2 levels means vector_size 1).
func (s *Spaces) Record(k *spec.Kernel, uses []*spec.Kernel, v *matrix.Variant) (*Recorded, error) {
	return s.RecordOn(k, uses, v, false)
}

// RecordOn is Record for a program that runs on the host CPU (host) or on
// a GPU. The space holds only what the program reads at run time: on the
// host not the launch tunables the strategy's layer ignores there
// (matrix.Strategy.HostIgnores), and none for a vendor form (a library
// call: the kernel's tunables are not its launch).
func (s *Spaces) RecordOn(k *spec.Kernel, uses []*spec.Kernel, v *matrix.Variant, host bool) (*Recorded, error) {
	c := &Recorded{Values: map[string][]int64{}, Fixed: map[string]string{}, Default: Config{},
		Machine: slices.Sorted(maps.Keys(s.Machine)), Exact: exactLaunch(v)}
	consts := map[string]int64{}
	var teams []*spec.Node
	for _, kk := range append([]*spec.Kernel{k}, uses...) {
		if sc := s.Kernels[kk.Name]; sc != nil {
			maps.Copy(consts, sc.ScratchConsts)
		}
		for _, t := range kk.Tunables {
			if !v.Strategy.DeclaresTunables() {
				break
			}
			if _, dup := c.Default[t.Name]; !dup {
				c.Default[t.Name] = t.Value
				if v.Strategy.ItemRegisters && t.Registers > 0 { // the value its program is generated with
					c.Default[t.Name] = t.Registers
				}
			}
		}
		c.Env = append(c.Env, envArgs(kk))
		// the teams as the strategy's program has them (a work item's state in registers: no scratch for it)
		teams = append(teams, kk.Pattern.ItemForm(v.Strategy.ItemRegisters).Teams()...)
		c.OtherLaunch = c.OtherLaunch || usesPattern(kk.Pattern, nonTeamLaunches, false)
	}
	scratch := withConsts(teams, consts)
	for i, t := range teams {
		team := Team{League: t.League, TeamSize: t.TeamSize, Vector: t.Vector}
		for _, sv := range scratch[i] {
			team.Scratch = append(team.Scratch, TeamScratch{Level: sv.Level, Size: sv.Size})
		}
		c.Teams = append(c.Teams, team)
	}
	for name, val := range v.Tunables {
		if !v.Strategy.DeclaresTunables() || host && slices.Contains(v.Strategy.HostIgnores, name) {
			continue
		}
		if _, ok := c.Default[name]; ok || s.launches(name, k, uses) {
			c.Default[name] = val
		}
	}
	c.Names = slices.Sorted(maps.Keys(c.Default))
	scopes := []*Scope{s.Strategies[v.Strategy.Name]} // later scopes win: the kernel's own last
	for _, u := range uses {
		scopes = append(scopes, s.Kernels[u.Name])
	}
	scopes = append(scopes, s.Kernels[k.Name])
	for _, name := range c.Names {
		d, ok := s.Tunables[name]
		if !ok {
			return nil, fmt.Errorf("%s: tunable %s of %s has no search space in %s", k.Pos, name, k.Name, s.File)
		}
		if d.Block {
			c.Blocks = append(c.Blocks, name)
		}
		c.Values[name] = d.Space
		for _, sc := range scopes {
			switch {
			case sc == nil:
			case sc.Held[name]:
				c.Values[name] = []int64{c.Default[name]}
				c.Fixed[name] = "held at its default for " + sc.Name + " (" + sc.Pos.String() + ")"
			case sc.Space[name] != nil:
				c.Values[name] = sc.Space[name]
				delete(c.Fixed, name)
			}
		}
	}
	// The constants of the program (spec.Kernel.RenderTimeTunables, as the
	// renderer has them): one value per binary.
	for _, kk := range append([]*spec.Kernel{k}, uses...) {
		for _, name := range slices.Sorted(maps.Keys(kk.RenderTimeTunables())) {
			if _, ok := c.Default[name]; !ok || slices.Contains(c.Rendered, name) {
				continue
			}
			c.Values[name] = []int64{c.Default[name]}
			c.Fixed[name] = "scratch level: chosen when the program is rendered" // the level picks the code rendered
			if slices.ContainsFunc(kk.Tunables, func(t spec.Tunable) bool { return t.Name == name && t.Rendered }) {
				c.Fixed[name] = "a constant of the program: chosen when the program is rendered"
			}
			c.Rendered = append(c.Rendered, name)
		}
	}
	slices.Sort(c.Rendered)
	for i, kn := range v.Strategy.Knobs {
		for name, val := range v.Values[i].Tunables {
			if _, ok := c.Default[name]; ok {
				c.Values[name] = []int64{val}
				c.Fixed[name] = kn.Name + "=" + v.Values[i].Value
			}
		}
	}
	n := 1
	for _, name := range c.Names {
		if n *= len(c.Values[name]); n > MaxConfigs {
			return nil, fmt.Errorf("%s: the space of %s under %s holds more than %d configurations: narrow it in %s", k.Pos, k.Name, v.ID, MaxConfigs, s.File)
		}
	}
	all := slices.Clone(s.Constraints)
	for _, sc := range scopes {
		if sc != nil {
			all = append(all, sc.Constraints...)
		}
	}
	for _, con := range all {
		if s.applies(c.Names, con) {
			c.Constraints = append(c.Constraints, con)
		}
	}
	return c, nil
}

// envArgs are what k's Env reads of its arguments.
func envArgs(k *spec.Kernel) []EnvArg {
	var out []EnvArg
	for _, a := range k.Args {
		switch {
		case a.Type == "csr" && a.Init.Kind == "minife27":
			out = append(out, EnvArg{Name: a.Name, Type: a.Type, Init: a.Init.Kind, Grid: a.Init.Grid})
		case a.Type == "csr", a.IsArray():
		default:
			out = append(out, EnvArg{Name: a.Name, Type: a.Type, Value: a.Value})
		}
	}
	return out
}

// At is the space at size: the kernels' arguments evaluated there.
func (r *Recorded) At(size int64) *CellSpace {
	c := &CellSpace{Names: r.Names, Values: map[string][]int64{}, Fixed: maps.Clone(r.Fixed), Rendered: map[string]bool{},
		Default: maps.Clone(r.Default), Constraints: r.Constraints, rec: r}
	for name, vals := range r.Values {
		c.Values[name] = slices.Clone(vals)
	}
	if c.Fixed == nil {
		c.Fixed = map[string]string{}
	}
	if c.Default == nil {
		c.Default = Config{}
	}
	for _, name := range r.Rendered {
		c.Rendered[name] = true
	}
	for i, args := range r.Env {
		k := &spec.Kernel{}
		for _, a := range args {
			k.Args = append(k.Args, spec.Arg{Name: a.Name, Type: a.Type, Value: a.Value, Init: spec.Init{Kind: a.Init, Grid: a.Grid}})
		}
		env := k.Env(size)
		if i == 0 {
			c.env = env
			continue
		}
		for name, val := range env {
			if _, ok := c.env[name]; !ok {
				c.env[name] = val
			}
		}
	}
	if c.env == nil {
		c.env = spec.Env{"size": {I: size, Int: true}, "eps": {F: spec.Eps}}
	}
	for _, t := range r.Teams {
		c.teams = append(c.teams, &spec.Node{Kind: "team", League: t.League, TeamSize: t.TeamSize, Vector: t.Vector})
		var views []spec.Scratch
		for _, sv := range t.Scratch {
			views = append(views, spec.Scratch{Level: sv.Level, Size: sv.Size})
		}
		c.scratch = append(c.scratch, views)
	}
	return c
}

// launches says whether name is a launch parameter (Decl.Patterns) of a
// pattern kernel k or a kernel it uses lowers.
func (s *Spaces) launches(name string, k *spec.Kernel, uses []*spec.Kernel) bool {
	d := s.Tunables[name]
	if d == nil || len(d.Patterns) == 0 {
		return false
	}
	for _, kk := range append([]*spec.Kernel{k}, uses...) {
		if usesPattern(kk.Pattern, d.Patterns, d.NotWithScratch) {
			return true
		}
	}
	return false
}

// nonTeamLaunches are the patterns that launch a kernel of their own shape,
// not the team's.
var nonTeamLaunches = []string{"range_for", "range_reduce", "sequence", "indexset_for"}

// usesPattern says whether the tree at n has a node of one of kinds (a team
// with scratch not counting when notWithScratch).
func usesPattern(n *spec.Node, kinds []string, notWithScratch bool) bool {
	if n == nil {
		return false
	}
	if slices.Contains(kinds, n.Kind) && !(notWithScratch && len(n.Scratch) > 0) {
		return true
	}
	return slices.ContainsFunc(n.Body, func(b *spec.Node) bool { return usesPattern(b, kinds, notWithScratch) })
}

// applies: every tunable the constraint names is one of the cell's (names).
func (s *Spaces) applies(names []string, con Constraint) bool {
	for _, name := range con.Names {
		if _, tunable := s.Tunables[name]; tunable && !slices.Contains(names, name) {
			return false
		}
	}
	return true
}

// Flag is cfg as the harness's --config takes it: without the tunables the
// binary was rendered with, which it cannot change at run time.
func (c *CellSpace) Flag(cfg Config) string {
	run := Config{}
	for k, v := range cfg {
		if !c.Rendered[k] {
			run[k] = v
		}
	}
	return run.String()
}

// Len is the number of configurations of the space.
func (c *CellSpace) Len() int {
	n := 1
	for _, name := range c.Names {
		n *= len(c.Values[name])
	}
	return n
}

// All lists the configurations, the last tunable (by name) varying fastest.
func (c *CellSpace) All() []Config {
	out := []Config{{}}
	for _, name := range c.Names {
		var next []Config
		for _, cfg := range out {
			for _, v := range c.Values[name] {
				n := maps.Clone(cfg)
				n[name] = v
				next = append(next, n)
			}
		}
		out = next
	}
	return out
}

// Feasible says whether cfg meets the cell's constraints on machine m, and
// if not, which constraint it breaks. A constraint is not checked when it
// reads a machine property m does not give (no model, or a CPU's model
// without max_threads_per_block), nor when it reads scratch_bytes and the
// kernel's scratch sizes are not plain arithmetic (a sizeof or a problem's
// field the kernel's scratch_consts in tuning.yaml do not give): Unchecked
// says which.
func (c *CellSpace) Feasible(cfg Config, m Machine) (ok bool, why string, err error) {
	env := maps.Clone(c.env)
	for k, v := range cfg {
		env[k] = spec.Value{I: v, Int: true}
	}
	for k, v := range m {
		env[k] = number(v)
	}
	if b, ok := c.scratchBytes(env); ok {
		env["scratch_bytes"] = spec.Value{I: b, Int: true}
	}
	for _, con := range c.Constraints {
		skip := false
		for _, name := range con.Names {
			if _, ok := env[name]; ok {
				continue
			}
			if prop := slices.Contains(c.rec.Machine, name); prop || Derived[name] != "" {
				skip = true
			}
		}
		if skip {
			continue
		}
		holds, err := spec.Holds(con.Expr, env)
		if err != nil {
			return false, "", fmt.Errorf("%s: constraint %q at %s: %v", con.Pos, con.Expr, cfg, err)
		}
		if !holds {
			return false, con.Expr, nil
		}
	}
	return true, "", nil
}

// Unchecked lists the constraints Feasible cannot check on m, each with the
// name it lacks.
func (c *CellSpace) Unchecked(m Machine) []string {
	env := maps.Clone(c.env)
	for k, v := range c.Default {
		env[k] = spec.Value{I: v, Int: true}
	}
	_, scratch := c.scratchBytes(env)
	var out []string
	for _, con := range c.Constraints {
		for _, name := range con.Names {
			_, have := m[name]
			prop := slices.Contains(c.rec.Machine, name)
			if prop && !have || name == "scratch_bytes" && !scratch {
				out = append(out, fmt.Sprintf("%s (no %s)", con.Expr, name))
				break
			}
		}
	}
	return out
}

// scratchBytes is the most level-0 scratch one team launch of the cell
// asks for (its views, 8 bytes an element: spec.ScratchTypes; each team
// pattern is a launch of its own, so the largest, not the sum, must fit);
// false when a size is not plain arithmetic once the kernels'
// scratch_consts are put in.
func (c *CellSpace) scratchBytes(env spec.Env) (int64, bool) {
	var most int64
	for _, views := range c.scratch {
		var launch int64
		for _, s := range views {
			level := s.Level
			if v, ok := env[level]; ok && v.Int {
				level = strconv.FormatInt(v.I, 10)
			}
			if level != "0" {
				continue
			}
			n, err := spec.Eval(s.Size, env)
			if err != nil || !n.Int {
				return 0, false
			}
			launch += 8 * n.I
		}
		most = max(most, launch)
	}
	return most, true
}

// withConsts is each team's scratch views with the values of
// scratch_consts put into their sizes, the longest term first (so that a
// term inside another is not replaced first).
func withConsts(teams []*spec.Node, consts map[string]int64) [][]spec.Scratch {
	terms := slices.SortedFunc(maps.Keys(consts), func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	out := make([][]spec.Scratch, len(teams))
	for i, t := range teams {
		out[i] = slices.Clone(t.Scratch)
		for j := range out[i] {
			for _, term := range terms {
				out[i][j].Size = strings.ReplaceAll(out[i][j].Size, term, "("+strconv.FormatInt(consts[term], 10)+")")
			}
		}
	}
	return out
}

func number(f float64) spec.Value {
	if f == float64(int64(f)) {
		return spec.Value{I: int64(f), Int: true}
	}
	return spec.Value{F: f}
}

// Target is the tuning target of a cell of the matrix at one size, its
// binary named by buildKey; kernels resolves the kernels a composite uses.
func (s *Spaces) Target(c *matrix.Cell, kernels map[string]*spec.Kernel, size int64, buildKey string) (Target, error) {
	space, err := s.CellOn(c.Kernel, c.Kernel.Used(kernels), c.Variant, size, onHost(c))
	if err != nil {
		return Target{}, err
	}
	return Target{Cell: c.ID, Size: size, BuildKey: buildKey, Space: space}, nil
}
