package build

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// DeviceHash hashes what decides a cell's device code: the preprocessor
// lines before the reference (the layer's #defines and #includes) and the
// generated `namespace dev` block, comment lines and blank lines left out,
// plus the compiler flags that are not file names. Two cells of one
// toolchain with the same hash compile the same device code from the same
// text; the report shows them as one group. A #define that no code path of
// the kernel reads still counts (it cannot be told safely from the text), so
// the grouping errs towards keeping cells apart. Empty when the source has no
// `namespace dev` block.
func DeviceHash(src []byte, flags []string) string {
	var part [][]byte
	inDev := false
	found := false
	for _, line := range bytes.Split(src, []byte("\n")) {
		t := bytes.TrimSpace(line)
		switch {
		case len(t) == 0 || bytes.HasPrefix(t, []byte("//")):
			continue
		case !found && !inDev && bytes.HasPrefix(t, []byte("#")):
			part = append(part, t)
		case bytes.Equal(t, []byte("namespace dev {")):
			inDev, found = true, true
			part = append(part, t)
		case inDev:
			part = append(part, bytes.TrimRight(line, " \t"))
			if bytes.HasPrefix(t, []byte("}  // namespace dev")) {
				inDev = false
			}
		}
	}
	if !found {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(strings.Join(flags, "\x00")))
	h.Write([]byte{0})
	h.Write(bytes.Join(part, []byte("\n")))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// deviceFlags are the arguments of a compile command that shape the device
// code: everything but the compiler path, the output and the source file.
func deviceFlags(cmd []string) []string {
	var out []string
	for i := 1; i < len(cmd); i++ {
		switch {
		case cmd[i] == "-o":
			i++
		case i == len(cmd)-1, strings.HasPrefix(cmd[i], "-I"):
		default:
			out = append(out, cmd[i])
		}
	}
	return out
}
