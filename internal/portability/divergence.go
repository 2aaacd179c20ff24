package portability

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Line is one line of code by its text (spaces collapsed) and which
// occurrence of that text in its program it is. Two platforms' programs
// share a line when they hold the same text: programs of one strategy's
// variants are taken as one source whose differing lines sit in
// per-platform branches (the variants differ by knobs, e.g. one #define).
type Line struct {
	Text string
	Nth  int
}

// Divergence is the P3 code divergence (Harrell and Kitson, "Effective
// Performance Portability", P3HPC 2018) of the code each platform needs:
// the average over every pair of platforms of the Jaccard distance of
// their line sets, 1 - |c_i ∩ c_j| / |c_i ∪ c_j|. 0 for fewer than two
// platforms (the P3 Analysis Library's convention), and for one source
// that serves every platform.
func Divergence(code map[string][]Line) float64 {
	var platforms []string
	sets := map[string]map[Line]bool{}
	for p, lines := range code {
		platforms = append(platforms, p)
		sets[p] = map[Line]bool{}
		for _, l := range lines {
			sets[p][l] = true
		}
	}
	sort.Strings(platforms)
	sum, pairs := 0.0, 0
	for i, a := range platforms {
		for _, b := range platforms[i+1:] {
			sum += jaccardDistance(sets[a], sets[b])
			pairs++
		}
	}
	if pairs == 0 {
		return 0
	}
	return sum / float64(pairs)
}

func jaccardDistance(a, b map[Line]bool) float64 {
	both := 0
	for l := range a {
		if b[l] {
			both++
		}
	}
	union := len(a) + len(b) - both
	if union == 0 {
		return 0
	}
	return 1 - float64(both)/float64(union)
}

// SourceLines is the code lines of a program: every line but blank ones
// and those holding only a // comment (the generated header names the
// variant).
func SourceLines(src string) []Line {
	var out []Line
	seen := map[string]int{}
	for _, l := range strings.Split(src, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		seen[l]++
		out = append(out, Line{l, seen[l]})
	}
	return out
}

// Program is the generated program of a kernel and variant under
// generated: generated/<kernel>/<variant>.cpp, or .cu for CUDA.
func Program(generated, kernel, variant string) (string, error) {
	for _, ext := range []string{".cpp", ".cu"} {
		p := filepath.Join(generated, kernel, variant+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &fs.PathError{Op: "find", Path: filepath.Join(generated, kernel, variant+".{cpp,cu}"), Err: fs.ErrNotExist}
}

// divergences sets the code divergence of each score: over the platforms
// of the set it ran on, the program of the variant it ran there (a
// variant's one program everywhere: 0; a strategy's chosen variants).
// Scores whose programs are missing keep none; the first error is
// returned.
func divergences(scores []Score, generated string) error {
	cache := map[string][]Line{}
	var first error
	for i := range scores {
		s := &scores[i]
		code := map[string][]Line{}
		ok := true
		for _, o := range s.On {
			if !o.Runs() {
				continue
			}
			lines, err := programLines(generated, s.Problem.Kernel, o.Variant, cache)
			if err != nil {
				if first == nil {
					first = err
				}
				ok = false
				break
			}
			code[o.Platform] = lines
		}
		if ok {
			d := Divergence(code)
			s.Divergence = &d
		}
	}
	return first
}

func programLines(generated, kernel, variant string, cache map[string][]Line) ([]Line, error) {
	key := kernel + "/" + variant
	if l, ok := cache[key]; ok {
		return l, nil
	}
	path, err := Program(generated, kernel, variant)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	l := SourceLines(string(data))
	cache[key] = l
	return l, nil
}
