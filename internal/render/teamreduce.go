package render

import (
	"fmt"

	"github.com/portmatrix/portmatrix/internal/spec"
)

// SumSlot is the team's slot of a team_thread_reduce (spec.TeamSumView).
func (n *Node) SumSlot() string { return spec.TeamSumView + "[0]" }

// leagueSum names the device double the teams of a league reduction add to.
const leagueSum = "pm_league_sum"

// leagueReduce wraps a team's launch: the league's sum starts at zero in
// device memory kept across calls, every team adds to it (league_add), and
// the kernel returns it. The same launch then serves every backend that
// lowers a team and an atomic add.
func leagueReduce(acc, launch string) string {
	return fmt.Sprintf(`static double* const pm_league_slot = static_cast<double*>(pm::device::alloc(sizeof(double)));
double* const %[1]s = pm_league_slot;  // a local, so that device code captures it
{
  const double pm_zero = 0;
  pm::device::to_device(%[1]s, &pm_zero, sizeof pm_zero);
}
%[2]s
double %[3]s = 0;
pm::device::to_host(&%[3]s, %[1]s, sizeof %[3]s);
return %[3]s;`, leagueSum, launch, acc)
}

// leagueAdd lowers league_add as Kokkos' single(PerTeam) of an atomic add:
// a one-trip team-thread loop (one team thread) around an atomic_add (once
// per team thread) into the league's sum.
func (n *Node) leagueAdd() (string, error) {
	add := &spec.Node{Kind: "atomic_add", Target: leagueSum + "[0]", Value: n.Value, Pos: n.Pos}
	once := &spec.Node{Kind: "team_thread_for", Index: "pm_once", Begin: "0", End: "1", Body: []*spec.Node{add}, Pos: n.Pos}
	v := n.f.node(once, n.Depth, n.parent)
	v.Parent = n.Parent
	return v.Render()
}

// IntoPtr is the device address a range_reduce with into stores its sum at:
// "s + (k)" for into: s[k].
func (n *Node) IntoPtr() string {
	array, index := n.IntoArray()
	return fmt.Sprintf("%s + (%s)", array, index)
}

// asyncDefine is the define of the -async strategies (pm/device_omptarget.hpp).
const asyncDefine = "PM_OMP_ASYNC"

// Nowait is what a target region whose results stay on the device adds under
// an -async strategy: no wait, ordered after the launches before it on one
// stream (PM_OMP_NOWAIT, pm/device_omptarget.hpp). "" elsewhere.
func (f *Func) Nowait() string {
	if f.p.Has(asyncDefine) {
		return " PM_OMP_NOWAIT"
	}
	return ""
}

// Ordered is what a target region whose result the host reads adds under an
// -async strategy: the stream's dependence alone, so that it starts after the
// launches in flight and the host waits for it (PM_OMP_ORDERED). "" elsewhere.
func (f *Func) Ordered() string {
	if f.p.Has(asyncDefine) {
		return " PM_OMP_ORDERED"
	}
	return ""
}
