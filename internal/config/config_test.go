package config

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSizes(t *testing.T) {
	s, err := ParseSizes("1000,2000")
	require.NoError(t, err)
	assert.Equal(t, Sizes{"": {1000, 2000}}, s)
	s, err = ParseSizes("axpby=1e8,spmv=150,200")
	require.NoError(t, err)
	assert.Equal(t, Sizes{"axpby": {100000000}, "spmv": {150, 200}}, s)
	assert.Equal(t, []int64{150, 200}, s.For("spmv"))
	assert.Nil(t, s.For("dot"))
	s, err = ParseSizes("1e3; dot=5;spmv=7")
	require.NoError(t, err)
	assert.Equal(t, Sizes{"": {1000}, "dot": {5}, "spmv": {7}}, s)
	assert.Equal(t, []int64{1000}, s.For("axpby"))
	for _, bad := range []string{"0", "1.5", "x", "=5", "axpby=-1"} {
		_, err := ParseSizes(bad)
		assert.Error(t, err, bad)
	}
}

func TestKnobsFromEnv(t *testing.T) {
	t.Setenv("PM_SIZES", "axpby=1e8;spmv=150,200")
	t.Setenv("PM_REPS", "3")
	t.Setenv("PM_TOOLCHAINS_FILE", "tc.yaml")
	cfg, err := FromEnv()
	require.NoError(t, err)
	assert.Equal(t, Sizes{"axpby": {100000000}, "spmv": {150, 200}}, cfg.Sizes)
	assert.Equal(t, 3, cfg.Reps)
	assert.Equal(t, "tc.yaml", cfg.ToolchainsFile)
	t.Setenv("PM_REPS", "zero")
	_, err = FromEnv()
	assert.EqualError(t, err, `PM_REPS: "zero": want a positive integer`)
}

// PM_GPUS is a knob like any other: the gpus scheduler reads cfg.GPUs, and
// nothing reads the environment for it.
func TestGPUsKnob(t *testing.T) {
	cfg, err := FromEnviron([]string{"PM_GPUS=0, GPU-5f2e"})
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "GPU-5f2e"}, cfg.GPUs)
	_, err = FromEnviron([]string{"PM_GPUS=0,,1"})
	assert.ErrorContains(t, err, "PM_GPUS")
	var flagged Config
	fs := flag.NewFlagSet("portmatrix", flag.ContinueOnError)
	Flags(fs, &flagged)
	require.NoError(t, fs.Parse([]string{"-gpus", "1,2"}))
	assert.Equal(t, []string{"1", "2"}, flagged.GPUs)
	assert.NotContains(t, strings.Join(flagged.WorkerArgs(), " "), "-gpus", "the scheduler's, not passed on")
}

// A CLI flag reaches the workers a scheduler starts: their arguments are
// derived from the knob table, and they parse back to the same settings.
func TestWorkerArgsFollowTheTable(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("portmatrix", flag.ContinueOnError)
	Flags(fs, &cfg)
	require.NoError(t, fs.Parse([]string{"-flush-l2", "on", "-sizes", "1e3;spmv=150,200", "-kernels", "axpby,spmv",
		"-warmup", "0", "-rep-seconds", "0", "-out", "results/x", "-resume", "-scheduler", "gpus", "-commit", "abc"}))
	cfg.Defaults()
	args := cfg.WorkerArgs()
	assert.Contains(t, args, "-flush-l2=on")
	for _, a := range args {
		for _, not := range []string{"-out", "-resume", "-scheduler", "-work", "-gpu=", "-gpus", "-cluster"} {
			assert.False(t, strings.HasPrefix(a, not), "%s: the scheduler's, not passed on", a)
		}
	}
	var back Config
	fs = flag.NewFlagSet("worker", flag.ContinueOnError)
	Flags(fs, &back)
	require.NoError(t, fs.Parse(args))
	back.Log = cfg.Log
	cfg.Out, cfg.Resume, cfg.Scheduler = "", false, ""
	assert.Equal(t, cfg, back)
}

// Every PM_ name in the sources, scripts, harness, templates and docs is a
// row of the one table, with its kind.
func TestEveryPMNameIsInTheTable(t *testing.T) {
	root := filepath.Join("..", "..")
	name := regexp.MustCompile(`\bPM_[A-Z0-9_]+`)
	var missing []string
	scan := func(path string) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			for _, n := range name.FindAllString(line, -1) {
				if Lookup(n) == nil {
					rel, _ := filepath.Rel(root, path)
					missing = append(missing, fmt.Sprintf("%s:%d: %s", rel, i+1, n))
				}
			}
		}
	}
	for _, dir := range []string{"scripts", "harness", "docs", ".ci", "templates", "internal", "cmd"} {
		require.NoError(t, filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if dir == "internal" || dir == "cmd" {
				if strings.HasSuffix(path, ".go") {
					scan(path)
				}
				return nil
			}
			scan(path)
			return nil
		}))
	}
	for _, f := range []string{"magefile.go", "README.md"} {
		scan(filepath.Join(root, f))
	}
	assert.Empty(t, missing, "PM_ names that config.Knobs lacks")
	for _, k := range Knobs {
		assert.NotEmpty(t, k.Doc, k.Env)
		if k.IsKnob() {
			assert.True(t, k.Flag != "" && k.Set != nil && k.Value != nil, "%s: a knob has a flag, a parser and a value", k.Env)
		}
	}
}
