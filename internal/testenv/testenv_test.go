package testenv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a test that notes its skip instead of stopping.
type recorder struct {
	testing.TB
	skip string
}

func (r *recorder) Helper()          {}
func (r *recorder) Skip(args ...any) { r.skip = fmt.Sprint(args...) }

// Long skips unless the switch is exactly 1, and the skip names the switch.
func TestLongSkipsNamingTheSwitch(t *testing.T) {
	for _, v := range []string{"", "0", "yes", "true"} {
		t.Setenv(LongVar, v)
		r := &recorder{TB: t}
		Long(r)
		assert.False(t, LongEnabled(), "%s=%q", LongVar, v)
		assert.Equal(t, "long end-to-end test: PM_LONG_TESTS=1 runs it", r.skip, "%s=%q", LongVar, v)
	}
	t.Setenv(LongVar, "1")
	r := &recorder{TB: t}
	Long(r)
	assert.True(t, LongEnabled())
	assert.Empty(t, r.skip)
}
