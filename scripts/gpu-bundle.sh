#!/usr/bin/env bash
# Packs what a GPU host needs to run GPU cells built here into a folder that
# git ignores (name it in the device call's carry): the static CLI, the build
# manifest, project.json (the names run.json records), the toolchains' binaries
# with their build keys (stamped into every record), and their runtime libraries,
# xz-packed.
# Usage: scripts/gpu-bundle.sh <dir> <toolchain,...>
#        (after: portmatrix -toolchains <toolchain,...> build)
set -euo pipefail
dir=${1:?bundle folder}; tcs=${2:?toolchain ids, comma-separated}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rm -rf "$dir" && mkdir -p "$dir/bin"
CGO_ENABLED=0 go build -ldflags='-s -w' -o "$dir/bin/portmatrix" ./cmd/portmatrix
git rev-parse HEAD > "$dir/COMMIT"
IFS=, read -ra ids <<< "$tcs"
libs=()
for id in "${ids[@]}"; do [ -d "build/$id/lib" ] && libs+=("$id/lib"); done
meta=(manifest.json); [ -f build/project.json ] && meta+=(project.json)
tar -C build --exclude='*/lib' --exclude='*.log' --exclude='*.failed' -cJf "$dir/build.tar.xz" "${meta[@]}" "${ids[@]}"
[ ${#libs[@]} -eq 0 ] || tar -C build -cJf "$dir/libs.tar.xz" "${libs[@]}"
du -sh "$dir"/*
