package diag

import "testing"

func TestSuggest(t *testing.T) {
	known := []string{"axpby", "dot", "spmv", "cg-solve", "gcc-host", "clang19-offload", "llvm"}
	for _, c := range []struct{ in, want string }{
		{"axbpy", "axpby"}, {"dto", "dot"}, {"spvm", "spmv"}, {"cgsolve", "cg-solve"},
		{"gcc_host", "gcc-host"}, {"clang19-ofload", "clang19-offload"}, {"stream", ""}, {"xyz", ""}, {"icc", ""}, {"lvm", "llvm"}, {"DOT", "dot"},
	} {
		if got := Suggest(c.in, known); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
