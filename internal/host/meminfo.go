package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemInfo is the host's memory as /proc/meminfo gives it, in bytes.
type MemInfo struct {
	Total, Available int64
}

// MemInfoFile is where the kernel gives it.
const MemInfoFile = "/proc/meminfo"

// ReadMemInfo reads MemTotal and MemAvailable of file (MemInfoFile).
func ReadMemInfo(file string) (MemInfo, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return MemInfo{}, err
	}
	var m MemInfo
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			m.Total = kb << 10
		case "MemAvailable:":
			m.Available = kb << 10
		}
	}
	if m.Total == 0 {
		return m, fmt.Errorf("%s: no MemTotal", file)
	}
	if m.Available == 0 {
		m.Available = m.Total
	}
	return m, nil
}
