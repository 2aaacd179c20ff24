#!/usr/bin/env bash
# The tuner's ground truth (docs/tuning.md, "Ground truth"): measures the whole
# feasible space of each cell of tune.TruthCells exhaustively (SPMV and CG-Solve
# at N = 150 under kk-cuda-3lvl with nvcc, kk-ompx-opt and kk-omp-b with clang 22;
# DOT at 1e8 under kk-omp-b and kk-ompx-opt, and kk-cuda-3lvl's 4 by the same
# selection), then replays every search against it (portmatrix tunecheck: the
# folder's tuning-check.md and tuning-check.csv). `portmatrix tunecheck` without a
# folder prints the spaces and the GPU seconds expected (it took 4 minutes on an H200).
# On a GPU host, after gpu-run.sh's unpacking of a bundle (PM_BUNDLE=<bundle folder>
# of clang22-sm90; nvcc-sm90 is built on the host for the selection, PM_HOST_BUILD
# empty skips that when the bundle carries it), or in a checkout with a built CLI
# (PM_CLI, default bin/portmatrix) and build/:
#   PM_BUNDLE=bundle-t scripts/tune-truth.sh
# Writes results/<id> (tuning.jsonl, tuning.md, tuning-check.*), packed into $OUT
# (or ./out). Knobs: PM_TUNE_SCHEDULER (default gpus: a worker per GPU; empty: this
# process), PM_TUNE_SECONDS (default 900 per worker), PM_ID (again with the same
# PM_ID, a cut tuning resumes from its cache). Arguments go to `portmatrix tune`.
set -uo pipefail
out=${OUT:-out}
mkdir -p build bin results "$out"
sel=(-kernels spmv,cgsolve,dot -variants kk-cuda-3lvl,kk-ompx-opt,kk-omp-b -sizes 'spmv=150;cgsolve=150;dot=1e8' -suite full)
if [ -n "${PM_BUNDLE:-}" ]; then
  dir=$(cd "$PM_BUNDLE" && pwd)
  [ -f toolchains.yaml ] || tar -xJf "$dir/src.tar.xz"
  xz -dc "$dir/portmatrix.xz" >bin/portmatrix && chmod +x bin/portmatrix
  tar -C build -xJf "$dir/build.tar.xz"
  [ -f "$dir/libs.tar.xz" ] && tar -C build -xJf "$dir/libs.tar.xz"
  export PM_COMMIT; PM_COMMIT=$(cat "$dir/COMMIT")
  hb=${PM_HOST_BUILD-nvcc-sm90}
  if [ -n "$hb" ]; then
    bin/portmatrix "${sel[@]}" -toolchains "$hb" -jobs "$(nproc)" build || echo "tune-truth: host build of $hb failed (see build/*/*.log)"
  fi
fi
cli=${PM_CLI:-bin/portmatrix}
[ -x build/deviceprops ] || { command -v nvcc >/dev/null && nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu; } || true
id=${PM_ID:-$(date -u +%Y%m%d-%H%M%S)-truth}
sched=${PM_TUNE_SCHEDULER-gpus}
unset PM_TUNE_EVALS PM_TUNE PM_TUNE_HOLD # every configuration, no premise held
t0=$(date +%s)
"$cli" ${sched:+-scheduler "$sched"} "${sel[@]}" -toolchains nvcc-sm90,clang22-sm90 -tune exhaustive \
  -tune-seconds "${PM_TUNE_SECONDS:-900}" "$@" -out "results/$id" tune
echo "tune-truth: tune exited $? after $(($(date +%s) - t0)) s"
"$cli" tunecheck "results/$id"
echo "tune-truth: tunecheck exited $? (results/$id/tuning-check.md)"
tar -C results -czf "$out/$id.tar.gz" "$id"
echo "results: $out/$id.tar.gz"
