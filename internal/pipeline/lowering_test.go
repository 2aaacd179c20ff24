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
// load one tree again and again (the bad-input corpus, case after case), and
// lowering the loop kernels is most of a Load's time (under -race, seconds).
var lowering = &loweringMemo{kept: map[string]keptLowering{}}

func TestMain(m *testing.M) {
	loadKernels = lowering.load
	code := m.Run()
	if changed := lowering.changed(); len(changed) > 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the kernels Load shared were changed after their lowering: %v\n", changed)
		code = 1
	}
	os.Exit(code)
}

// loweringMemo keeps what mapping.LoadKernels gave for a tree, known by its
// path and the names and bytes of the files LoadKernels reads (treeKey): a
// test that edits or adds a kernel lowers its own. Only a load without error
// is kept. The kernels are shared, not copied: once the tests have run,
// TestMain checks that nothing changed them since they were lowered
// (fingerprint).
type loweringMemo struct {
	mu   sync.Mutex
	kept map[string]keptLowering
}

type keptLowering struct {
	kernels []*spec.Kernel
	print   [sha256.Size]byte
}

func (m *loweringMemo) load(root string) ([]*spec.Kernel, error) {
	key, err := treeKey(root)
	if err != nil {
		return mapping.LoadKernels(root)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k, ok := m.kept[key]; ok {
		return slices.Clone(k.kernels), nil
	}
	kernels, err := mapping.LoadKernels(root)
	if err == nil {
		m.kept[key] = keptLowering{slices.Clone(kernels), fingerprint(kernels)}
	}
	return kernels, err
}

// changed lists the trees whose kept kernels differ from what was lowered.
func (m *loweringMemo) changed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var roots []string
	for key, k := range m.kept {
		if fingerprint(k.kernels) != k.print {
			roots = append(roots, key)
		}
	}
	sort.Strings(roots)
	return roots
}

// unchanged asserts that the lowering kept for the unedited tree at root
// (with more done to it) equals a fresh one: the loads shared it, and it is
// what they would have lowered themselves.
func (m *loweringMemo) unchanged(t *testing.T, root string, more func(*testing.T, string)) {
	freshTree(t, root, more)
	key, err := treeKey(root)
	require.NoError(t, err)
	m.mu.Lock()
	kept, ok := m.kept[key]
	m.mu.Unlock()
	require.True(t, ok, "the unedited tree was loaded")
	assert.Equal(t, kept.print, fingerprint(kept.kernels), "a load changed the kernels it shared")
	fresh, err := mapping.LoadKernels(root)
	require.NoError(t, err)
	assert.Equal(t, fresh, kept.kernels)
}

// treeKey is root with a digest of the names and contents of the files
// mapping.LoadKernels reads: the kernel descriptions and the machine models.
func treeKey(root string) (string, error) {
	h := sha256.New()
	for _, dir := range []string{layout.Kernels, machine.Dir} {
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
	return fmt.Sprintf("%s %x", root, h.Sum(nil)), nil
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
