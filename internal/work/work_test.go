package work

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A worker's CUDA_VISIBLE_DEVICES names its GPU by index or UUID; the index
// is looked up in nvidia-smi's list.
func TestUUIDOf(t *testing.T) {
	run := func(_ context.Context, name string, args ...string) ([]byte, error) {
		if name == "nvidia-smi" && !strings.Contains(strings.Join(args, " "), " -i") {
			return []byte("0, GPU-aaaa, 580.159.04, 81559, 9.0, NVIDIA H100 80GB HBM3\n1, GPU-bbbb, 580.159.04, 81559, 9.0, NVIDIA H100 80GB HBM3\n"), nil
		}
		return nil, errors.New("unexpected " + name + " " + strings.Join(args, " "))
	}
	ctx := context.Background()
	for visible, want := range map[string]string{"1": "GPU-bbbb", "0": "GPU-aaaa", "GPU-cccc": "GPU-cccc", "0,1": "", "": "", "7": ""} {
		if got := uuidOf(ctx, run, visible); got != want {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: %q, want %q", visible, got, want)
		}
	}
}
