#!/usr/bin/env bash
# Installs the Debian toolchains portmatrix builds GPU cells with:
# CUDA 11.8 (non-free), LLVM 22, 19 and 16 OpenMP offload, GCC 12 NVPTX offload,
# and the AMD gfx90a compilers (HIP 5.2's hipcc, LLVM 19 amdgcn offload:
# compile-checked only, docs/amd.md).
# LLVM 22's NVPTX device runtime is built by scripts/install-llvm22.sh into
# .toolchains/llvm22 (cached).
# LLVM 16's libomp conflicts with LLVM 19's as packages, so it is unpacked
# into a private prefix (.toolchains/llvm16) that toolchains.yaml points at.
# What it changes on the system: Debian packages (apt-get install), and
# the apt sources: non-free is added to /etc/apt/sources.list.d/debian.sources
# for CUDA 11.8 (printed when done). LLVM 22's source tarball comes through a
# private deb-src list, not the system's. Private files go to .toolchains/.
# Usage: scripts/install-toolchains.sh [cpu|amd|gpu]   (default gpu; gpu includes amd)
set -euo pipefail
what=${1:-gpu}
root=$(cd "$(dirname "$0")/.." && pwd)
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive

if [ "$what" = cpu ]; then
  command -v g++ >/dev/null || { $sudo apt-get update -qq; $sudo apt-get install -y -qq g++; }
  exit 0
fi

# AMD gfx90a (bookworm main): hipcc (HIP 5.2 on clang 15) with its runtime
# headers and library, the ROCm device libraries (ocml, ockl) both compilers
# link, and lld-19 (clang 19's amdgcn offload links with ld.lld).
amd_packages="clang-19 libomp-19-dev hipcc libamdhip64-dev rocm-device-libs lld-19"
if [ "$what" = amd ]; then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends $amd_packages
  exit 0
fi

# System change: CUDA 11.8 (nvidia-cuda-toolkit) is in Debian's non-free
# component, so the first "Components: main" line of the deb822 source gets
# contrib non-free non-free-firmware (said here when it happens; docs/gpu.md).
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
  echo "install-toolchains: editing $src: Components: main -> main contrib non-free non-free-firmware (for CUDA 11.8)"
  $sudo sed -i '0,/^Components: main$/s//Components: main contrib non-free non-free-firmware/' "$src"
elif [ ! -f "$src" ] && ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "install-toolchains: no non-free component in the apt sources and no $src to edit: add non-free for nvidia-cuda-toolkit" >&2
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
  g++ nvidia-cuda-toolkit clang-19 clang-tools-19 libomp-19-dev \
  clang-16 clang-tools-16 gcc-12-offload-nvptx xz-utils $amd_packages

prefix=$root/.toolchains/llvm16
if [ ! -f "$prefix/usr/lib/llvm-16/lib/libomptarget.so.16" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download libomp-16-dev libomp5-16 >/dev/null)
  mkdir -p "$prefix"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$prefix"; done
  rm -rf "$tmp"
fi
bash "$root/scripts/install-llvm22.sh" "$root/.toolchains/llvm22"
echo "toolchains installed"
