#!/usr/bin/env bash
# Installs LLVM/clang 22 OpenMP offload to NVPTX from Debian packages and
# builds the NVPTX device runtime that Debian does not ship
# (libomptarget-nvptx.bc, libompdevice.a) into a private prefix,
# <repo>/.toolchains/llvm22 by default, which toolchains.yaml (clang22-sm90)
# points at. libomp-22-dev (omp.h, ompx.h of LLVM 22) conflicts with
# libomp-19-dev as a package, so it is unpacked into the prefix too
# (include/), with lib/libomp.so pointing at the system's libomp.so.5,
# which libomp-22-dev itself would use (it depends on libomp5-19). The build is cached: it is redone only when the installed
# clang-22's upstream version differs from the one the runtime was built with.
#
# What it changes on the system: it installs the packages below with apt-get
# (clang-22 and liboffload-22 come from bookworm-security). It does not edit
# the system's apt sources: the source tarball is fetched through a private
# deb-src list for Debian unstable, in a temporary folder, and its sha256 is
# checked against that list's Sources index.
#
# Usage: scripts/install-llvm22.sh [prefix]
# Environment: PM_DEBIAN_MIRROR (default: the system's Debian mirror),
#              PM_LLVM22_SUITES (deb-src suites tried in order; default "unstable testing").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/.toolchains/llvm22}
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
say() { echo "install-llvm22: $*"; }
t0=$(date +%s)

# Not libomp-22-dev: installing it removes libomp-19-dev (clang19-sm90).
pkgs=(clang-22 clang-tools-22 llvm-22 liboffload-22-dev cmake ninja-build xz-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi
t1=$(date +%s)

# The device runtime must come from the same upstream version as the compiler.
pkgver=$(dpkg-query -W -f='${Version}' clang-22)   # e.g. 1:22.1.8-1~deb12u1
up=$(sed -E 's/^[0-9]+://; s/-[^-]*$//' <<<"$pkgver")  # 22.1.8
dev=$prefix/lib/nvptx64-nvidia-cuda
if [ -f "$dev/libomptarget-nvptx.bc" ] && [ -f "$dev/libompdevice.a" ] && [ -f "$prefix/include/ompx.h" ] &&
   [ "$(cat "$prefix/UPSTREAM" 2>/dev/null)" = "$up" ]; then
  say "NVPTX device runtime $up already in $dev (cached)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mirror=${PM_DEBIAN_MIRROR:-$(grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
  tr -d ' ' | sed 's:/$::' | head -1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}
mkdir -p "$work/apt/lists/partial"
O=(-o Dir::Etc::SourceList="$work/apt/src.list" -o Dir::Etc::SourceParts=/dev/null
   -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache::archives="$work/apt/archives")
tarball=llvm-toolchain-22_$up.orig.tar.xz
for suite in ${PM_LLVM22_SUITES:-unstable testing}; do
  echo "deb-src $mirror $suite main" >"$work/apt/src.list"
  say "looking for llvm-toolchain-22 $up in deb-src $mirror $suite"
  apt-get "${O[@]}" update -qq >/dev/null 2>&1 || continue
  src=$(apt-cache "${O[@]}" showsrc llvm-toolchain-22 2>/dev/null) || continue
  ver=$(awk -v u="1:$up-" '/^Version:/ && index($2,u)==1 {print $2; exit}' <<<"$src")
  [ -n "$ver" ] || continue
  # The orig tarball's sha256 from the Sources index (the .dsc itself may 404).
  sum=$(awk -v v="$ver" -v f="$tarball" '/^Version:/ {cur=$2} /^Checksums-Sha256:/ {sha=1; next}
        /^[^ ]/ {sha=0} sha && cur==v && $3==f {print $1; exit}' <<<"$src")
  (cd "$work" && apt-get "${O[@]}" source --download-only -qq "llvm-toolchain-22=$ver" >/dev/null 2>&1) || true
  if [ -f "$work/$tarball" ] && [ -n "$sum" ] && echo "$sum  $work/$tarball" | sha256sum -c --quiet; then
    say "got $tarball from $suite (sha256 $sum)"
    break
  fi
  rm -f "$work/$tarball"
done
if [ ! -f "$work/$tarball" ]; then
  say "no source tarball for llvm-toolchain-22 $up found (tried: ${PM_LLVM22_SUITES:-unstable testing} on $mirror)" >&2
  exit 1
fi
t2=$(date +%s)

top=llvm-toolchain-22_$up
tar -C "$work" -xJf "$work/$tarball" "$top/runtimes" "$top/cmake" "$top/openmp" \
  "$top/offload/include" "$top/llvm/cmake" "$top/libc/shared"
rm -f "$work/$tarball"
t3=$(date +%s)

# LLVM 22 builds the device runtime from openmp/device through runtimes/.
# No LLVM_DIR (it would need libclang-22-dev); tests off (no llvm-lit here).
bin=/usr/lib/llvm-22/bin
cmake -G Ninja -S "$work/$top/runtimes" -B "$work/build" -Wno-dev \
  -DLLVM_ENABLE_RUNTIMES=openmp -DCMAKE_BUILD_TYPE=Release -DLLVM_INCLUDE_TESTS=OFF \
  -DCMAKE_C_COMPILER=$bin/clang -DCMAKE_CXX_COMPILER=$bin/clang++ \
  -DCMAKE_C_COMPILER_TARGET=nvptx64-nvidia-cuda -DCMAKE_CXX_COMPILER_TARGET=nvptx64-nvidia-cuda \
  -DCMAKE_C_COMPILER_WORKS=ON -DCMAKE_CXX_COMPILER_WORKS=ON -DCMAKE_ASM_COMPILER_WORKS=ON \
  -DLLVM_DEFAULT_TARGET_TRIPLE=nvptx64-nvidia-cuda -DLLVM_ENABLE_PER_TARGET_RUNTIME_DIR=ON \
  -DCMAKE_INSTALL_PREFIX="$work/install" >"$work/cmake.log" 2>&1 ||
  { tail -30 "$work/cmake.log" >&2; exit 1; }
ninja -C "$work/build" install >"$work/ninja.log" 2>&1 || { tail -30 "$work/ninja.log" >&2; exit 1; }
for f in libomptarget-nvptx.bc libompdevice.a; do
  [ -s "$work/install/lib/nvptx64-nvidia-cuda/$f" ] || { say "the build made no $f" >&2; exit 1; }
done

# omp.h and ompx.h of LLVM 22, from the libomp-22-dev of the installed clang.
(cd "$work" && apt-get download -qq "libomp-22-dev=$pkgver" >/dev/null)
dpkg -x "$work"/libomp-22-dev_*.deb "$work/omp22"
rm -rf "$prefix" && mkdir -p "$dev" "$prefix/include"
cp "$work/install/lib/nvptx64-nvidia-cuda/libomptarget-nvptx.bc" "$work/install/lib/nvptx64-nvidia-cuda/libompdevice.a" "$dev/"
cp "$work"/omp22/usr/lib/llvm-22/lib/clang/22/include/*.h "$prefix/include/"
ln -s /usr/lib/x86_64-linux-gnu/libomp.so.5 "$prefix/lib/libomp.so"
echo "$up" >"$prefix/UPSTREAM"
echo "clang-22 $pkgver; device runtime built from $tarball; include/ from libomp-22-dev $pkgver" >"$prefix/PROVENANCE"
t4=$(date +%s)
say "NVPTX device runtime $up in $dev"
say "seconds: packages $((t1 - t0)), source $((t2 - t1)), extract $((t3 - t2)), build $((t4 - t3)), total $((t4 - t0))"
