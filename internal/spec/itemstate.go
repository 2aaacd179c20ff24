package spec

// ItemState is the kind of a node that only the loop-nest mapper makes
// (internal/mapping): state private to each work item of a team (a team
// thread's vector lane), such as a staged multiply's micro-tile of the
// target, that lives across the team's barriers. It stands in a team's
// body in two forms, and the renderer lowers one of them (ItemForm):
//
//   - Body: the state in the work item's registers, declared once at the
//     top of the team body and used in every team-thread and vector loop
//     over the work items. It is right only where a work item is one
//     hardware thread for the whole team body and the team barrier is a
//     real barrier (a CUDA thread of Kokkos CUDA's team, a kernel-mode
//     OpenMP thread): a strategy says so with item_registers: true
//     (variants/strategies.yaml, matrix.Strategy.ItemRegisters).
//   - Else: the state in the team's scratch views marked Item (a slot per
//     work item), read into registers and written back around each use:
//     every other strategy, the safe default (on the host backends a
//     team's threads and lanes run one after the other in one thread, so
//     a value of the team body is one per team; an OpenMP team's vector
//     loop is a simd loop in one thread).
//
// It is not a pattern a description may write.
const ItemState = "item_state"

// ItemForm is the tree with each item_state node replaced by the form a
// strategy takes (registers: Body, else Else), and, in the register form,
// the teams without their Item scratch views. n is not changed; a tree
// without item_state is returned as it is.
func (n *Node) ItemForm(registers bool) *Node {
	if n == nil || !n.hasItemState() {
		return n
	}
	c := *n
	if c.Kind == "team" && registers {
		c.Scratch = nil
		for _, s := range n.Scratch {
			if !s.Item {
				c.Scratch = append(c.Scratch, s)
			}
		}
	}
	c.Body = nil
	for _, b := range n.Body {
		if b.Kind != ItemState {
			c.Body = append(c.Body, b.ItemForm(registers))
			continue
		}
		form := b.Else
		if registers {
			form = b.Body
		}
		for _, x := range form {
			c.Body = append(c.Body, x.ItemForm(registers))
		}
	}
	return &c
}

func (n *Node) hasItemState() bool {
	if n.Kind == ItemState {
		return true
	}
	for _, b := range n.Body {
		if b.hasItemState() {
			return true
		}
	}
	return false
}
