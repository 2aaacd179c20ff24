#!/usr/bin/env bash
# Tunes the paper-002 matrix and 000's kernel-mode variants, then measures
# every cell as published and at its tuned best side by side (docs/tuning.md,
# "The whole matrix"). On a GPU host, after gpu-run.sh's unpacking of a
# bundle (PM_BUNDLE=<bundle folder>: the CLI, binaries, libraries, the host
# build of PM_HOST_BUILD), or in a checkout with a built CLI (PM_CLI,
# default bin/portmatrix) and build/. Writes results/<id>-tune (tuning.jsonl,
# tuning.md) and results/<id>-run (results.jsonl: as-published and tuned
# records), packed into $OUT (or ./out). Arguments go to `portmatrix`, e.g.
#   PM_BUNDLE=bundle-a scripts/tune-matrix.sh -toolchains nvcc-sm90,clang19-sm90,clang22-sm90,gcc12-nvptx
# Knobs: PM_TUNE_SCHEDULER (default gpus: a worker per GPU; empty: this
# process, one device), PM_TUNE_EVALS (default 32) and PM_TUNE_SECONDS
# (default 420, per worker), PM_RUN_LIMIT (seconds of the run, default 420),
# PM_MATRIX_SIZES (default the 002 matrix's), PM_ID (the folders' name;
# again with the same PM_ID, a cut tuning or run resumes).
set -uo pipefail
out=${OUT:-out}
mkdir -p build bin results "$out"
if [ -n "${PM_BUNDLE:-}" ]; then
  dir=$(cd "$PM_BUNDLE" && pwd)
  [ -f toolchains.yaml ] || tar -xJf "$dir/src.tar.xz"
  xz -dc "$dir/portmatrix.xz" >bin/portmatrix && chmod +x bin/portmatrix
  tar -C build -xJf "$dir/build.tar.xz"
  [ -f "$dir/libs.tar.xz" ] && tar -C build -xJf "$dir/libs.tar.xz"
  export PM_COMMIT; PM_COMMIT=$(cat "$dir/COMMIT")
  hb=${PM_HOST_BUILD-nvcc-sm90}
  if [ -n "$hb" ]; then
    bin/portmatrix -toolchains "$hb" doctor >"build/doctor-$hb.txt" 2>&1
    bin/portmatrix -toolchains "$hb" -jobs "$(nproc)" build || echo "tune-matrix: host build of $hb failed (see build/*/*.log)"
  fi
fi
cli=${PM_CLI:-bin/portmatrix}
# The device query run and tune check the GPU with against its machine model
# (docs/machines.md); without it they read nvidia-smi's name, memory and arch.
[ -x build/deviceprops ] || { command -v nvcc >/dev/null && nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu; } || true
id=${PM_ID:-$(date -u +%Y%m%d-%H%M%S)-matrix}
sched=${PM_TUNE_SCHEDULER-gpus}
sel=(-kernels axpby,dot,spmv,cgsolve -sizes "${PM_MATRIX_SIZES:-axpby=1e8;dot=1e8;spmv=150,200;cgsolve=150}" -suite full)
export PM_TUNE_EVALS=${PM_TUNE_EVALS:-32} PM_TUNE_SECONDS=${PM_TUNE_SECONDS:-420}
t0=$(date +%s)
"$cli" ${sched:+-scheduler "$sched"} "${sel[@]}" "$@" -out "results/$id-tune" tune
echo "tune-matrix: tune exited $? after $(($(date +%s) - t0)) s"
t1=$(date +%s)
resume=()
# Without a scheduler a cut run resumes in its folder; the gpus scheduler's
# campaign measures what it misses by itself.
[ -z "$sched" ] && [ -f "results/$id-run/run.json" ] && resume=(-resume)
timeout "${PM_RUN_LIMIT:-420}" "$cli" ${sched:+-scheduler "$sched"} "${sel[@]}" -trials "${PM_TRIALS:-3}" \
  -tuned "results/$id-tune" ${resume[@]+"${resume[@]}"} "$@" -out "results/$id-run" run
echo "tune-matrix: run exited $? after $(($(date +%s) - t1)) s"
tar -C results -czf "$out/$id.tar.gz" "$id-tune" "$id-run"
echo "results: $out/$id.tar.gz"
