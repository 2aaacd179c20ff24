#!/usr/bin/env bash
# Packs what a GPU host needs to run the GPU cells built here into a folder
# (git ignores bundle*/; name it in what a GPU host job carries), all xz-packed:
#   portmatrix.xz  the static CLI (no Go there)
#   src.tar.xz     templates/, variants/, machines/, generated/, harness/, toolchains.yaml
#                  and scripts/gpu-run.sh: what the CLI reads, for use outside a checkout
#   build.tar.xz   build/manifest.json, build/project.json (the names run.json
#                  records) and the listed toolchains' binaries with their build
#                  keys (stamped into every record)
#   libs.tar.xz    their runtime libraries (build/<toolchain>/lib), each file once
#   COMMIT         the commit the binaries were built from
# Cells the GPU host builds itself (nvcc-sm90 with its newest nvcc, see
# gpu-run.sh) need not be listed.
# Usage: scripts/gpu-bundle.sh <dir> <toolchain,...>
#        (after: PM_SUITE=full go run mage.go build, or portmatrix -suite full -toolchains <toolchain,...> build)
# Environment: PM_XZ (default "-9 -T2"): xz options for the libraries.
set -euo pipefail
dir=${1:?bundle folder}; tcs=${2:?toolchain ids, comma-separated}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f build/manifest.json ] || { echo "gpu-bundle: no build/manifest.json: build first" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/portmatrix" ./cmd/portmatrix
xz -9 -T2 -c "$tmp/portmatrix" >"$dir/portmatrix.xz"
git rev-parse HEAD >"$dir/COMMIT"
tar -cJf "$dir/src.tar.xz" templates variants machines generated harness toolchains.yaml scripts/gpu-run.sh

IFS=, read -ra ids <<<"$tcs"
for id in "${ids[@]}"; do
  [ -d "build/$id" ] || { echo "gpu-bundle: build/$id does not exist: build $id first" >&2; exit 1; }
done
# build/probes: the capability probes, when kept there by
# PM_PROBE_OUT=$PWD/build/probes go test -run TestProbes ./internal/toolchain/
extra=(); [ -d build/probes ] && extra=(probes)
[ -f build/project.json ] && extra+=(project.json)
# build/deviceprops: the device query that run and tune check the GPU with
# against its machine model (docs/machines.md); CUDA runtime only, no kernel.
if command -v nvcc >/dev/null && nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu; then
  extra+=(deviceprops)
fi
# A hard-linked snapshot first, so a build still running for other
# toolchains or kernels cannot change files under tar.
snap=$tmp/build
mkdir -p "$snap"
for f in manifest.json "${ids[@]}" "${extra[@]}"; do cp -al "build/$f" "$snap/"; done
tar -C "$snap" --exclude='*/lib' --exclude='*.log' --exclude='*.failed' \
  -cJf "$dir/build.tar.xz" manifest.json "${ids[@]}" "${extra[@]}"

# Libraries: toolchains share some (libz3.so.4, libomp.so.5); identical files
# become hard links in the archive, so each is packed once.
stage=$tmp/libs
declare -A seen=()
n=0
for id in "${ids[@]}"; do
  [ -d "build/$id/lib" ] || continue
  mkdir -p "$stage/$id/lib"
  for f in "build/$id/lib"/*; do
    name=$(basename "$f")
    if [ -L "$f" ]; then cp -P "$f" "$stage/$id/lib/$name"; continue; fi
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    if [ -n "${seen[$sum]:-}" ]; then ln "${seen[$sum]}" "$stage/$id/lib/$name"
    else cp "$f" "$stage/$id/lib/$name"; seen[$sum]=$stage/$id/lib/$name; fi
  done
  n=$((n + 1))
done
if [ "$n" -gt 0 ]; then
  raw=$(du -sb "$stage" | cut -f1)
  t0=$(date +%s)
  # shellcheck disable=SC2086
  tar -C "$stage" -cf - . | xz ${PM_XZ:--9 -T2} >"$dir/libs.tar.xz"
  echo "gpu-bundle: libraries $((raw / 1048576)) MiB unpacked, xz in $(($(date +%s) - t0)) s"
fi
ls -l "$dir" | awk 'NR>1 {printf "%10.1f MiB  %s\n", $5/1048576, $9}'
total=$(du -sb "$dir" | cut -f1)
echo "gpu-bundle: $dir holds $((total / 1048576)) MiB ($total bytes)"
[ "$total" -le $((64 * 1048576)) ] || echo "gpu-bundle: over 64 MiB: split the toolchains over two bundles" >&2
