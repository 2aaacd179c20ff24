// Package machine holds the machine models: one YAML file per device under
// machines/ (the numbers of a GPU or a CPU, each with its source), the
// occupancy rules that turn them into launch defaults (CUDA's blocks per SM,
// 000 Fig. 12's max_teams, the team size Kokkos CUDA recommends), and the
// check of a running device against the model it was given.
//
// Nothing else in portmatrix hard-codes a warp width, an SM count or a
// shared-memory size: the tuner, the loop-nest mapper and the harness read
// them from a Model.
package machine

import (
	"fmt"
	"sort"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Dir is the folder of the machine models, relative to the repository root.
const Dir = "machines"

// Kinds of device a model describes.
const (
	KindGPU = "gpu"
	KindCPU = "cpu"
)

// Vendors a model may name; the occupancy rules exist for nvidia only.
var Vendors = []string{"nvidia", "amd", "intel", "x86-64"}

// Model is one device: its identity, every number with its source, and the
// numbers again as typed fields (GPU or CPU, by Kind).
type Model struct {
	Name        string   // the file's base name: h100-sxm5-80gb
	File        string   // the file it was read from
	Description string   // the product, in words
	Vendor      string   // nvidia, amd, intel, x86-64
	Kind        string   // gpu or cpu
	Arch        string   // sm_90, gfx90a, x86-64-v4
	Reports     []string // the names the device reports (nvidia-smi, cudaDeviceProp.name, rocm-smi, /proc/cpuinfo)
	Notes       []string // what the numbers do not say (uncertain or unknown values)

	Sources map[string]string // source key -> citation
	Values  map[string]Value  // field name -> value with its source

	GPU GPU
	CPU CPU

	reportPos []diag.Pos // where each of Reports is written
	archPos   diag.Pos
}

// Value is one number of a model and where it comes from.
type Value struct {
	Ints   []int64 // one number, or three for the dimension limits
	Source string  // a key of Model.Sources
	Note   string  // what is uncertain about it, if anything
	Pos    diag.Pos
}

// Citation is the text of v's source in m.
func (m *Model) Citation(field string) string {
	v, ok := m.Values[field]
	if !ok {
		return ""
	}
	return m.Sources[v.Source]
}

// GPU holds a GPU model's numbers. On AMD GPUs an SM is a compute unit (CU),
// a warp a wavefront and a block a workgroup; fields an AMD model leaves out
// are zero.
type GPU struct {
	SMCount                      int64    // streaming multiprocessors (CUs)
	WarpSize                     int64    // threads per warp (wavefront)
	MaxThreadsPerBlock           int64    // threads per block
	MaxBlockDims                 [3]int64 // blockDim limits x, y, z
	MaxGridDims                  [3]int64 // gridDim limits x, y, z
	MaxThreadsPerSM              int64    // resident threads per SM
	MaxWarpsPerSM                int64    // resident warps per SM
	MaxBlocksPerSM               int64    // resident blocks per SM
	SMSubPartitions              int64    // processing blocks (warp schedulers) per SM; SIMDs per CU
	RegistersPerSM               int64    // 32-bit registers per SM
	RegistersPerBlock            int64    // 32-bit registers one block may hold
	MaxRegistersPerThread        int64    // registers one thread may use
	RegisterAllocUnit            int64    // registers are given to a warp in multiples of this
	SharedMemoryPerSMBytes       int64    // the largest shared-memory carveout of an SM
	SharedMemoryPerBlockBytes    int64    // per block without opting in (static limit)
	SharedMemoryPerBlockOptin    int64    // per block after cudaFuncAttributeMaxDynamicSharedMemorySize
	SharedMemoryReservedPerBlock int64    // taken by the system from the SM for each resident block
	SharedMemoryAllocUnit        int64    // a block's shared memory is rounded up to this
	L2Bytes                      int64
	MemoryBytes                  int64 // HBM capacity as the datasheet gives it
	MemoryBandwidthGBs           int64 // HBM bandwidth, datasheet, GB/s (1e9 bytes)
	ClockMHz                     int64 // peak (boost) clock
}

// CPU holds a CPU model's numbers; caches per core except L3.
type CPU struct {
	Sockets            int64
	Cores              int64 // physical cores, all sockets
	Threads            int64 // hardware threads, all sockets
	SIMDBits           int64 // widest vector register the code may use
	CacheLineBytes     int64
	L1DBytes           int64 // per core
	L2Bytes            int64 // per core
	L3Bytes            int64 // per socket (shared)
	MemoryBytes        int64
	MemoryBandwidthGBs int64
	ClockMHz           int64
}

// need says when a field must be present.
type need int

const (
	optional  need = iota
	always         // every model of the kind
	occupancy      // GPUs the occupancy rules apply to (vendor nvidia)
)

// field is one row of the table of fields: its YAML name (also its name in
// the device query's JSON and in Check's messages), its kind, when it is
// required, its doc, and where its value lives.
type field struct {
	name string
	kind string
	dims int // 1, or 3 for a list of x, y, z limits
	need need
	doc  string
	int  func(m *Model) *int64
	dim3 func(m *Model) *[3]int64
}

func gpuInt(name string, n need, doc string, p func(g *GPU) *int64) field {
	return field{name: name, kind: KindGPU, dims: 1, need: n, doc: doc, int: func(m *Model) *int64 { return p(&m.GPU) }}
}

func gpuDims(name string, n need, doc string, p func(g *GPU) *[3]int64) field {
	return field{name: name, kind: KindGPU, dims: 3, need: n, doc: doc, dim3: func(m *Model) *[3]int64 { return p(&m.GPU) }}
}

func cpuInt(name string, n need, doc string, p func(c *CPU) *int64) field {
	return field{name: name, kind: KindCPU, dims: 1, need: n, doc: doc, int: func(m *Model) *int64 { return p(&m.CPU) }}
}

// fields is the one list of the numbers a model holds.
var fields = []field{
	gpuInt("sm_count", always, "streaming multiprocessors (compute units on AMD)", func(g *GPU) *int64 { return &g.SMCount }),
	gpuInt("warp_size", always, "threads per warp (wavefront)", func(g *GPU) *int64 { return &g.WarpSize }),
	gpuInt("max_threads_per_block", always, "threads per block (workgroup)", func(g *GPU) *int64 { return &g.MaxThreadsPerBlock }),
	gpuDims("max_block_dims", occupancy, "block dimension limits x, y, z", func(g *GPU) *[3]int64 { return &g.MaxBlockDims }),
	gpuDims("max_grid_dims", occupancy, "grid dimension limits x, y, z", func(g *GPU) *[3]int64 { return &g.MaxGridDims }),
	gpuInt("max_threads_per_sm", occupancy, "resident threads per SM", func(g *GPU) *int64 { return &g.MaxThreadsPerSM }),
	gpuInt("max_warps_per_sm", always, "resident warps (wavefronts) per SM (CU)", func(g *GPU) *int64 { return &g.MaxWarpsPerSM }),
	gpuInt("max_blocks_per_sm", occupancy, "resident blocks per SM", func(g *GPU) *int64 { return &g.MaxBlocksPerSM }),
	gpuInt("sm_sub_partitions", always, "processing blocks per SM (SIMDs per CU): registers are split among them", func(g *GPU) *int64 { return &g.SMSubPartitions }),
	gpuInt("registers_per_sm", always, "32-bit registers per SM (vector registers per CU on AMD)", func(g *GPU) *int64 { return &g.RegistersPerSM }),
	gpuInt("registers_per_block", occupancy, "32-bit registers one block may hold", func(g *GPU) *int64 { return &g.RegistersPerBlock }),
	gpuInt("max_registers_per_thread", occupancy, "registers one thread may use", func(g *GPU) *int64 { return &g.MaxRegistersPerThread }),
	gpuInt("register_alloc_unit", occupancy, "a warp's registers are allocated in multiples of this many", func(g *GPU) *int64 { return &g.RegisterAllocUnit }),
	gpuInt("shared_memory_per_sm_bytes", always, "shared memory (LDS) of an SM at its largest carveout", func(g *GPU) *int64 { return &g.SharedMemoryPerSMBytes }),
	gpuInt("shared_memory_per_block_bytes", always, "shared memory one block may use without opting in", func(g *GPU) *int64 { return &g.SharedMemoryPerBlockBytes }),
	gpuInt("shared_memory_per_block_optin_bytes", occupancy, "shared memory one block may use after opting in", func(g *GPU) *int64 { return &g.SharedMemoryPerBlockOptin }),
	gpuInt("shared_memory_reserved_per_block_bytes", occupancy, "shared memory the system keeps for each resident block", func(g *GPU) *int64 { return &g.SharedMemoryReservedPerBlock }),
	gpuInt("shared_memory_alloc_unit_bytes", occupancy, "a block's shared memory is allocated in multiples of this", func(g *GPU) *int64 { return &g.SharedMemoryAllocUnit }),
	gpuInt("l2_bytes", always, "L2 cache", func(g *GPU) *int64 { return &g.L2Bytes }),
	gpuInt("memory_bytes", always, "device memory (HBM) capacity", func(g *GPU) *int64 { return &g.MemoryBytes }),
	gpuInt("memory_bandwidth_gbs", always, "device memory bandwidth, datasheet, GB/s", func(g *GPU) *int64 { return &g.MemoryBandwidthGBs }),
	gpuInt("clock_mhz", always, "peak (boost) clock, MHz", func(g *GPU) *int64 { return &g.ClockMHz }),

	cpuInt("sockets", optional, "sockets", func(c *CPU) *int64 { return &c.Sockets }),
	cpuInt("cores", optional, "physical cores, all sockets", func(c *CPU) *int64 { return &c.Cores }),
	cpuInt("threads", optional, "hardware threads, all sockets", func(c *CPU) *int64 { return &c.Threads }),
	cpuInt("simd_bits", always, "widest vector register the code may use, bits", func(c *CPU) *int64 { return &c.SIMDBits }),
	cpuInt("cache_line_bytes", always, "cache line", func(c *CPU) *int64 { return &c.CacheLineBytes }),
	cpuInt("l1d_bytes", optional, "L1 data cache per core", func(c *CPU) *int64 { return &c.L1DBytes }),
	cpuInt("l2_bytes", optional, "L2 cache per core", func(c *CPU) *int64 { return &c.L2Bytes }),
	cpuInt("l3_bytes", optional, "L3 cache per socket", func(c *CPU) *int64 { return &c.L3Bytes }),
	cpuInt("memory_bytes", optional, "main memory", func(c *CPU) *int64 { return &c.MemoryBytes }),
	cpuInt("memory_bandwidth_gbs", optional, "main memory bandwidth, GB/s", func(c *CPU) *int64 { return &c.MemoryBandwidthGBs }),
	cpuInt("clock_mhz", optional, "clock, MHz", func(c *CPU) *int64 { return &c.ClockMHz }),
}

// fieldsOf returns the fields of a kind and their names, sorted.
func fieldsOf(kind string) (map[string]field, []string) {
	out := map[string]field{}
	var names []string
	for _, f := range fields {
		if f.kind == kind {
			out[f.name] = f
			names = append(names, f.name)
		}
	}
	sort.Strings(names)
	return out, names
}

// Fields lists the fields of a kind ("gpu" or "cpu") with their docs, in
// table order: docs/machines.md and tests read it.
func Fields(kind string) [][2]string {
	var out [][2]string
	for _, f := range fields {
		if f.kind == kind {
			out = append(out, [2]string{f.name, f.doc})
		}
	}
	return out
}

func (m *Model) String() string { return fmt.Sprintf("machine %s", m.Name) }
