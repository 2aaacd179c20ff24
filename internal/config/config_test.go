package config

import (
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
