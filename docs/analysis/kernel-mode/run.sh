#!/usr/bin/env bash
# Kernel mode on SPMV (clang 19): max_teams as a run-time tunable against Fig. 12's occupancy
# bound, and Nsight Compute on kk-ompx-shfl against kk-ompx-opt.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p /tmp/pm && tar -C /tmp/pm -xJf .explore/ompx.tar.xz
export LD_LIBRARY_PATH=/tmp/pm/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
B=/tmp/pm/bin
for m in 132 264 528 1056 1584 2112 4224 8448 2147483647; do echo "max_teams=$m"; done > /tmp/cm
for N in 150 200; do for trial in 1 2 3; do
  for v in kk-ompx kk-ompx-shfl kk-ompx-opt kk-ompx-warp direct-ompx direct-ompx-warp; do
    $B/spmv.$v --size $N --reps 10 --warmup 2 --cell spmv.$v.clang19-sm90 --toolchain clang19-sm90 --configs /tmp/cm | sed "s/^{/{\"trial\":$trial,/" >> $OUT/maxteams.jsonl
  done
  $B/spmv.kk-omp-b --size $N --reps 10 --warmup 2 --cell spmv.kk-omp-b.clang19-sm90 --toolchain clang19-sm90 | sed "s/^{/{\"trial\":$trial,/" >> $OUT/maxteams.jsonl
  echo "N=$N trial $trial $(date +%T)"
done; done
grep -c '"verified":true' $OUT/maxteams.jsonl; grep -c '"verified":false' $OUT/maxteams.jsonl
S="--section LaunchStats --section Occupancy --section WarpStateStats --section SpeedOfLight --section MemoryWorkloadAnalysis"
for v in kk-ompx-shfl kk-ompx-opt; do
  ncu $S -k regex:omp_offloading -c 2 $B/spmv.$v --size 200 --reps 1 --warmup 0 --flush-l2 off > $OUT/ncu-$v.txt 2>&1
done
ncu $S -k regex:omp_offloading -c 2 $B/spmv.kk-ompx-shfl --size 200 --reps 1 --warmup 0 --flush-l2 off --config max_teams=1584 > $OUT/ncu-shfl-1584.txt 2>&1
tail -3 $OUT/ncu-kk-ompx-opt.txt
