#!/usr/bin/env bash
# Runs on the GPU host from the repository root: unpacks bundle/, runs the
# selected GPU cells with the static CLI, and packs the results folder into
# $OUT (or ./out). Arguments are passed to `portmatrix run`
# (e.g. -kernels axpby,dot -size-set gpu -reps 10).
set -euo pipefail
out=${OUT:-out}
mkdir -p build "$out"
tar -C build -xf bundle/build.tar
tar -C build -xJf bundle/libs.tar.xz
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
id=$(date -u +%Y%m%d-%H%M%S)-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
PM_COMMIT=$(cat bundle/COMMIT) bundle/bin/portmatrix -gpu -out "results/$id" "$@" run || echo "portmatrix run exited $?"
tar -C results -czf "$out/$id.tar.gz" "$id"
echo "results: $out/$id.tar.gz"
