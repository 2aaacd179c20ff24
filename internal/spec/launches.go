package spec

// Launches is the kind of a node that only the loop-nest mapper makes
// (internal/mapping): a kernel of several top-level loop nests that run one
// after the other, each a team launch of its own. Its body is the teams, in
// order; every backend that lowers a team lowers it, the renderer putting
// each launch in a block of its own (a launch returns before the next
// starts, or is ordered after it on one stream). It is not a pattern a
// description may write.
const Launches = "launches"
