#!/usr/bin/env bash
# Runs on the GPU host, from a checkout's root or from an empty folder: unpacks
# a bundle made by gpu-bundle.sh, builds there the cells this host's compilers
# build (PM_HOST_BUILD, default nvcc-sm90: the newest nvcc found, such as
# /usr/local/cuda/bin/nvcc; empty: none), runs the selected GPU cells with the
# static CLI for at most PM_RUN_LIMIT seconds (default 500), and packs the
# results folder into $OUT (or ./out). With PM_DEPS (the libraries' source
# releases) it first installs Kokkos and RAJA for those toolchains. Arguments go to `portmatrix`, e.g.
#   scripts/gpu-run.sh bundle-a -toolchains clang22-sm90,nvcc-sm90 -kernels spmv -size-set gpu -reps 10
# PM_RESUME_FROM=<results tarball of an earlier job> unpacks that folder and
# resumes its run (same arguments): what finished is kept, the rest runs.
set -uo pipefail
dir=$(cd "${1:?bundle folder}" && pwd); shift
out=${OUT:-out}
mkdir -p build bin results "$out"
# Outside a checkout the CLI's inputs come from the bundle.
[ -f toolchains.yaml ] || tar -xJf "$dir/src.tar.xz"
xz -dc "$dir/portmatrix.xz" >bin/portmatrix && chmod +x bin/portmatrix
tar -C build -xJf "$dir/build.tar.xz"
[ -f "$dir/libs.tar.xz" ] && tar -C build -xJf "$dir/libs.tar.xz"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
export PM_COMMIT; PM_COMMIT=$(cat "$dir/COMMIT")
# A GPU host runs everything the bundle and its own build hold, not the quick
# sample of a first run (-suite quick in the arguments asks for that).
export PM_SUITE=${PM_SUITE:-full}
hb=${PM_HOST_BUILD-nvcc-sm90}
if [ -n "$hb" ]; then
  # With the libraries' source releases (PM_DEPS), the Kokkos and RAJA installs
  # of these toolchains first, by this host's compilers (docs/libraries.md).
  if [ -n "${PM_DEPS:-}" ]; then
    bin/portmatrix -libraries "$(echo "$hb" | sed 's|[^,]*|*/*/&|g')" libraries ||
      echo "gpu-run: library installs for $hb failed (see .toolchains/libraries/*/*/install.log)"
  fi
  # Which compiler each toolchain found is in the manifest and run.json; doctor's
  # whole report stays beside the build.
  bin/portmatrix "$@" -toolchains "$hb" doctor >"build/doctor-$hb.txt" 2>&1
  bin/portmatrix "$@" -toolchains "$hb" -jobs "$(nproc)" build || echo "gpu-run: host build of $hb failed (see build/*/*.log)"
fi
resume=()
if [ -n "${PM_RESUME_FROM:-}" ]; then
  id=$(tar -tzf "$PM_RESUME_FROM" | head -1 | cut -d/ -f1)
  tar -C results -xzf "$PM_RESUME_FROM" && resume=(-resume)
else
  # The CLI names the folder (results.NewFolder: the time, the GPU, the bundle).
  run=$(bin/portmatrix folder "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" "$(basename "$dir")") || exit 1
  id=$(basename "$run")
fi
timeout "${PM_RUN_LIMIT:-500}" bin/portmatrix -gpu ${resume[@]+"${resume[@]}"} -out "results/$id" "$@" run
echo "portmatrix run exited $?"
tar -C results -czf "$out/$id.tar.gz" "$id"
echo "results: $out/$id.tar.gz"
