package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func fake(outputs map[string]string) Runner {
	return func(_ context.Context, name string, args ...string) ([]byte, error) {
		if out, ok := outputs[name]; ok {
			return []byte(out), nil
		}
		return nil, errors.New("not found: " + name + " " + strings.Join(args, " "))
	}
}

func TestProbeNvidia(t *testing.T) {
	info := Probe(context.Background(), ".", "", fake(map[string]string{
		"nvidia-smi": "NVIDIA H200, 580.159.04, 143771, GPU-1234\n",
		"git":        "abc\n",
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
