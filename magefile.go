//go:build mage

// Portmatrix generates, builds, runs and verifies the variant matrix; "mage -h all" lists the knobs.
// Every target is a stage of pipeline.Stages (the CLI is built from the same table;
// a test checks that the two agree).
//
//mage:multiline
package main

import (
	"context"

	"github.com/magefile/mage/mg"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/pipeline"
	"github.com/portmatrix/portmatrix/internal/signals"
)

var Default = All

// Generate renders every (kernel, variant) into generated/, writing only changed files.
func Generate(ctx context.Context) error { return stage(ctx, "generate") }

// Check fails when generated/ is not what the templates render (CI runs it).
func Check(ctx context.Context) error { return stage(ctx, "check") }

// Doctor prints the toolchains found, their capabilities, and why each cell is on or off.
func Doctor(ctx context.Context) error { return stage(ctx, "doctor") }

// Explain prints how each kernel written as loops was mapped: dependences, each loop's level and why, sizes, the pattern tree.
func Explain(ctx context.Context) error { return stage(ctx, "explain") }

// Build compiles every cell this machine can build, in parallel and incrementally.
func Build(ctx context.Context) error {
	mg.CtxDeps(ctx, Generate)
	return stage(ctx, "build")
}

// Run runs every built cell this machine can run into a new results folder (PM_OUT).
func Run(ctx context.Context) error {
	mg.CtxDeps(ctx, Build)
	return stage(ctx, "run")
}

// Tune searches the run-time tunables of every built cell this machine can run, each configuration verified, cached in PM_OUT's tuning.jsonl.
func Tune(ctx context.Context) error {
	mg.CtxDeps(ctx, Build)
	return stage(ctx, "tune")
}

// Report draws figures, evaluates the papers' claims and writes report.html for a results folder (PM_OUT, default the newest).
func Report(ctx context.Context) error { return stage(ctx, "report") }

// Tunecheck replays every search against a folder's ground truth (whole spaces measured: scripts/tune-truth.sh) into its tuning-check.md and .csv; without a folder (PM_OUT), the dry run: the ground truth's spaces and GPU seconds, and a matrix tuning's.
func Tunecheck(ctx context.Context) error { return stage(ctx, "tunecheck") }

// Book renders the results book (results/book/) from results/index.yaml: every paper's figures and claims with their folders' provenance.
func Book(ctx context.Context) error { return stage(ctx, "book") }

// Merge joins comma-separated results folders of one platform into PM_OUT (which may be one of them), taking only PM_KERNELS, PM_VARIANTS and PM_TOOLCHAINS when given; later folders win for a cell. Tuning folders merge the same way, every evaluation kept (a later folder's wins for the same binary, configuration and device).
func Merge(ctx context.Context, folders string) error { return stage(ctx, "merge", folders) }

// Compare prints per-cell GB/s ratios of run b to run a and flags regressions beyond PM_THRESHOLD.
func Compare(ctx context.Context, a, b string) error { return stage(ctx, "compare", a, b) }

// Collect merges the shards of a scheduled run (PM_OUT, a campaign folder) into one results folder.
func Collect(ctx context.Context) error { return stage(ctx, "collect") }

// Status prints the progress of a scheduled run (PM_OUT): items done, Slurm tasks and their states.
func Status(ctx context.Context) error { return stage(ctx, "status") }

// Folder makes a new, empty results folder under results/, named by the time and the comma-separated parts (unique within a second too), and prints its path.
func Folder(ctx context.Context, parts string) error { return stage(ctx, "folder", parts) }

// Snapcheck compares our SNAP with a LAMMPS dump's energies, forces and bispectra (potential PM_SNAP_POTENTIAL, timestep PM_SNAP_TIMESTEP; docs/inputs.md), printing the largest errors.
func Snapcheck(ctx context.Context, dump string) error { return stage(ctx, "snapcheck", dump) }

// Verify checks the selection's build (every cell that is on compiled or a known failure) and PM_OUT's run (finished, every built cell measured and verified), with counts by target (CI runs it).
func Verify(ctx context.Context) error { return stage(ctx, "verify") }

// Libraries installs the libraries of variants/libraries.yaml (Kokkos, RAJA) for each backend and toolchain found, from the source releases in PM_DEPS (PM_LIBRARIES selects; docs/libraries.md).
func Libraries(ctx context.Context) error { return stage(ctx, "libraries") }

// All generates, builds, runs, verifies and reports: the whole pipeline.
//
// Knobs (environment variables; portmatrix takes them as flags), read by every target:
//
//	PM_ROOT=.
//	    repository root (templates/, variants/, toolchains.yaml) (-root)
//	PM_KERNELS=axpby,dot
//	    kernels (default: all) (-kernels)
//	PM_VARIANTS=kk-omp-b,omp-raw
//	    variant IDs or strategy names (default: all) (-variants)
//	PM_TOOLCHAINS=gcc-host
//	    toolchain IDs (default: every one found) (-toolchains)
//	PM_TOOLCHAINS_FILE=f.yaml
//	    toolchain file instead of toolchains.yaml (-toolchains-file)
//	PM_SUITE=quick|wide|full
//	    quick: paper 002's kernels under every host variant at two sizes of the default set, and a sample covering every other strategy and kernel family with each toolchain, each at its smallest size, no known failure; wide: also every kernel once, every variant, and every strategy with each family; full: every selected cell (default: quick, full when PM_KERNELS, PM_VARIANTS, PM_SIZES or a size set other than ci is given) (-suite)
//	PM_SIZE_SET=ci|default|gpu
//	    size set (default: ci, minutes on 2 cores) (-size-set)
//	PM_SIZES=1000,1e5 or axpby=1e8;spmv=150,200
//	    explicit sizes overriding the set: for every kernel, or per kernel (name=sizes) (-sizes)
//	PM_REPS=5
//	    timed repetitions per size (-reps)
//	PM_REP_SECONDS=2
//	    seconds of timed calls that bound the reps of a slow measurement, which keeps at least 3 (0: no bound; default 2) (-rep-seconds)
//	PM_WARMUP=1
//	    warm-up runs per size (0 allowed) (-warmup)
//	PM_TRIALS=3
//	    independent trials (separate processes, interleaved across cells) per (cell, size) (default: 3 when GPU cells run, else 1) (-trials)
//	PM_RESUME=1|batch
//	    1: continue the unfinished run in PM_OUT with the selection and settings it records (what finished is kept, the rest runs; another selection is refused, naming the differences); batch: measure another selection into PM_OUT as a new batch with its own provenance (an existing folder is refused otherwise) (-resume)
//	PM_DEVICE_ONLY=1
//	    build only the device code of the cells whose toolchain declares device_only flags (AMD, never run here): CI's check of every such cell; a cell that runs here is built whole (-device-only)
//	PM_JOBS=2
//	    parallel builds (-jobs)
//	PM_BUILD_DIR=build
//	    build folder (-build-dir)
//	PM_OUT=results/my-run
//	    results folder: written by run and merge, read by report (default: the newest) (-out)
//	PM_TIMEOUT=300
//	    seconds one program may run (-timeout)
//	PM_GPU=1
//	    1: run GPU cells, 0: do not (default: when nvidia-smi or rocm-smi lists a GPU) (-gpu)
//	PM_COMMIT=0123abc
//	    the source commit to record when the tree has no .git (a GPU host) (-commit)
//	PM_COPY_BYTES=1073741824
//	    bytes of the STREAM arrays asked of the first program of each toolchain, two arrays' worth (default: 1 GiB on a GPU, 64 MiB on the host; the harness raises each array to 4x the caches, on a GPU to 2^25 doubles) (-copy-bytes)
//	PM_SCHEDULER=slurm|gpus
//	    run stage: slurm (one job array) or gpus (a worker per GPU of this node); docs/cluster.md (-scheduler)
//	PM_CLUSTER=cluster.yaml
//	    cluster file of the slurm scheduler (copy cluster.example.yaml) (-cluster)
//	PM_WORK=items.json
//	    run only these work items: a JSON file of {cell, size}, a queue folder, or plan:<file> to list them (-work)
//	PM_FLUSH_L2=auto|on|off
//	    flush the L2 between runs (auto: always on a GPU; on the host when the working set fits) (-flush-l2)
//	PM_THREADS=4
//	    OpenMP threads of host programs (default: SLURM_CPUS_PER_TASK, else an exported OMP_NUM_THREADS, else the CPUs the run may use); docs/cpu.md (-threads)
//	PM_BIND=close|spread|false
//	    OMP_PROC_BIND of host programs, with OMP_PLACES=cores unless false (default: close); docs/cpu.md (-bind)
//	PM_THRESHOLD=0.10
//	    compare: a slow-down beyond this fraction is a regression (-threshold)
//	PM_DEPS=../shared/deps
//	    libraries: the folder holding the libraries' source releases that variants/libraries.yaml names (docs/libraries.md) (-deps)
//	PM_LIBRARIES=kokkos/openmp/gcc-host,raja
//	    libraries: the installs to do, name[/backend[/toolchain]], each part a pattern (default: every install whose toolchain is found) (-libraries)
//	PM_TUNE=auto|exhaustive|random|pruned|guided
//	    tune: the search (auto: exhaustive for small spaces, else tune.BeyondBudget within PM_TUNE_EVALS; guided: a climb over neighbours from the default) (-tune)
//	PM_TUNE_EVALS=64
//	    tune: configurations per (cell, size), the default and cached ones included (default: all) (-tune-evals)
//	PM_TUNE_SECONDS=600
//	    tune: wall seconds of new evaluations; a cut tuning resumes from its cache (default: no bound) (-tune-seconds)
//	PM_TUNE_SHARD=0/2
//	    tune: worker k of n tunes every n-th (cell, size) from the k-th (the gpus and slurm schedulers set it) (-tune-shard)
//	PM_TUNE_HOLD=snap_vector=1
//	    tune: tunables held at these values wherever a cell has them, as a claim's premises hold them (claims.yaml premises:); the rest of the space is ruled out (-tune-hold)
//	PM_TUNE_TARGETS=results/nvidia-h100-tuning
//	    tune: a tuning folder; of the selection, only the (cell, size) targets its tuning.jsonl holds are tuned (the same matrix on another GPU; the dry run's matrix) (-tune-targets)
//	PM_TUNED=results/my-tuning
//	    run: a tuning folder (its tuning.jsonl); every cell it tuned on this device model is measured again at its best, records marked tuned, beside the as-published ones (-tuned)
//	PM_GPUS=0,1
//	    the GPUs (nvidia-smi indices or UUIDs, comma-separated) the gpus scheduler uses (default: all) (-gpus)
func All(ctx context.Context) error { return stage(ctx, "all") }

// Clean removes build outputs (the build folder); generated/ and results/ are kept.
func Clean(ctx context.Context) error { return stage(ctx, "clean") }

func stage(ctx context.Context, name string, args ...string) error {
	ctx, stop := signals.Context(ctx) // SIGTERM too, and the death of mage.go
	defer stop()
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	return pipeline.Stage(ctx, name, cfg, args...)
}
