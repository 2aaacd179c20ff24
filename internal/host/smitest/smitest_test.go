package smitest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/portmatrix/portmatrix/internal/host"
)

// The fake answers host.QuerySMI as nvidia-smi does: every GPU, one by -i
// (index or UUID), and, as an old driver, the query without compute_cap.
func TestScriptAnswersQuerySMI(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh not found")
	}
	gpus := []host.SMI{
		{Index: "0", UUID: "GPU-aaaa", Name: "NVIDIA H100 80GB HBM3", Driver: "580.159.04", MemoryMiB: 81559, ComputeCap: "9.0"},
		{Index: "1", UUID: "GPU-bbbb", Name: "NVIDIA H200, rev 'b'", Driver: "580.159.04", MemoryMiB: 143771, ComputeCap: "9.0"},
	}
	ctx := context.Background()
	for _, old := range []bool{false, true} {
		dir := t.TempDir()
		Install(t, dir, old, gpus...)
		t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		want := append([]host.SMI(nil), gpus...)
		if old {
			want[0].ComputeCap, want[1].ComputeCap = "", ""
		}
		rows, err := host.QuerySMI(ctx, host.Exec, "")
		assert.NoError(t, err, "old %v", old)
		assert.Equal(t, want, rows, "old %v", old)
		rows, err = host.QuerySMI(ctx, host.Exec, "GPU-bbbb")
		assert.NoError(t, err)
		assert.Equal(t, want[1:], rows, "old %v", old)
		rows, err = host.QuerySMI(ctx, host.Exec, "0")
		assert.NoError(t, err)
		assert.Equal(t, want[:1], rows, "old %v", old)
		_, err = host.QuerySMI(ctx, host.Exec, "7")
		assert.Error(t, err, "no GPU 7")
	}
}
