#!/usr/bin/env bash
# Runs a user's data on an NVIDIA GPU (docs/inputs.md), from the repository
# root: builds the kk-cuda-3lvl programs of snap_step, spmv and cgsolve with
# the newest nvcc found (the flags of toolchains.yaml's nvcc-sm90) and runs
# snap_step on LAMMPS dumps (PM_SNAP_DUMP: the triclinic 54-atom one,
# timestep 2 of the three-step one, and the 2000 atoms after 100 MD steps
# beside the paper's 2000-atom lattice, size 10), spmv on an unsymmetric and a symmetric
# Matrix Market file and cgsolve on the 1D Laplacian (PM_MATRIX).
# Each record should say "verified":true and name its "input".
# Usage: scripts/inputs-gpu.sh [output folder, default $OUT or ./out]
set -euo pipefail
out=${1:-${OUT:-out}}
mkdir -p "$out"
nvcc=$(ls /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V | tail -1)
[ -n "$nvcc" ] || nvcc=$(command -v nvcc)
"$nvcc" --version | tail -1
flags=(-O3 -std=c++17 -arch=sm_90 --extended-lambda -x cu -I harness)
for k in snap_step spmv cgsolve; do
  "$nvcc" "${flags[@]}" -o "$out/$k" "generated/$k/kk-cuda-3lvl.cu"
done
export PM_DEVICE_NAME
PM_DEVICE_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
d=internal/testsnap/testdata m=internal/inputs/testdata
{
  PM_SNAP_DUMP=$d/w2j8_tri_c3_d010.dump "$out/snap_step" --size 1 --reps 5
  PM_SNAP_DUMP=$d/w2j8_steps_c2.dump PM_SNAP_TIMESTEP=2 "$out/snap_step" --size 1 --reps 5
  PM_SNAP_DUMP=$d/w2j8_md_c10.dump "$out/snap_step" --size 10 --reps 5
  "$out/snap_step" --size 10 --reps 5
  PM_MATRIX=$m/general4.mtx "$out/spmv" --size 1 --reps 5
  PM_MATRIX=$m/spd5.mtx "$out/spmv" --size 1 --reps 5
  PM_MATRIX=$m/laplace100.mtx "$out/cgsolve" --size 1 --reps 5
} | tee "$out/inputs-gpu.jsonl"
echo "verified: $(grep -c '"verified":true' "$out/inputs-gpu.jsonl") of 7 records"
