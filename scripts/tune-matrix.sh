#!/usr/bin/env bash
# Tunes the paper-002 matrix and 000's kernel-mode variants, TestSNAP and
# HOMMEXX kernels, then measures every cell as published and at its tuned
# best side by side (docs/tuning.md, "The whole matrix"). PM_TUNE_TARGETS
# (default results/nvidia-h100-tuning, where it exists) keeps the (cell,
# size) targets of that tuning: the 154 the dry run plans (`portmatrix
# tunecheck`). On a GPU host, after gpu-run.sh's unpacking of a
# bundle (PM_BUNDLE=<bundle folder>: the CLI, binaries, libraries, the host
# build of PM_HOST_BUILD), or in a checkout with a built CLI (PM_CLI,
# default bin/portmatrix) and build/. Writes results/<id>-tune (tuning.jsonl,
# tuning.md) and results/<id>-run (results.jsonl: as-published and tuned
# records), packed into $OUT (or ./out). Arguments go to `portmatrix`, e.g.
#   PM_BUNDLE=bundle-a scripts/tune-matrix.sh -toolchains nvcc-sm90,clang19-sm90,clang22-sm90,gcc12-nvptx
# Knobs: PM_TUNE_SCHEDULER (default gpus: a worker per GPU; empty: this
# process, one device), PM_TUNE_EVALS (default 32) and PM_TUNE_SECONDS
# (default 420, per worker), PM_RUN_LIMIT (seconds of the run, default 420;
# 0: tune only), PM_MATRIX_SIZES (default the matrix's), PM_ID (the
# folders' name; again with the same PM_ID, a cut tuning or run resumes),
# PM_RESULTS (the folder the two are made in, default results).
set -uo pipefail
out=${OUT:-out}
mkdir -p build bin results "$out"
snap=10 homme=100001
sel=(-kernels axpby,dot,spmv,cgsolve,snap_deidrj,snap_duarray,snap_step,snap_ui,snap_yi,hommexx_laplace_simple,hommexx_laplace_simple_mapped,hommexx_laplace_simple_mapped_noinputs,hommexx_laplace_simple_outer
  -sizes "${PM_MATRIX_SIZES:-axpby=1e8;dot=1e8;spmv=150,200;cgsolve=150;snap_deidrj=$snap;snap_duarray=$snap;snap_step=$snap;snap_ui=$snap;snap_yi=$snap;hommexx_laplace_simple=$homme;hommexx_laplace_simple_mapped=$homme;hommexx_laplace_simple_mapped_noinputs=$homme;hommexx_laplace_simple_outer=$homme}" -suite full)
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
    bin/portmatrix "${sel[@]}" -toolchains "$hb" -jobs "$(nproc)" build || echo "tune-matrix: host build of $hb failed (see build/*/*.log)"
  fi
fi
cli=${PM_CLI:-bin/portmatrix}
# The device query run and tune check the GPU with against its machine model
# (docs/machines.md); without it they read nvidia-smi's name, memory and arch.
[ -x build/deviceprops ] || { command -v nvcc >/dev/null && nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu; } || true
id=${PM_ID:-$(date -u +%Y%m%d-%H%M%S)-matrix}
sched=${PM_TUNE_SCHEDULER-gpus}
export PM_TUNE_EVALS=${PM_TUNE_EVALS:-32} PM_TUNE_SECONDS=${PM_TUNE_SECONDS:-420}
[ -z "${PM_TUNE_TARGETS+x}" ] && [ -f results/nvidia-h100-tuning/tuning.jsonl ] && export PM_TUNE_TARGETS=results/nvidia-h100-tuning
res=${PM_RESULTS:-results}
mkdir -p "$res"
t0=$(date +%s)
"$cli" ${sched:+-scheduler "$sched"} "${sel[@]}" "$@" -out "$res/$id-tune" tune
echo "tune-matrix: tune exited $? after $(($(date +%s) - t0)) s"
if [ "${PM_RUN_LIMIT:-420}" = 0 ]; then
  tar -C "$res" -czf "$out/$id-tune.tar.gz" "$id-tune"
  echo "results: $out/$id-tune.tar.gz"
  exit 0
fi
t1=$(date +%s)
resume=()
# Without a scheduler a cut run resumes in its folder; the gpus scheduler's
# campaign measures what it misses by itself.
[ -z "$sched" ] && [ -f "$res/$id-run/run.json" ] && resume=(-resume)
timeout "${PM_RUN_LIMIT:-420}" "$cli" ${sched:+-scheduler "$sched"} "${sel[@]}" -trials "${PM_TRIALS:-3}" \
  -tuned "$res/$id-tune" ${resume[@]+"${resume[@]}"} "$@" -out "$res/$id-run" run
echo "tune-matrix: run exited $? after $(($(date +%s) - t1)) s"
tar -C "$res" -czf "$out/$id.tar.gz" "$id-tune" "$id-run"
echo "results: $out/$id.tar.gz"
