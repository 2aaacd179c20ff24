package build

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Kernel is one device kernel of a built cell as the manifest records it:
// what the occupancy rules need that only the build knows.
type Kernel struct {
	Name        string `json:"name"`
	Arch        string `json:"arch,omitempty"`
	Registers   int    `json:"registers"`
	SharedBytes int64  `json:"shared_bytes"` // static shared memory, the system's per-block reserve not included
	StackBytes  int64  `json:"stack_bytes,omitempty"`
}

// Resources is the kernel as the machine models take it.
func (k Kernel) Resources() machine.Resources {
	return machine.Resources{Kernel: k.Name, Arch: k.Arch, Registers: k.Registers, StaticSharedBytes: k.SharedBytes, StackBytes: k.StackBytes}
}

// cellTunables are the values a cell's program is generated with: the
// kernel's tunables, then those of the kernels it uses that it lacks (uses),
// each the variant's override where it has one.
func cellTunables(c *matrix.Cell, uses ...*spec.Kernel) map[string]int64 {
	out := map[string]int64{}
	if !c.Variant.Strategy.DeclaresTunables() {
		return out
	}
	for _, k := range append([]*spec.Kernel{c.Kernel}, uses...) {
		for _, t := range k.Tunables {
			if _, ok := out[t.Name]; ok {
				continue
			}
			out[t.Name] = t.OnItems(c.Variant.Strategy.Device, c.Variant.Strategy.ItemRegisters)
			if v, ok := c.Variant.Tunables[t.Name]; ok {
				out[t.Name] = v
			}
		}
	}
	return out
}

// teamBlocks are the threads per team (team_size x vector) of each team
// pattern of the cell's kernel and of the kernels it uses (kernels resolves
// them), at the tunables it is generated with, sorted and once each: what a
// machine model's occupancy default sizes teams by. None where a block is no
// constant of the tunables.
func teamBlocks(c *matrix.Cell, kernels map[string]*spec.Kernel) []int64 {
	uses := c.Kernel.Used(kernels)
	env := spec.Env{}
	for name, v := range cellTunables(c, uses...) {
		env[name] = spec.Value{I: v, Int: true}
	}
	var out []int64
	for _, k := range append([]*spec.Kernel{c.Kernel}, uses...) {
		for _, t := range k.Pattern.Teams() {
			b, err := t.Block(env)
			if err != nil {
				return nil
			}
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	slices.Sort(out)
	return out
}

// kernelResources reads the registers and static shared memory of each
// device kernel of an NVIDIA GPU binary with the toolchain's cuobjdump: an
// LLVM offload binary's image is taken out of its .llvm.offloading section
// first (cuobjdump does not read that wrapper), an nvcc fat binary is read
// whole. A missing tool or an unreadable binary is a note, not a failure:
// the cell then has no model defaults.
func kernelResources(ctx context.Context, bin string, t *toolchain.Toolchain) ([]Kernel, string) {
	if !strings.HasPrefix(t.Target, "sm_") {
		return nil, ""
	}
	tool := cuobjdump(t)
	if tool == "" {
		return nil, "no cuobjdump next to the toolchain, its ptxas or on PATH: kernel resources not recorded"
	}
	target := bin
	images, err := offloadImages(bin)
	if err != nil {
		return nil, fmt.Sprintf("kernel resources not recorded: %v", err)
	}
	if len(images) > 0 {
		img := images[0]
		for _, i := range images {
			if i.Arch == t.Target {
				img = i
			}
		}
		f, err := os.CreateTemp("", "portmatrix-*.cubin")
		if err != nil {
			return nil, err.Error()
		}
		defer os.Remove(f.Name())
		_, err = f.Write(img.Data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err.Error()
		}
		target = f.Name()
	}
	out, err := exec.CommandContext(ctx, tool, "-res-usage", target).CombinedOutput()
	if err != nil {
		return nil, fmt.Sprintf("%s -res-usage: %v: %s", tool, err, firstLine(out))
	}
	var ks []Kernel
	for _, r := range machine.ParseResUsage(string(out), t.Target) {
		ks = append(ks, Kernel{Name: r.Kernel, Arch: r.Arch, Registers: r.Registers, SharedBytes: r.StaticSharedBytes, StackBytes: r.StackBytes})
	}
	if len(ks) == 0 {
		return nil, fmt.Sprintf("%s -res-usage listed no kernel", tool)
	}
	return ks, ""
}

// cuobjdump finds the toolchain's cuobjdump: beside its compiler (nvcc),
// beside the ptxas on PATH (LLVM offload compiles with it), else on PATH.
func cuobjdump(t *toolchain.Toolchain) string {
	var dirs []string
	if t.Path != "" {
		dirs = append(dirs, filepath.Dir(t.Path))
		if real, err := filepath.EvalSymlinks(t.Path); err == nil {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "cuobjdump")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	p, _ := exec.LookPath("cuobjdump")
	return p
}

// offloadImage is one device image of an LLVM offload binary.
type offloadImage struct {
	Triple, Arch string
	Data         []byte
}

// offloadMagic starts an LLVM offload binary (llvm/Object/OffloadBinary.h).
var offloadMagic = []byte{0x10, 0xFF, 0x10, 0xAD}

// offloadImages reads the device images of bin's .llvm.offloading section
// (none when bin has no such section, as an nvcc binary). The section holds
// offload binaries back to back, each a header (magic, version, size, entry
// offset, entry size) and an entry (image kind, offload kind, flags, string
// table offset and count, image offset and size), offsets from the header;
// the string table's key/value pairs name the triple and the arch.
func offloadImages(bin string) ([]offloadImage, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := f.Section(".llvm.offloading")
	if s == nil {
		return nil, nil
	}
	data, err := s.Data()
	if err != nil {
		return nil, err
	}
	var out []offloadImage
	le := binary.LittleEndian
	for off := 0; off+32 <= len(data); {
		b := data[off:]
		if !bytes.Equal(b[:4], offloadMagic) {
			return nil, errors.New(".llvm.offloading: no offload binary magic")
		}
		size, entry := le.Uint64(b[8:]), le.Uint64(b[16:])
		if size < 32 || size > uint64(len(b)) || entry+40 > size {
			return nil, errors.New(".llvm.offloading: truncated offload binary")
		}
		e := b[entry:]
		strOff, nStr, imgOff, imgSize := le.Uint64(e[8:]), le.Uint64(e[16:]), le.Uint64(e[24:]), le.Uint64(e[32:])
		if imgOff+imgSize > size || strOff+16*nStr > size {
			return nil, errors.New(".llvm.offloading: an offset outside its offload binary")
		}
		img := offloadImage{Data: b[imgOff : imgOff+imgSize]}
		for i := uint64(0); i < nStr; i++ {
			kv := b[strOff+16*i:]
			key, val := cString(b, le.Uint64(kv)), cString(b, le.Uint64(kv[8:]))
			switch key {
			case "triple":
				img.Triple = val
			case "arch":
				img.Arch = val
			}
		}
		if strings.HasPrefix(img.Triple, "nvptx") {
			out = append(out, img)
		}
		// Binaries are aligned to 8 bytes in the section.
		off += int((size + 7) &^ 7)
	}
	return out, nil
}

func cString(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return ""
	}
	if i := bytes.IndexByte(b[off:], 0); i >= 0 {
		return string(b[off : off+uint64(i)])
	}
	return ""
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
