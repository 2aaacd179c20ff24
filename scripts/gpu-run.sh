#!/usr/bin/env bash
# Runs on the GPU host from the repository root: unpacks a bundle made by
# gpu-bundle.sh, runs the selected GPU cells with the static CLI for at most
# PM_RUN_LIMIT seconds (default 500), and packs the results folder into $OUT
# (or ./out). Arguments go to `portmatrix run`, e.g.
#   scripts/gpu-run.sh bundle-a -toolchains nvcc-sm90 -kernels axpby -size-set gpu -reps 10
set -uo pipefail
dir=${1:?bundle folder}; shift
out=${OUT:-out}
mkdir -p build "$out"
tar -C build -xJf "$dir/build.tar.xz"
[ -f "$dir/libs.tar.xz" ] && tar -C build -xJf "$dir/libs.tar.xz"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
id=$(date -u +%Y%m%d-%H%M%S)-$gpu-$(basename "$dir")
PM_COMMIT=$(cat "$dir/COMMIT") timeout "${PM_RUN_LIMIT:-500}" "$dir/bin/portmatrix" -gpu -out "results/$id" "$@" run
echo "portmatrix run exited $?"
tar -C results -czf "$out/$id.tar.gz" "$id"
echo "results: $out/$id.tar.gz"
