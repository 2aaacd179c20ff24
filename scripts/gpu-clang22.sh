#!/usr/bin/env bash
# clang 22 as a compiler on a GPU host that has none (docs/gpu.md, "clang 22
# cells built on the GPU host"): its 32 cores build the clang22-sm90 cells in
# a minute or two, against 30-60 on the 2-core build machine.
#   scripts/gpu-clang22.sh pack <file.tar.xz>   (build machine) the driver, the
#       offload tools, libclang-cpp and the resource headers of Debian's clang 22
#       (libLLVM, libomp and libomptarget travel in the bundle's libs.tar.xz)
#   source scripts/gpu-clang22.sh use <file.tar.xz>   (GPU host, checkout root,
#       after the bundle's libraries are unpacked into build/clang22-sm90/lib)
#       unpacks into build/cc22 and sets PATH (clang++-22 first, CUDA 13's ptxas
#       and nvlink next) and CLANG22_LIBS for LD_LIBRARY_PATH of the build
# Then: LD_LIBRARY_PATH=$CLANG22_LIBS portmatrix -gpu=1 -toolchains clang22-sm90 ... build
case ${1:-} in
pack)
  set -uo pipefail
  out=${2:?tar.xz file}
  src=/usr/lib/llvm-22
  tmp=$(mktemp -d); mkdir -p "$tmp/cc22/bin" "$tmp/cc22/lib/clang/22"
  for b in clang clang-linker-wrapper clang-nvlink-wrapper clang-offload-packager clang-offload-bundler llvm-offload-binary llvm-link; do
    cp -L "$src/bin/$b" "$tmp/cc22/bin/" || exit 1
  done
  ln -s clang "$tmp/cc22/bin/clang++-22"; ln -s clang "$tmp/cc22/bin/clang-22"; ln -s clang "$tmp/cc22/bin/clang++"
  cp -L "$(readlink -f "$src/lib/libclang-cpp.so.22.1")" "$tmp/cc22/lib/libclang-cpp.so.22.1"
  cp -a "$src/lib/clang/22/include" "$tmp/cc22/lib/clang/22/"
  # the driver links -lomptarget from its own lib folder: the bundle's copy
  ln -s ../../clang22-sm90/lib/libomptarget.so.22.1 "$tmp/cc22/lib/libomptarget.so"
  tar -C "$tmp" -cf - cc22 | xz ${PM_XZ:--9 -T2} >"$out"
  rm -rf "$tmp"; ls -l "$out"
  ;;
use)
  tarball=${2:?tar.xz file}
  [ -f build/clang22-sm90/lib/libLLVM.so.22.1 ] || { echo "gpu-clang22: unpack the bundle's libraries first (build/clang22-sm90/lib)" >&2; return 1 2>/dev/null || exit 1; }
  [ -x build/cc22/bin/clang ] || tar -C build -xJf "$tarball"
  # .toolchains/llvm22/lib/libomp.so points at the build machine's libomp.so.5
  ln -sfn "$PWD/build/clang22-sm90/lib/libomp.so.5" .toolchains/llvm22/lib/libomp.so
  export PATH=$PWD/build/cc22/bin:/usr/local/cuda/bin:$PATH
  export CLANG22_LIBS=$PWD/build/cc22/lib:$PWD/build/clang22-sm90/lib
  ;;
*) echo "usage: $0 pack <file.tar.xz> | source $0 use <file.tar.xz>" >&2; exit 2 ;;
esac
