package machine

import (
	"bufio"
	"regexp"
	"strconv"
	"strings"
)

// Resources is what the compiler reports of one kernel: the occupancy
// rules' inputs that only a build knows.
type Resources struct {
	Kernel            string // mangled entry name (__omp_offloading_..., _Z...)
	Arch              string // sm_90
	Registers         int
	StaticSharedBytes int64
	StackBytes        int64
	SpillStoreBytes   int64
	SpillLoadBytes    int64
}

// Launch is the launch of these resources with threads per block and
// dynamic shared memory.
func (r Resources) Launch(threads int, dynamicShared int64) Launch {
	return Launch{BlockThreads: threads, Registers: r.Registers, StaticSharedBytes: r.StaticSharedBytes, DynamicSharedBytes: dynamicShared}
}

var (
	ptxasEntry = regexp.MustCompile(`Compiling entry function '([^']+)' for '([^']+)'`)
	ptxasUsed  = regexp.MustCompile(`Used (\d+) registers`)
	ptxasSmem  = regexp.MustCompile(`(\d+) bytes smem`)
	ptxasFrame = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
)

// ParsePtxasInfo reads ptxas' verbose output (nvcc -Xptxas -v, clang
// -Xcuda-ptxas -v, or a build log holding it) into one Resources per entry
// function, in the order ptxas compiled them.
func ParsePtxasInfo(log string) []Resources {
	var out []Resources
	cur := -1
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line := sc.Text()
		if m := ptxasEntry.FindStringSubmatch(line); m != nil {
			out = append(out, Resources{Kernel: m[1], Arch: m[2]})
			cur = len(out) - 1
			continue
		}
		if cur < 0 {
			continue
		}
		r := &out[cur]
		if m := ptxasFrame.FindStringSubmatch(line); m != nil {
			r.StackBytes, r.SpillStoreBytes, r.SpillLoadBytes = atoi64(m[1]), atoi64(m[2]), atoi64(m[3])
		}
		if m := ptxasUsed.FindStringSubmatch(line); m != nil {
			r.Registers = int(atoi64(m[1]))
			if s := ptxasSmem.FindStringSubmatch(line); s != nil {
				r.StaticSharedBytes = atoi64(s[1])
			}
		}
	}
	return out
}

func atoi64(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}
