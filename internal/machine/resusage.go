package machine

import (
	"bufio"
	"regexp"
	"strconv"
	"strings"
)

var (
	resArch     = regexp.MustCompile(`^arch = (sm_\d+[a-z]?)`)
	resFunction = regexp.MustCompile(`^Function (.+):$`)
	resField    = regexp.MustCompile(`([A-Z]+(?:\[\d+\])?):(\d+)`)
)

// reservedInWindow is the shared memory ptxas places at the start of every
// kernel's shared window on sm_90 and later (the system's per-block reserve,
// shared_memory_reserved_per_block): cuobjdump's SHARED counts it there,
// ptxas -v's smem does not (the same __shared__ double[64] kernel, nvcc
// 11.8: 1536 against 512 for sm_90, 512 and 512 for sm_80). The occupancy
// rules add the reserve themselves, so it is taken off.
const reservedInWindow = 1024

// ParseResUsage reads cuobjdump -res-usage output into one Resources per
// kernel, in the order printed. The architecture comes from the output's
// "arch = sm_90" lines (a fat binary's ELF sections) or, for a bare cubin
// that prints none, from arch. STACK is the stack frame; LOCAL (spills and
// local arrays) is not split into stores and loads there.
func ParseResUsage(out, arch string) []Resources {
	var res []Resources
	cur := arch
	ptx := false
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	pending := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Fatbin "):
			ptx = strings.HasPrefix(line, "Fatbin ptx")
		case resArch.MatchString(line):
			cur = resArch.FindStringSubmatch(line)[1]
		case ptx:
		case resFunction.MatchString(line):
			pending = resFunction.FindStringSubmatch(line)[1]
		case pending != "" && strings.HasPrefix(line, "REG:"):
			r := Resources{Kernel: pending, Arch: cur}
			for _, f := range resField.FindAllStringSubmatch(line, -1) {
				v, _ := strconv.ParseInt(f[2], 10, 64)
				switch f[1] {
				case "REG":
					r.Registers = int(v)
				case "STACK":
					r.StackBytes = v
				case "SHARED":
					r.StaticSharedBytes = v
				}
			}
			if archNumber(cur) >= 90 && r.StaticSharedBytes >= reservedInWindow {
				r.StaticSharedBytes -= reservedInWindow
			}
			res = append(res, r)
			pending = ""
		}
	}
	return res
}

// archNumber is 90 for sm_90 and sm_90a, 0 when arch is no sm_ name.
func archNumber(arch string) int {
	s := strings.TrimPrefix(arch, "sm_")
	if s == arch {
		return 0
	}
	s = strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyz")
	n, _ := strconv.Atoi(s)
	return n
}
