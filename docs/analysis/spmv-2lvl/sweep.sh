#!/usr/bin/env bash
# SPMV KK-CUDA team-shape sweep with run-time tunables (one process per trial, every config verified).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | tee $OUT/gpu.txt
nvcc --version | tail -2 | tee -a $OUT/gpu.txt
F="-O3 -std=c++17 -arch=sm_90 --extended-lambda -x cu -DPM_HAS_CUDA=1 -DPM_HAS_CXX17=1 -Iharness"
for v in kk-cuda-2lvl kk-cuda-3lvl; do nvcc $F -o /tmp/spmv.$v generated/spmv/$v.cu & done
nvcc -O2 -o /tmp/dq harness/devicequery/deviceprops.cu &
wait
/tmp/dq > $OUT/deviceprops.json
for t in 2 4 8 16 32 64 128 256; do echo "rows_per_team=$t,team_size=$t"; done > /tmp/c2
for t in 2 4 8 16 32 64 128; do for v in 1 2 4 8 16 32; do
  p=$((t*v)); if [ $p -le 1024 ] && [ $p -ge 32 ]; then echo "rows_per_team=$t,team_size=$t,vector_size=$v"; fi; done; done > /tmp/c3
tac /tmp/c2 > /tmp/c2r; tac /tmp/c3 > /tmp/c3r
cp /tmp/c2 /tmp/c3 $OUT/
for N in 150 200; do for trial in 1 2 3; do
  s=""; [ $trial = 2 ] && s=r
  for v in kk-cuda-2lvl kk-cuda-3lvl; do
    c=/tmp/c2$s; [ $v = kk-cuda-3lvl ] && c=/tmp/c3$s
    /tmp/spmv.$v --size $N --reps 10 --warmup 2 --cell spmv.$v.nvcc-sm90 --toolchain nvcc-sm90 --configs $c | sed "s/^{/{\"trial\":$trial,/" >> $OUT/sweep.jsonl
    /tmp/spmv.$v --size $N --reps 10 --warmup 2 --cell spmv.$v.nvcc-sm90 --toolchain nvcc-sm90 | sed "s/^{/{\"trial\":$trial,/" >> $OUT/sweep.jsonl
  done
  echo "N=$N trial $trial done $(date +%T)"
done; done
grep -c '"verified":true' $OUT/sweep.jsonl; grep -c '"verified":false' $OUT/sweep.jsonl
