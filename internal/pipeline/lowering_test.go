package pipeline

import (
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// lowering stands for mapping.LoadKernels in this package's tests: the tests
// load trees again and again (the bad-input corpus, case after case), and
// lowering the loop kernels is most of a Load's time (under -race, seconds).
var lowering = &loweringMemo{trees: map[string][]*spec.Kernel{}, lowered: map[string]*spec.Kernel{},
	prints: map[*spec.Kernel][sha256.Size]byte{}}

func TestMain(m *testing.M) {
	loadKernels, probe = lowering.load, probes.probe
	code := m.Run()
	if changed := lowering.changed(); len(changed) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the kernels Load shared were changed after their lowering: %v\n", changed)
		code = 1
	}
	os.Exit(code)
}

// loweringMemo keeps what mapping.LoadKernels gave for a tree, known by its
// path and the names and bytes of the files LoadKernels reads (treeKey: the
// kernel descriptions and the machine models), and what mapping.LowerLoops
// gave for each kernel written as loops, known by a digest of the kernel as
// read (fingerprint: its file, positions, loops and variation) and of the
// machine models: a test that edits one kernel reads the tree again and
// lowers that one kernel. Only a load without error is kept. The kernels
// are shared, not copied: once the tests have run, TestMain checks that
// nothing changed them since they were lowered, and unchanged that a fresh
// load of a tree gives what the kept ones give.
type loweringMemo struct {
	mu      sync.Mutex
	trees   map[string][]*spec.Kernel
	lowered map[string]*spec.Kernel
	prints  map[*spec.Kernel][sha256.Size]byte // each kept kernel's fingerprint when it was kept
}

func (m *loweringMemo) load(root string) ([]*spec.Kernel, error) {
	tree, err := treeKey(root, layout.Kernels, machine.Dir)
	if err != nil {
		return mapping.LoadKernels(root)
	}
	tree = root + " " + tree
	m.mu.Lock()
	defer m.mu.Unlock()
	if k, ok := m.trees[tree]; ok {
		return slices.Clone(k), nil
	}
	kernels, err := spec.LoadDir(layout.Path(root, layout.Kernels))
	if err != nil {
		return kernels, err
	}
	models, err := treeKey(root, machine.Dir)
	if err != nil {
		return kernels, mapping.LowerLoops(root, kernels)
	}
	var lower []*spec.Kernel
	var keys []string
	at := map[*spec.Kernel]int{}
	for i, k := range kernels {
		if k.Loops == nil || k.Pattern != nil {
			continue
		}
		key := fmt.Sprintf("%x %s", fingerprint([]*spec.Kernel{k}), models)
		if kept, ok := m.lowered[key]; ok {
			kernels[i] = kept
			continue
		}
		lower, keys, at[k] = append(lower, k), append(keys, key), i
	}
	if err := mapping.LowerLoops(root, lower); err != nil {
		return kernels, err
	}
	for i, k := range lower {
		m.lowered[keys[i]] = k
	}
	for _, k := range kernels {
		if _, ok := m.prints[k]; !ok {
			m.prints[k] = fingerprint([]*spec.Kernel{k})
		}
	}
	m.trees[tree] = slices.Clone(kernels)
	return kernels, nil
}

// changed lists the kept kernels that differ from what was loaded.
func (m *loweringMemo) changed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var files []string
	for k, print := range m.prints {
		if fingerprint([]*spec.Kernel{k}) != print {
			files = append(files, k.File)
		}
	}
	sort.Strings(files)
	return files
}

// unchanged asserts that the kernels kept for the tree at root equal a
// fresh mapping.LoadKernels: the loads shared them, and they are what the
// loads would have lowered themselves.
func (m *loweringMemo) unchanged(t *testing.T, root string) {
	kept, err := m.load(root)
	require.NoError(t, err)
	assert.Empty(t, m.changed(), "a load changed the kernels it shared")
	fresh, err := mapping.LoadKernels(root)
	require.NoError(t, err)
	assert.Equal(t, fresh, kept)
}

// treeKey is a digest of the names and contents of the files under the
// folders dirs of root.
func treeKey(root string, dirs ...string) (string, error) {
	h := sha256.New()
	for _, dir := range dirs {
		err := filepath.WalkDir(layout.Path(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d\n", path, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// fingerprint is a digest of everything reachable from kernels, unexported
// fields too; a pointer met again is written as the order it was first met
// in (the loop nests point back to their parents).
func fingerprint(kernels []*spec.Kernel) [sha256.Size]byte {
	h := sha256.New()
	writeValue(h, reflect.ValueOf(kernels), map[uintptr]int{})
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func writeValue(w io.Writer, v reflect.Value, seen map[uintptr]int) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			fmt.Fprint(w, "nil;")
			return
		}
		if n, ok := seen[v.Pointer()]; ok {
			fmt.Fprintf(w, "@%d;", n)
			return
		}
		seen[v.Pointer()] = len(seen)
		writeValue(w, v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() {
			fmt.Fprint(w, "nil;")
			return
		}
		fmt.Fprintf(w, "%s:", v.Elem().Type())
		writeValue(w, v.Elem(), seen)
	case reflect.Struct:
		fmt.Fprint(w, "{")
		for i := range v.NumField() {
			writeValue(w, v.Field(i), seen)
		}
		fmt.Fprint(w, "}")
	case reflect.Slice, reflect.Array:
		fmt.Fprintf(w, "[%d:", v.Len())
		for i := range v.Len() {
			writeValue(w, v.Index(i), seen)
		}
		fmt.Fprint(w, "]")
	case reflect.Map:
		keys := v.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k)
		}
		sort.Sort(byName{keys, names})
		fmt.Fprintf(w, "map%d:", len(keys))
		for i, k := range keys {
			fmt.Fprintf(w, "%s=", names[i])
			writeValue(w, v.MapIndex(k), seen)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		fmt.Fprintf(w, "%v;", v.IsNil())
	default:
		fmt.Fprintf(w, "%v;", v)
	}
}

// byName sorts map keys by their printed form.
type byName struct {
	keys  []reflect.Value
	names []string
}

func (b byName) Len() int           { return len(b.keys) }
func (b byName) Less(i, j int) bool { return b.names[i] < b.names[j] }
func (b byName) Swap(i, j int) {
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
	b.names[i], b.names[j] = b.names[j], b.names[i]
}
