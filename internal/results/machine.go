package results

import (
	"strconv"
	"strings"
)

// Host is the machine that ran (run.json "host"; internal/host probes it).
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
}

// MiB is a memory size; it reads a number or a quoted number.
type MiB int

// UnmarshalJSON accepts 81559 and "81559".
func (m *MiB) UnmarshalJSON(b []byte) error {
	v, err := strconv.Atoi(strings.Trim(string(b), `"`))
	*m = MiB(v)
	return err
}

// GPU is one device of the host.
type GPU struct {
	Name      string `json:"name"`
	Driver    string `json:"driver"`
	MemoryMiB MiB    `json:"memory_mib"`
	UUID      string `json:"uuid,omitempty"`
	Vendor    string `json:"vendor,omitempty"` // nvidia or amd
}
