#!/usr/bin/env bash
# Why KK-CUDA 2 levels peaks at 16-thread teams: L1 hit rate, DRAM traffic and occupancy per team size.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
command -v ncu || ls /usr/local/cuda*/bin | grep -i ncu
F="-O3 -std=c++17 -arch=sm_90 --extended-lambda -x cu -DPM_HAS_CUDA=1 -DPM_HAS_CXX17=1 -Iharness"
nvcc $F -o /tmp/s2 generated/spmv/kk-cuda-2lvl.cu & nvcc $F -o /tmp/s3 generated/spmv/kk-cuda-3lvl.cu & wait
M=l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_blocks
for t in 8 16 32 64 256; do
  echo "== 2lvl team $t" | tee -a $OUT/ncu.txt
  ncu --metrics $M -c 12 /tmp/s2 --size 150 --reps 1 --warmup 0 --flush-l2 off --config rows_per_team=$t,team_size=$t > $OUT/ncu-$t.txt 2>&1; grep -c "Metric Value" $OUT/ncu-$t.txt
done
echo "== 3lvl 16x8" | tee -a $OUT/ncu.txt
ncu --metrics $M -c 12 /tmp/s3 --size 150 --reps 1 --warmup 0 --flush-l2 off > $OUT/ncu-3lvl.txt 2>&1
