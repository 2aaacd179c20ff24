package mapping

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// KernelLines counts the lines of code of a kernel's lowered function in a
// generated program (dev::<kernel>_kernel, from its signature to the brace
// that closes it at column 0): the lines that are neither blank nor only a
// comment. 004 compares the mapped code's lines with the hand-written
// code's (1.5-2x); counting the generated programs compares like with like,
// the same backend's lowering of each form.
func KernelLines(program []byte, kernel string) (int, error) {
	head := "void " + kernel + "_kernel("
	alt := "double " + kernel + "_kernel("
	sc := bufio.NewScanner(bytes.NewReader(program))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	in, n := false, 0
	for sc.Scan() {
		line := sc.Text()
		if !in {
			in = strings.HasPrefix(line, head) || strings.HasPrefix(line, alt)
			if in {
				n = 1
			}
			continue
		}
		if line == "}" {
			return n + 1, nil
		}
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "//") {
			n++
		}
	}
	return 0, fmt.Errorf("no function %s_kernel in the program", kernel)
}
