package depend

import (
	"fmt"
	"io"
	"strings"

	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// maxReasons is how many dependences explain prints per verdict.
const maxReasons = 3

// Explain prints each loop's verdict with its reason (the dependences that
// keep it sequential), then each fusion and interchange of the program.
func (r *Result) Explain(w io.Writer) {
	for _, v := range r.Loops {
		fmt.Fprintf(w, "loop %s (%s): ", v.Loop.ID, v.Loop.Pos)
		switch {
		case v.Reduction:
			fmt.Fprintf(w, "parallel with reduction: %s\n", reductionTargets(v))
		case v.Parallel:
			fmt.Fprintln(w, "parallel: carries no dependence")
		default:
			var blocking []*Dep
			for _, d := range v.Carried {
				if !d.Reduction || usesIndex(d.Src, v.Loop) || usesIndex(d.Sink, v.Loop) {
					blocking = append(blocking, d)
				}
			}
			fmt.Fprintf(w, "sequential: carries %s\n", count(len(blocking), "dependence"))
			reasons(w, blocking)
		}
	}
	for _, f := range r.Fusions {
		fmt.Fprintf(w, "fuse %s and %s: ", f.First.ID, f.Second.ID)
		bounds := ""
		if !f.SameBounds {
			bounds = " (bounds differ: the fused loop needs guards)"
		}
		if f.Legal {
			fmt.Fprintf(w, "legal%s\n", bounds)
			continue
		}
		fmt.Fprintf(w, "illegal: %s would run backward%s\n", count(len(f.Preventing), "dependence"), bounds)
		reasons(w, f.Preventing)
	}
	for _, x := range r.Interchanges {
		fmt.Fprintf(w, "interchange %s and %s: ", x.Outer.ID, x.Inner.ID)
		if x.Legal {
			fmt.Fprintln(w, "legal")
			continue
		}
		fmt.Fprintf(w, "illegal: %s would turn negative\n", count(len(x.Preventing), "direction vector"))
		reasons(w, x.Preventing)
	}
}

func reasons(w io.Writer, deps []*Dep) {
	for i, d := range deps {
		if i == maxReasons {
			fmt.Fprintf(w, "  and %d more\n", len(deps)-maxReasons)
			break
		}
		fmt.Fprintf(w, "  %s\n", d)
	}
}

func reductionTargets(v LoopVerdict) string {
	var out []string
	seen := map[string]bool{}
	for _, d := range v.Carried {
		s := fmt.Sprintf("%s into %s (%s, %s)", d.Src.Op, d.Src.Text, d.Src.Stmt.Name, d.Src.Pos)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

// String is the dependence in one line: kind, source and sink with their
// statements and positions, direction and distance vectors.
func (d *Dep) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s (%s, %s) -> %s %s (%s, %s)", d.Kind, d.Src.Kind(), d.Src.Text, d.Src.Stmt.Name, d.Src.Pos,
		d.Sink.Kind(), d.Sink.Text, d.Sink.Stmt.Name, d.Sink.Pos)
	if len(d.Dirs) == 0 {
		b.WriteString(", loop-independent")
		return b.String()
	}
	dirs := make([]string, len(d.Dirs))
	dists := make([]string, len(d.Dirs))
	for i := range d.Dirs {
		dirs[i] = d.Dirs[i].String()
		dists[i] = "?"
		if d.Dists[i].Known {
			dists[i] = fmt.Sprint(d.Dists[i].Value)
		}
	}
	fmt.Fprintf(&b, ", loops (%s) direction (%s) distance (%s)", loopIDs(d.Loops), strings.Join(dirs, ","), strings.Join(dists, ","))
	if d.Reduction {
		b.WriteString(", reduction")
	}
	return b.String()
}

func loopIDs(loops []*loopnest.Loop) string {
	ids := make([]string, len(loops))
	for i, l := range loops {
		ids[i] = l.ID
	}
	return strings.Join(ids, ",")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
