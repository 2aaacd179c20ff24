package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fake answers a command from a table keyed by its whole line, else by its
// name alone.
func fake(outputs map[string]string) Runner {
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		line := strings.Join(append([]string{name}, args...), " ")
		if out, ok := outputs[line]; ok {
			return []byte(out), nil
		}
		if out, ok := outputs[name]; ok {
			return []byte(out), nil
		}
		return nil, errors.New("not found: " + line)
	}
}

// The query QuerySMI asks, and the same without compute_cap (older drivers).
const (
	smiQuery    = "nvidia-smi --query-gpu=index,uuid,driver_version,memory.total,compute_cap,name --format=csv,noheader,nounits"
	smiQueryOld = "nvidia-smi --query-gpu=index,uuid,driver_version,memory.total,name --format=csv,noheader,nounits"
)

func TestProbeNvidia(t *testing.T) {
	info := Probe(context.Background(), ".", "", fake(map[string]string{
		smiQuery: "0, GPU-1234, 580.159.04, 143771, 9.0, NVIDIA H200\n",
		"git":    "abc\n",
	}))
	assert.Equal(t, []GPU{{Name: "NVIDIA H200", Driver: "580.159.04", MemoryMiB: 143771, UUID: "GPU-1234", Vendor: "nvidia"}}, info.GPUs)
	assert.Equal(t, "NVIDIA H200", info.GPUName())
	assert.Equal(t, "GPU-1234", info.GPUUUID())
	assert.Equal(t, "abc", info.Git.Commit)
	assert.True(t, info.Git.Dirty) // the fake answers git status with "abc" too
}

func TestProbeAMD(t *testing.T) {
	info := Probe(context.Background(), ".", "", fake(map[string]string{
		"rocm-smi": `{"card0": {"Card series": "AMD Instinct MI250X", "Unique ID": "0x1a", "VRAM Total Memory (B)": "68702699520"}, "system": {"Driver version": "6.3.6"}}`,
	}))
	assert.Equal(t, []GPU{{Name: "AMD Instinct MI250X", Driver: "6.3.6", MemoryMiB: 65520, UUID: "0x1a", Vendor: "amd"}}, info.GPUs)
	assert.Equal(t, Git{}, info.Git)
}

func TestProbeNone(t *testing.T) {
	info := Probe(context.Background(), ".", "feed", fake(nil))
	assert.Empty(t, info.GPUs)
	assert.Equal(t, Git{Commit: "feed"}, info.Git)
	assert.NotEmpty(t, info.Machine.OS)
}

func TestQuerySMI(t *testing.T) {
	ctx := context.Background()
	h100 := SMI{Index: "0", UUID: "GPU-aaaa", Name: "NVIDIA H100 80GB HBM3", Driver: "580.159.04", MemoryMiB: 81559, ComputeCap: "9.0"}
	odd := SMI{Index: "1", UUID: "GPU-bbbb", Name: "Tesla V100-SXM2-16GB, rev b", Driver: "580.159.04", MemoryMiB: 16384, ComputeCap: "7.0"}
	first, second := "0, GPU-aaaa, 580.159.04, 81559, 9.0, NVIDIA H100 80GB HBM3\n", "1, GPU-bbbb, 580.159.04, 16384, 7.0, Tesla V100-SXM2-16GB, rev b\n"
	two := first + second

	rows, err := QuerySMI(ctx, fake(map[string]string{smiQuery: two}), "")
	assert.NoError(t, err)
	assert.Equal(t, []SMI{h100, odd}, rows) // a comma in a name stays in it
	assert.Equal(t, "sm_90", rows[0].Arch())

	// -i asks for one GPU, by index or UUID.
	rows, err = QuerySMI(ctx, fake(map[string]string{smiQuery + " -i 1": second}), "1")
	assert.NoError(t, err)
	assert.Equal(t, []SMI{odd}, rows)

	// A driver before compute_cap refuses the query; the one without it answers.
	old := h100
	old.ComputeCap, old.Driver = "", "470.256.02"
	rows, err = QuerySMI(ctx, fake(map[string]string{smiQueryOld + " -i GPU-aaaa": "0, GPU-aaaa, 470.256.02, 81559, NVIDIA H100 80GB HBM3\n"}), "GPU-aaaa")
	assert.NoError(t, err)
	assert.Equal(t, []SMI{old}, rows)
	assert.Equal(t, "", rows[0].Arch())

	// A line it cannot read is an error; the others are kept.
	rows, err = QuerySMI(ctx, fake(map[string]string{smiQuery: "garbage\n" + two}), "")
	assert.ErrorContains(t, err, `cannot read "garbage"`)
	assert.Len(t, rows, 2)

	// No nvidia-smi: both queries' errors.
	_, err = QuerySMI(ctx, fake(nil), "")
	assert.ErrorContains(t, err, "compute_cap")
	assert.ErrorContains(t, err, smiQueryOld[len("nvidia-smi "):])
}
