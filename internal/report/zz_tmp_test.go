package report

import (
	"os"
	"testing"
)

func TestTmpGenerate(t *testing.T) {
	os.RemoveAll("/tmp/rep")
	dir := "/tmp/rep/gpu"
	writeRun(t, dir, gpuRun())
	_, err := Generate(dir, Options{SpecDir: specDir, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	dir = "/tmp/rep/cpu"
	writeRun(t, dir, cpuRun())
	_, err = Generate(dir, Options{SpecDir: specDir, Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
}
