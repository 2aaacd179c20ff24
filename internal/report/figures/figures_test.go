package figures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

func specByID(t *testing.T, id string) reportspec.Figure {
	t.Helper()
	figs, err := reportspec.LoadFigures(reporttest.SpecDir(t)+"/figures.yaml", reporttest.Vocab(t))
	require.NoError(t, err)
	for _, f := range figs {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no figure %s", id)
	return reportspec.Figure{}
}

func gpuDataset(t *testing.T) *dataset.Set {
	t.Helper()
	res, err := results.Load(reporttest.NewRun(t, reporttest.GPURun()))
	require.NoError(t, err)
	return dataset.New(res)
}

func labels(p panel) []string {
	var out []string
	for _, s := range p.Series {
		out = append(out, s.Label)
	}
	return out
}

func TestBuildFigurePanelsPerToolchain(t *testing.T) {
	f := Build(specByID(t, "fig1-axpby"), gpuDataset(t))
	require.Empty(t, f.Note)
	require.Len(t, f.Panels, 3)
	var titles []string
	for _, p := range f.Panels {
		titles = append(titles, p.Title)
		assert.Equal(t, "KK-CUDA (pm layer)", p.Series[0].Label, "the native reference is in every panel")
		require.NotEmpty(t, p.Lines)
		assert.Equal(t, LineMeasured, p.Lines[0].Kind)
		assert.InDelta(t, 2950, p.Lines[0].GBps, 15, "copy bandwidth of the H100")
	}
	assert.Equal(t, []string{"clang19-sm90 (llvm 19.1.7)", "clang16-sm90 (llvm 16.0.6)", "gcc12-nvptx (gcc 12.2.0)"}, titles)
	assert.Equal(t, []string{"KK-CUDA (pm layer)", "KK-OMP (pm layer)", "OMP-lambda", "OMP-raw"}, labels(f.Panels[1]),
		"omp-class on clang16 only crashed: no usable points")
	assert.Equal(t, []int64{1 << 16, 1 << 20, 1 << 24}, []int64{f.Panels[0].Series[1].Points[0].Size,
		f.Panels[0].Series[1].Points[1].Size, f.Panels[0].Series[1].Points[2].Size})
}

func TestBuildFigureBars(t *testing.T) {
	f := Build(specByID(t, "fig19-spmv-ompx-opt"), gpuDataset(t))
	require.Empty(t, f.Note)
	assert.Equal(t, []int64{16, 32, 64}, f.Sizes)
	require.Len(t, f.Panels, 1, "only clang19 builds the kernel-mode variants")
	assert.Equal(t, []string{"KK-OMPX optimized (pm layer)", "KK-CUDA (pm layer)", "direct-ompx"}, labels(f.Panels[0]))
}

func TestBuildFigureSinglePanel(t *testing.T) {
	f := Build(specByID(t, "dot-compilers"), gpuDataset(t))
	require.Len(t, f.Panels, 1)
	assert.Equal(t, []string{"KK-CUDA (pm layer, nvcc-sm90)", "OMP-raw (clang19-sm90)", "OMP-raw (clang16-sm90)", "OMP-raw (gcc12-nvptx)"}, labels(f.Panels[0]))
}

func TestBuildFigureTimeHasNoCopyLine(t *testing.T) {
	f := Build(specByID(t, "cgsolve-time"), gpuDataset(t))
	require.NotEmpty(t, f.Panels)
	for _, p := range f.Panels {
		assert.Empty(t, p.Lines)
	}
}

func TestSizeTicks(t *testing.T) {
	ticks := sizeTicks([]int64{64, 16, 32, 16})
	assert.Equal(t, []string{"16", "32", "64"}, []string{ticks[0].Label, ticks[1].Label, ticks[2].Label})
	var many []int64
	for k := 10; k <= 28; k++ {
		many = append(many, 1<<k)
	}
	ticks = sizeTicks(many)
	labelled := 0
	for _, tk := range ticks {
		if tk.Label != "" {
			labelled++
		}
	}
	assert.Equal(t, "2^10", ticks[0].Label)
	assert.LessOrEqual(t, labelled, 8)
}

func TestRenderFigureWithOddSizes(t *testing.T) {
	res := reporttest.MemResults()
	res.Kernel = append(res.Kernel, results.Record{Kind: "kernel", Cell: "spmv.omp-raw.clang19-sm90", Kernel: "spmv",
		Variant: "omp-raw", Toolchain: "clang19-sm90", Size: 0, GBps: 10, Verified: true})
	spec := reportspec.Figure{ID: "odd", Title: "odd", Kernel: "spmv", X: "size", Y: "gbps", Panel: "toolchain",
		Target: "device", LogX: true, Kind: "lines", XLabel: "N",
		Series: []reportspec.Series{{Variant: "kk-cuda-3lvl", Label: "KK-CUDA", Reference: true}, {Variant: "omp-raw", Label: "OMP"}}}
	f := Build(spec, dataset.New(res))
	require.Len(t, f.Panels, 1)
	assert.Len(t, f.Panels[0].Series[1].Points, 2, "size 0 cannot sit on a log axis")
	svg, png, err := Render(f)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	assert.Equal(t, "\x89PNG", string(png[:4]))
}

const normFigures = `figures:
  - id: norm
    title: time over OMP-raw
    kind: normalized
    kernels: [spmv, axpby]
    normalize_to: omp-raw
    at: smallest
    variants:
      - {variant: kk-omp-b, label: KK-OMP-b}
      - {variant: kk-cuda-3lvl, label: KK-CUDA}
`

// A normalized figure: kernels on the x axis, each bar a series' time over
// the reference variant's on the same kernel and toolchain, with the ratio's
// interval; a toolchain without the reference has no bars.
func TestBuildFigureNormalized(t *testing.T) {
	figs, err := reportspec.ParseFigures("n.yaml", []byte(normFigures), reporttest.Vocab(t))
	require.NoError(t, err)
	spec := figs[0]
	assert.Equal(t, "normalized", spec.Y)
	assert.Equal(t, "kernel", spec.XLabel)
	f := Build(spec, dataset.New(reporttest.MemResults()))
	require.Empty(t, f.Note)
	assert.Equal(t, []string{"spmv"}, f.Names, "axpby has no bar: left out")
	require.Len(t, f.Panels, 1, "nvcc built no omp-raw: no panel")
	require.Equal(t, []string{"KK-OMP-b (pm layer)"}, labels(f.Panels[0]))
	pts := f.Panels[0].Series[0].Points
	require.Len(t, pts, 1, "no axpby data")
	assert.EqualValues(t, 0, pts[0].Size, "the kernel's index")
	assert.InDelta(t, 1200.0/900, pts[0].Norm, 1e-12, "smallest common size 32: time ratio = GB/s ratio inverted")
	assert.True(t, pts[0].NormLo < pts[0].Norm && pts[0].Norm < pts[0].NormHi)

	spec.At = "largest"
	f = Build(spec, dataset.New(reporttest.MemResults()))
	assert.InDelta(t, 1400.0/1000, f.Panels[0].Series[0].Points[0].Norm, 1e-12)
	svg, _, err := Render(f)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "spmv")

	spec.NormalizeTo = "omp-class"
	f = Build(spec, dataset.New(reporttest.MemResults()))
	assert.Equal(t, "no verified results of kk-omp-b, kk-cuda-3lvl with omp-class on one toolchain (any) for any of spmv, axpby", f.Note)
}

func TestNormalizedFigureErrors(t *testing.T) {
	src := `figures:
  - id: norm
    title: t
    kind: normalized
    kernel: spmv
    y: gbps
    at: middle
    variants: [{variant: omp-raw}]
  - id: plain
    title: t
    kernel: spmv
    normalize_to: omp-raw
    variants: [{variant: omp-raw}]
`
	_, err := reportspec.ParseFigures("n.yaml", []byte(src), reporttest.Vocab(t))
	require.Error(t, err)
	assert.Equal(t, `n.yaml:2:5: figure "norm": kind normalized needs kernels
n.yaml:2:5: figure "norm": normalize_to is missing
n.yaml:5:13: figure "norm": kind normalized takes kernels, not kernel
n.yaml:6:8: figure "norm": kind normalized draws time over the reference's; y does not apply
n.yaml:7:9: figure "norm": at must be one of largest, smallest, not "middle"
n.yaml:12:19: figure "plain": normalize_to applies to kind normalized only`, err.Error())
}

// Every legend says what its bar ran, from the vocabulary: a library
// variant its library's release and backend, a variant of the project's
// layers "pm layer", code written directly nothing more.
func TestLegendsNameTheLibrary(t *testing.T) {
	voc := reporttest.Vocab(t)
	figs, err := reportspec.ParseFigures("f.yaml", []byte(`figures:
  - id: layers
    title: T
    paper: none
    kernel: spmv
    variants:
      - {variant: kk-cuda-3lvl, label: KK-CUDA 3lvl}
      - {variant: kokkos-cuda-3lvl}
      - {variant: kokkos-omptarget, label: Kokkos OpenMPTarget}
      - {variant: rajalib-omp-nt}
      - {variant: raja-omp-teams, label: RAJA many blocks}
      - {variant: omp-raw, label: OMP-raw}
`), voc)
	require.NoError(t, err)
	var got []string
	for _, s := range figs[0].Series {
		got = append(got, s.Label)
	}
	assert.Equal(t, []string{"KK-CUDA 3lvl (pm layer)", "kokkos-cuda-3lvl (Kokkos 4.6.01 cuda)", "Kokkos OpenMPTarget (Kokkos 4.6.01 omptarget)",
		"rajalib-omp-nt (RAJA v2025.09.1 omptarget)", "RAJA many blocks (pm layer)", "OMP-raw"}, got)
	assert.Equal(t, "KK-CUDA (pm layer, nvcc-sm90)", withNote("KK-CUDA (pm layer)", "nvcc-sm90"))
	assert.Equal(t, "OMP-raw (gcc12-nvptx)", withNote("OMP-raw", "gcc12-nvptx"))
}
