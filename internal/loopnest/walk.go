package loopnest

// Instance is one execution of a statement: its iteration (the values of
// its enclosing loops, outermost first).
type Instance struct {
	Stmt *Stmt
	Iter []int64
}

// Walk executes p sequentially for the parameter values (every parameter
// needs one) and calls visit for each statement instance in program order.
// visit may keep Iter only by copying it.
func (p *Program) Walk(params map[string]int64, visit func(Instance)) {
	env := map[string]int64{}
	for k, v := range params {
		env[k] = v
	}
	var iter []int64
	var run func(body []Node)
	run = func(body []Node) {
		for _, n := range body {
			if n.Stmt != nil {
				if n.Stmt.Runs(env) {
					visit(Instance{Stmt: n.Stmt, Iter: iter})
				}
				continue
			}
			l := n.Loop
			lo, hi := l.Range(env)
			for v := lo; v < hi; v++ {
				env[l.Index] = v
				iter = append(iter, v)
				run(l.Body)
				iter = iter[:len(iter)-1]
			}
			delete(env, l.Index)
		}
	}
	run(p.Body)
}

// Range is [max(Lower), min(Upper)) for the values of the parameters and
// enclosing indices in env.
func (l *Loop) Range(env map[string]int64) (lo, hi int64) {
	for i, b := range l.Lower {
		if v := b.Eval(env); i == 0 || v > lo {
			lo = v
		}
	}
	for i, b := range l.Upper {
		if v := b.Eval(env); i == 0 || v < hi {
			hi = v
		}
	}
	return lo, hi
}

// Address is the element an access touches in an instance.
func (a *Access) Address(params map[string]int64, iter []int64) []int64 {
	env := make(map[string]int64, len(params)+len(iter))
	for k, v := range params {
		env[k] = v
	}
	for i, l := range a.Stmt.Loops {
		env[l.Index] = iter[i]
	}
	out := make([]int64, len(a.Subs))
	for i, s := range a.Subs {
		out[i] = s.Eval(env)
	}
	return out
}
