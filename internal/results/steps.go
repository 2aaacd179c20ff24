package results

// Steps is the number of steps a composite that repeats a step ran per call
// (TestSNAP's snap_step): the calls of its sections, each kernel called once
// a step; the most of any section, 0 without sections.
func (r Record) Steps() int {
	n := 0
	for _, s := range r.Sections {
		n = max(n, s.Calls)
	}
	return n
}

// PerCall is a section's seconds per call (0 when it has no calls).
func (s Section) PerCall() float64 {
	if s.Calls <= 0 {
		return 0
	}
	return s.Seconds / float64(s.Calls)
}
