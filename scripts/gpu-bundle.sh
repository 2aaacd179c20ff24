#!/usr/bin/env bash
# Packs what a GPU host needs to run the GPU cells built here into bundle/
# (ignored by git, named in the device call's carry): the static CLI, the
# build manifest and binaries, and the toolchains' runtime libraries, xz-packed.
# Usage: scripts/gpu-bundle.sh    (after: portmatrix -toolchains <gpu ids> build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rm -rf bundle && mkdir -p bundle/bin
CGO_ENABLED=0 go build -o bundle/bin/portmatrix ./cmd/portmatrix
git rev-parse HEAD > bundle/COMMIT
# Binaries and manifest; the libraries go into one xz archive (about 4x smaller).
tar -C build --exclude='*/lib' --exclude='*.log' --exclude='*.key' -cf bundle/build.tar .
tar -C build -cJf bundle/libs.tar.xz $(cd build && ls -d */lib 2>/dev/null)
du -sh bundle/*
