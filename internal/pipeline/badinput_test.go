package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/golden"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// badCase is one bad input a user may write, and where it is caught. Its
// expected message is testdata/bad/<name>.golden (go test -update rewrites
// them); the temporary project root reads ROOT there.
type badCase struct {
	name  string
	edit  [][3]string       // file (relative to the root), old text, new text ("" old: the file becomes new)
	env   []string          // knobs, as the environment gives them
	flags []string          // CLI flags
	stage string            // load (default), knobs, flags, build, run, all, results, compare, claims
	setup func(root string) // more than text edits: fake manifests, binaries, results folders
}

const kernel = "templates/kernels/axpby.yaml"
const strategies = "variants/strategies.yaml"
const caps = "variants/capabilities.yaml"
const tcs = "toolchains.yaml"
const claimsFile = "templates/report/claims.yaml"

var badCases = []badCase{
	// Kernel descriptions.
	{name: "kernel-unknown-field", edit: [][3]string{{kernel, "doc: y =", "dox: y ="}}},
	{name: "kernel-bad-yaml", edit: [][3]string{{kernel, "args:\n", "args: [\n"}}},
	{name: "kernel-unknown-type", edit: [][3]string{{kernel, `type: double, value: "0.75"`, `type: float, value: "0.75"`}}},
	{name: "kernel-unknown-intent", edit: [][3]string{{kernel, "intent: inout", "intent: both"}}},
	{name: "kernel-unknown-pattern", edit: [][3]string{{kernel, "range_for:", "range_four:"}}},
	{name: "kernel-negative-tolerance", edit: [][3]string{{kernel, "tolerance: 4 * eps", "tolerance: -1e-14"}}},
	{name: "kernel-inf-tolerance", edit: [][3]string{{kernel, "tolerance: 4 * eps", "tolerance: .inf"}}},
	{name: "kernel-nan-tolerance", edit: [][3]string{{kernel, "tolerance: 4 * eps", "tolerance: .nan"}}},
	{name: "kernel-duplicate-name", edit: [][3]string{{"templates/kernels/axpby2.yaml", "", "@" + kernel}}},
	{name: "kernel-missing-reference", edit: [][3]string{{kernel, "reference: |\n  for (int64_t i = 0; i < n; ++i) y[i] = a * x[i] + b * y[i];\n", ""}}},
	{name: "kernel-uses-typo", edit: [][3]string{{"templates/kernels/cgsolve.yaml", "uses: [axpby, dot, spmv]", "uses: [axpby, dot, spvm]"}}},
	{name: "kernel-bad-size", edit: [][3]string{{kernel, "ci: [1003, 100003]", "ci: [1003, big]"}}},
	{name: "kernel-empty-file", edit: [][3]string{{"templates/kernels/empty.yaml", "", ""}}},
	{name: "kernel-size-multiple-of-width", edit: [][3]string{{kernel, "ci: [1003, 100003]", "ci: [1024, 100000]"}}},
	{name: "kernel-loops-non-affine", edit: [][3]string{{"templates/kernels/atx_mapped.yaml", `reads: "A[j][i], x[j]"`, `reads: "A[j][i*j], x[j]"`}}},
	{name: "kernel-args-not-list", edit: [][3]string{{kernel, "args:\n  - {name: n, type: int64, value: size}\n", "args: {n: 1}\nxargs:\n  - {name: n, type: int64, value: size}\n"}}},

	// Tunables and their search spaces (variants/tuning.yaml).
	{name: "tunable-zero", edit: [][3]string{{"templates/kernels/spmv.yaml", "tunables: {rows_per_team: 16,", "tunables: {rows_per_team: 0,"}}},
	{name: "tunable-undeclared", edit: [][3]string{{strategies, "tunables: {rows_per_team: 64,", "tunables: {rows_per_tem: 64,"}}},
	{name: "tuning-bad-constraint", edit: [][3]string{{"variants/tuning.yaml", "  - vector_size <= warp_size\n", "  - vector_size <= warp_width\n  - vector_size\n"}}},

	// Variants.
	{name: "strategy-capability-typo", edit: [][3]string{{strategies, "requires: [openmp]", "requires: [opemnp]"}}},
	{name: "strategy-optional-typo", edit: [][3]string{{strategies, "requires: [cxx17]\n", "requires: [cxx17]\n    optional: [ompx_bar]\n"}}},
	{name: "strategy-unknown-device", edit: [][3]string{{strategies, "backend: serial\n    device: host", "backend: serial\n    device: hots"}}},
	{name: "strategy-duplicate-variant", edit: [][3]string{{strategies, "  - name: omp-host\n", "  - name: omp\n    backend: omp-host\n    device: host\n    knobs:\n      - name: k\n        values: [{value: a, suffix: \"-host\"}]\n  - name: omp-host\n"}}},
	{name: "strategy-kernels-typo", edit: [][3]string{{strategies, "backend: serial\n    device: host\n", "backend: serial\n    device: host\n    kernels: [axbpy, dot]\n"}}},
	{name: "strategy-unknown-field", edit: [][3]string{{strategies, "backend: serial\n", "backend: serial\n    backends: serial\n"}}},
	{name: "strategy-missing-backend", edit: [][3]string{{strategies, "    backend: serial\n    device: host\n", "    device: host\n"}}},
	{name: "strategy-bad-lang", edit: [][3]string{{strategies, "backend: serial\n    device: host\n", "backend: serial\n    device: host\n    lang: fortran\n"}}},
	{name: "strategy-defined-twice", edit: [][3]string{{strategies, "  - name: omp-host\n", "  - name: serial\n    backend: serial\n    device: host\n  - name: omp-host\n"}}},
	{name: "strategy-library-typo", edit: [][3]string{{strategies, "backend: serial\n    device: host\n", "backend: serial\n    device: host\n    library: {name: kokos, backend: openmp}\n"}}},
	{name: "strategy-library-backend-typo", edit: [][3]string{{strategies, "backend: serial\n    device: host\n", "backend: serial\n    device: host\n    library: {name: raja, backend: opnemp}\n"}}},
	{name: "libraries-bad-fix", edit: [][3]string{{"variants/libraries.yaml", "file: core/src/Cuda/Kokkos_Cuda_Instance.hpp", "file: ../Kokkos_Cuda_Instance.hpp"}}},
	{name: "strategy-unknown-backend", edit: [][3]string{{strategies, "backend: serial\n    device: host", "backend: seriall\n    device: host"}}},

	// Capabilities.
	{name: "caps-family-typo", edit: [][3]string{{caps, `when: {gcc: ">= 7", llvm: ">= 5"`, `when: {gcc: ">= 7", lvm: ">= 5"`}}},
	{name: "caps-bad-constraint", edit: [][3]string{{caps, `gcc: ">= 4.9"`, `gcc: "at least 4.9"`}}},
	{name: "caps-defined-twice", edit: [][3]string{{caps, "  - name: openmp\n", "  - name: cxx17\n"}}},
	{name: "caps-bad-target", edit: [][3]string{{caps, "targets: [host]", "targets: [cpu]"}}},
	{name: "caps-missing-source", edit: [][3]string{{caps, "    source: GCC 4.9 release notes (OpenMP 4.0); Clang 3.9 release notes (OpenMP 4.5 by default)\n", ""}}},
	{name: "caps-bad-cuda-constraint", edit: [][3]string{{caps, `cuda: ">= 12.8"`, `cuda: "twelve"`}}},

	// Toolchains.
	{name: "toolchain-family-typo", edit: [][3]string{{tcs, "id: gcc-host\n    family: gcc", "id: gcc-host\n    family: gnu"}}},
	{name: "toolchain-device-typo", edit: [][3]string{{tcs, "devices: [host, omptarget]", "devices: [host, omptraget]"}}},
	{name: "toolchain-defined-twice", edit: [][3]string{{tcs, "  - id: clang19-host\n", "  - id: gcc-host\n"}}},
	{name: "toolchain-bad-version", edit: [][3]string{{tcs, "  - id: clang19-host\n", "  - id: pinned\n    family: gcc\n    commands: [g++]\n    target: host\n    devices: [host]\n    version: twelve\n  - id: clang19-host\n"}}},
	{name: "toolchain-missing-fields", edit: [][3]string{{tcs, "  - id: clang19-host\n", "  - id: half\n  - id: clang19-host\n"}}},
	{name: "toolchain-bad-enabled", edit: [][3]string{{tcs, "  - id: clang19-host\n", "  - id: clang19-host\n    enabled: maybe\n"}}},

	// Templates.
	{name: "template-syntax", edit: [][3]string{{"templates/backends/serial/patterns.tmpl", "{{ .Body | indent 2 }}", "{{ .Body | indent 2 }"}}},
	{name: "template-unknown-function", edit: [][3]string{{"templates/backends/serial/patterns.tmpl", "{{ .Body | indent 2 }}", "{{ .Body | indnet 2 }}"}}},
	{name: "template-env-function", edit: [][3]string{{"templates/backends/serial/patterns.tmpl", "{{ .Body | indent 2 }}", "{{ env \"HOME\" }}"}}},

	// Knobs (the environment) and selections.
	{name: "knob-gpu-yes", stage: "knobs", env: []string{"PM_GPU=yes"}},
	{name: "knob-reps-negative", stage: "knobs", env: []string{"PM_REPS=-1"}},
	{name: "knob-trials-zero", stage: "knobs", env: []string{"PM_TRIALS=0"}},
	{name: "knob-warmup-negative", stage: "knobs", env: []string{"PM_WARMUP=-2"}},
	// Names no table row has, spelt so that config's scan of the sources does not take them for names.
	{name: "knob-typo", stage: "knobs", env: []string{"PM_" + "TRAILS=3"}},
	{name: "knob-unknown", stage: "knobs", env: []string{"PM_" + "COLOUR=1"}},
	{name: "knob-sizes-bad", stage: "knobs", env: []string{"PM_SIZES=axpby=1e8;spmv=-3"}},
	{name: "knob-threshold-range", stage: "knobs", env: []string{"PM_THRESHOLD=1.5"}},
	{name: "knob-resume-yes", stage: "knobs", env: []string{"PM_RESUME=yes"}},
	{name: "knob-timeout-word", stage: "knobs", env: []string{"PM_TIMEOUT=long"}},
	{name: "select-kernel-typo", env: []string{"PM_KERNELS=axbpy"}},
	{name: "select-variant-typo", env: []string{"PM_VARIANTS=omp-hots"}},
	{name: "select-toolchain-typo", env: []string{"PM_TOOLCHAINS=gcc_host"}},
	{name: "select-size-set-typo", env: []string{"PM_SIZE_SET=gpus"}},
	{name: "out-is-file", stage: "checkout", env: []string{"PM_OUT=ROOT/toolchains.yaml"}},
	{name: "out-holds-run", stage: "checkout", env: []string{"PM_OUT=ROOT/results/old"}, setup: finishedFolder},
	{name: "resume-without-out", stage: "checkout", env: []string{"PM_RESUME=1"}},
	{name: "out-under-file", stage: "checkout", env: []string{"PM_OUT=ROOT/toolchains.yaml/run"}},

	// CLI flags.
	{name: "flag-typo", stage: "flags", flags: []string{"-tirals", "3"}},
	{name: "flag-reps-negative", stage: "flags", flags: []string{"-reps", "-1"}},
	{name: "flag-gpu-value", stage: "flags", flags: []string{"-gpu=maybe"}},
	{name: "flag-warmup-word", stage: "flags", flags: []string{"-warmup", "none"}},

	// Build faults.
	{name: "build-corrupt-manifest", stage: "build", env: []string{"PM_KERNELS=axpby", "PM_VARIANTS=serial", "PM_TOOLCHAINS=gcc-host"}, setup: func(root string) {
		os.MkdirAll(filepath.Join(root, "build"), 0o755)
		os.WriteFile(filepath.Join(root, "build", "manifest.json"), []byte(`{"cells": [`), 0o644)
	}},
	{name: "build-toolchain-missing", stage: "build", env: []string{"PM_KERNELS=axpby", "PM_VARIANTS=serial", "PM_TOOLCHAINS=gcc-host,nvhpc-sm90"}},
	{name: "build-wrong-family", stage: "build", env: []string{"PM_KERNELS=axpby", "PM_TOOLCHAINS=gcc-host", "PM_VARIANTS=kk-cuda-3lvl"}},
	{name: "build-constraint-off", stage: "build", env: []string{"PM_KERNELS=axpby", "PM_VARIANTS=serial", "PM_TOOLCHAINS=gcc-host"},
		edit: [][3]string{{caps, `when: {gcc: ">= 7", llvm: ">= 5"`, `when: {gcc: ">= 70", llvm: ">= 5"`}}},
	{name: "build-compile-error", stage: "build", env: []string{"PM_KERNELS=axpby", "PM_VARIANTS=serial", "PM_TOOLCHAINS=gcc-host"},
		edit: [][3]string{{kernel, "body: y[i] = a*x[i] + b*y[i];", "body: y[i] = a*x[i] + b*w[i];"}}},
	{name: "known-failures-bad", stage: "known", edit: [][3]string{{build.KnownFile, "", "failures:\n  - cell: \"[\"\n    message: \"(\"\n  - cell: x\n"}}},

	// Run faults: fake programs behind a manifest.
	{name: "run-crash", stage: "run", setup: fakeProgram("echo boom >&2; kill -SEGV $$")},
	{name: "run-exit-status", stage: "run", setup: fakeProgram("echo 'no device' >&2; exit 3")},
	{name: "run-garbage", stage: "run", setup: fakeProgram("echo 'hello world'")},
	{name: "run-silent", stage: "run", setup: fakeProgram("true")},
	{name: "run-not-verified", stage: "run", setup: fakeProgram(`echo '{"kind":"kernel","size":5,"reps":1,"times_s":[1e-3],"median_s":1e-3,"verified":false,"max_rel_err":0.5,"tolerance":1e-14}'`)},
	{name: "run-timeout", stage: "run", env: []string{"PM_TIMEOUT=1"}, setup: fakeProgram("sleep 5")},
	{name: "run-no-manifest", stage: "run"},
	{name: "run-unknown-kernel", stage: "run", env: []string{"PM_KERNELS=dto"}, setup: fakeProgram("true")},

	// Results folders.
	{name: "results-torn-last-line", stage: "results", setup: folderWith("{\"kind\":\"kernel\",\"cell\":\"a\",\"size\":1,\"verified\":true}\n{\"kind\":\"ker")},
	{name: "results-bad-middle-line", stage: "results", setup: folderWith("{\"kind\":\"kernel\",\"cell\":\"a\",\"size\":1,\"verified\":true}\n{oops}\n{\"kind\":\"kernel\",\"cell\":\"a\",\"size\":2,\"verified\":true}\n")},
	{name: "results-corrupt-run-json", stage: "results", setup: func(root string) {
		folderWith("")(root)
		os.WriteFile(filepath.Join(root, "results", "old", results.RunFile), []byte("{"), 0o644)
	}},
	{name: "results-missing-run-json", stage: "results", setup: func(root string) {
		folderWith("")(root)
		os.Remove(filepath.Join(root, "results", "old", results.RunFile))
	}},
	{name: "results-resume-running", stage: "resume", setup: func(root string) {
		fakeProgram("true")(root)
		folderWith("")(root)
		r := results.Run{ID: "old", State: results.StateRunning, PID: os.Getpid()}
		r.Host.Hostname, _ = os.Hostname()
		results.WriteRun(filepath.Join(root, "results", "old"), r)
	}},
	{name: "resume-other-selection", stage: "resume", env: []string{"PM_KERNELS=dot", "PM_VARIANTS=omp-host", "PM_SIZES=2000", "PM_REPS=5", "PM_GPU=0"}, setup: finishedRun("axpby", "serial")},

	// Claims (templates/report/claims.yaml), checked against the tree's names.
	{name: "claims-unknown-variant", stage: "claims", edit: [][3]string{{claimsFile, "numerator: {variants: [kk-ompx], families: [llvm], premises", "numerator: {variants: [kk-ompz], families: [llvm], premises"}}},
	{name: "claims-unknown-toolchain", stage: "claims", edit: [][3]string{{claimsFile, "toolchains: [clang19-sm90, clang22-sm90]", "toolchains: [clang19-sm90, clang21-sm90]"}}},
	{name: "claims-unknown-size", stage: "claims", edit: [][3]string{{claimsFile, "sizes: smallest", "sizes: [1000, 1000001]"}}},
	{name: "claims-premise-tunable", stage: "claims", edit: [][3]string{{claimsFile, "premises: {snap_vector: 32}", "premises: {snap_vectr: 32}"}}},
	{name: "claims-premise-value", stage: "claims", edit: [][3]string{{claimsFile, "premises: {snap_vector: 32}", "premises: {snap_vector: 8}"}}},
	{name: "claims-keep-axis", stage: "claims", edit: [][3]string{{claimsFile, "keep: [toolchain, library, size]", "keep: [compiler, library, size]"}}},
	{name: "compare-torn-line", stage: "compare", setup: folderWith("{\"kind\":\"kernel\",\"cell\":\"a\",\"size\":1,\"verified\":true,\"gbps\":2}\n{\"kind\":\"kernel\",\"cell\":\"a\",\"size\":2,\"verif")},
}

// truncated matches the end of a summary line cut with "..." (a compiler's
// error line and its log's path), keeping a few characters of the error.
var truncated = regexp.MustCompile(`((?:In function|error:)[^\n]{0,12})[^\n]*\.\.\.`)

// finishedFolder makes ROOT/results/old a finished run.
func finishedFolder(root string) { folderWith("")(root) }

func folderWith(jsonl string) func(string) {
	return func(root string) {
		dir := filepath.Join(root, "results", "old")
		os.MkdirAll(dir, 0o755)
		results.WriteRun(dir, results.Run{ID: "old", State: results.StateFinished})
		os.WriteFile(filepath.Join(dir, results.JSONLFile), []byte(jsonl), 0o644)
	}
}

// fakeProgram writes a build folder whose one cell is a shell script.
func fakeProgram(script string) func(string) {
	return func(root string) {
		dir := filepath.Join(root, "build")
		os.MkdirAll(filepath.Join(dir, "gcc-host"), 0o755)
		os.WriteFile(filepath.Join(dir, "gcc-host", "axpby.serial"), []byte("#!/bin/sh\n"+script+"\n"), 0o755)
		m := build.Manifest{Toolchains: map[string]build.ToolchainInfo{"gcc-host": {ID: "gcc-host", Family: "gcc", Target: "host"}},
			Cells: []build.Entry{{ID: "axpby.serial.gcc-host", Kernel: "axpby", Variant: "serial", Strategy: "serial",
				Toolchain: "gcc-host", Target: "host", Binary: "gcc-host/axpby.serial", Status: build.Built,
				Sizes: map[string][]int64{"ci": {5}}}}}
		b, _ := json.Marshal(m)
		os.WriteFile(build.ManifestFile(dir), b, 0o644)
	}
}

func (c badCase) message(t *testing.T, root string) string {
	ctx := context.Background()
	var env []string
	for _, e := range c.env {
		env = append(env, strings.ReplaceAll(e, "ROOT", root))
	}
	cfg, err := config.FromEnviron(env)
	if c.stage == "knobs" || err != nil {
		return errText(err)
	}
	cfg.Root, cfg.Log = root, io.Discard
	cfg.Defaults()
	switch c.stage {
	case "flags":
		fs := flag.NewFlagSet("portmatrix", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		config.Flags(fs, &cfg)
		err := fs.Parse(c.flags)
		if err != nil {
			err = config.FlagError(err)
		}
		return errText(err)
	case "checkout":
		return errText(results.CheckOut(cfg.Out, cfg.Resume))
	case "run":
		cfg.Out = filepath.Join(root, "results", "new")
		cfg.Kernels = append(cfg.Kernels, []string{}...)
		_, err := session.Run(ctx, cfg)
		return errText(err)
	case "resume":
		cfg.Out, cfg.Resume = filepath.Join(root, "results", "old"), true
		_, err := session.Run(ctx, cfg)
		return errText(err)
	case "results":
		var warn bytes.Buffer
		old := results.Warnings
		results.Warnings = &warn
		defer func() { results.Warnings = old }()
		_, err := results.Load(filepath.Join(root, "results", "old"))
		return warn.String() + errText(err)
	case "compare":
		var warn, out bytes.Buffer
		old := results.Warnings
		results.Warnings = &warn
		defer func() { results.Warnings = old }()
		dir := filepath.Join(root, "results", "old")
		_, err := results.Compare(dir, dir, 0.1, &out)
		return warn.String() + errText(err)
	case "claims":
		v, err := vocabulary.Load(root)
		if err == nil {
			_, err = reportspec.LoadClaims(filepath.Join(root, claimsFile), v)
		}
		return errText(err)
	case "known":
		_, err := build.LoadKnown(filepath.Join(root, build.KnownFile))
		return errText(err)
	}
	p, err := Load(ctx, cfg)
	if err != nil || c.stage == "" || c.stage == "load" {
		return errText(err)
	}
	// build
	if err := Generate(p); err != nil {
		return errText(err)
	}
	res, err := Build(ctx, p)
	if err != nil {
		return errText(err)
	}
	return errText(p.buildFailures(res))
}

func errText(err error) string {
	if err == nil {
		return "(no error)\n"
	}
	return err.Error() + "\n"
}

func TestBadInputCorpus(t *testing.T) {
	require.GreaterOrEqual(t, len(badCases), 60)
	names := map[string]bool{}
	tree := newCorpusTree(t, nil)
	vocab := vocabOf(t, tree.root)
	for _, c := range badCases {
		require.False(t, names[c.name], "case %s twice", c.name)
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(c.name, "build-") {
				testenv.Long(t) // each compiles
			}
			c.check(t, tree, false, vocab)
		})
	}
	lowering.unchanged(t, tree.root)
	// No golden file is left without its case.
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.golden"))
	var stale []string
	for _, f := range files {
		if !names[strings.TrimSuffix(filepath.Base(f), ".golden")] {
			stale = append(stale, f)
		}
	}
	sort.Strings(stale)
	assert.Empty(t, stale)
}

// Adding a kernel, a strategy with a backend of its own and a toolchain, as
// docs/kernels.md and docs/variants.md tell a user to, changes no expected
// message: the corpus gives the same golden files on a tree that has them.
// (The build cases are left out: they compile, and name no list.) Without
// PM_LONG_TESTS=1, only the cases whose message names the vocabulary: a
// list of names or a "did you mean".
func TestBadInputCorpusWithNewKernelAndStrategy(t *testing.T) {
	tree := newCorpusTree(t, addVocabulary)
	_, err := Load(context.Background(), Config{Root: tree.root, Log: io.Discard})
	require.NoError(t, err, "the additions are a valid tree")
	vocab := vocabOf(t, tree.root)
	assert.Contains(t, vocab[0].Items, "triad")
	assert.Contains(t, vocab[1].Items, "plain")
	assert.Contains(t, vocab[2].Items, "gcc-host-o2")
	for _, c := range badCases {
		if strings.HasPrefix(c.name, "build-") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			if !c.namesVocabulary(t) {
				testenv.Long(t)
			}
			c.check(t, tree, true, vocab)
		})
	}
	lowering.unchanged(t, tree.root)
}

// namesVocabulary says whether the case's golden message names the
// project's names: a placeholder for a list of them, or a suggestion.
func (c badCase) namesVocabulary(t *testing.T) bool {
	b, err := os.ReadFile(filepath.Join("testdata", "bad", c.name+".golden"))
	require.NoError(t, err)
	return strings.Contains(string(b), "{{") || strings.Contains(string(b), "did you mean")
}

// addVocabulary adds to the tree at root a kernel (AXPBY under a name no
// typo of the corpus is near, so that no "did you mean" changes), a strategy whose backend inherits serial's partials, and a
// toolchain, each at the end of its file so that no position moves.
func addVocabulary(t *testing.T, root string) {
	src, err := os.ReadFile(filepath.Join(root, kernel))
	require.NoError(t, err)
	triad := strings.Replace(string(src), "kernel: axpby\n", "kernel: triad\n", 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", "triad.yaml"), []byte(triad), 0o644))
	appendTo(t, filepath.Join(root, strategies), "\n  - name: plain\n    doc: serial loops under a backend of their own\n    backend: plain\n    device: host\n    requires: [cxx17]\n")
	backend := filepath.Join(root, "templates", "backends", "plain")
	require.NoError(t, os.MkdirAll(backend, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(backend, "backend.yaml"), []byte("doc: serial's partials\nbase: serial\n"), 0o644))
	appendTo(t, filepath.Join(root, tcs), "\n  - id: gcc-host-o2\n    family: gcc\n    commands: [g++]\n    target: host\n    devices: [host]\n    flags: [-O2, -std=c++17, -fopenmp]\n")
}

func appendTo(t *testing.T, file, text string) {
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, append(b, text...), 0o644))
}

// vocabOf is the lists the messages about the tree at root print after
// "known:", by the placeholder its golden files name them with.
func vocabOf(t *testing.T, root string) golden.Vocab {
	v, err := vocabulary.Load(root)
	require.NoError(t, err)
	loaded, err := toolchain.Load(filepath.Join(root, tcs), root)
	require.NoError(t, err)
	var ids []string
	for _, tc := range loaded {
		ids = append(ids, tc.ID)
	}
	devices, err := toolchain.HarnessDevices(filepath.Join(root, "harness"))
	require.NoError(t, err)
	variants := v.VariantNames() // then the strategies, as PM_VARIANTS takes either
	for _, s := range v.Strategies {
		variants = results.AppendNew(variants, s.Name)
	}
	return golden.Vocab{{Name: "kernels", Items: v.KernelNames()}, {Name: "variants", Items: variants},
		{Name: "toolchains", Items: ids}, {Name: "families", Items: v.Families}, {Name: "devices", Items: devices},
		{Name: "variant-names", Items: v.VariantNames()}} // a claim's variants: no strategy names
}

// check runs the case on tree, which it gives back as it was made when the
// case is done, and compares its message with the golden file, whose
// placeholders stand for vocab, the names of that tree (the same for every
// case of a test: vocabOf once). A tree with vocabulary added (more) writes
// no golden file. The cases of a test share one root, so that those that
// leave the kernels alone share their lowering (loweringMemo).
func (c badCase) check(t *testing.T, tree *corpusTree, more bool, vocab golden.Vocab) {
	root := tree.root
	var edited []string
	for _, e := range c.edit {
		edited = append(edited, e[0])
	}
	t.Cleanup(func() {
		changed, err := tree.restore(edited...)
		require.NoError(t, err, "the tree given back")
		for _, rel := range changed {
			assert.Contains(t, edited, rel, "the case changed a file it does not edit")
		}
	})
	for _, e := range c.edit {
		p := filepath.Join(root, e[0])
		old, _ := os.ReadFile(p)
		var now string
		switch {
		case e[1] == "" && strings.HasPrefix(e[2], "@"):
			b, err := os.ReadFile(filepath.Join(root, e[2][1:]))
			require.NoError(t, err)
			now = string(b)
		case e[1] == "":
			now = e[2]
		default:
			require.Contains(t, string(old), e[1], "edit of %s", e[0])
			now = strings.Replace(string(old), e[1], e[2], 1)
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(now), 0o644))
	}
	if c.setup != nil {
		c.setup(root)
	}
	got := strings.ReplaceAll(c.message(t, root), root, "ROOT")
	// A summary line is cut to a width before the root is replaced, so
	// where it is cut depends on the temporary root's length.
	got = truncated.ReplaceAllString(got, "$1...")
	got = strings.ReplaceAll(got, "process "+strconv.Itoa(os.Getpid()), "process PID")
	assert.NotEqual(t, "(no error)\n", got, "a bad input passes")
	file := filepath.Join("testdata", "bad", c.name+".golden")
	if *update && !more {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, []byte(vocab.Abstract(got)), 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, vocab.Expand(string(want)), got)
}
