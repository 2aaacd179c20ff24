// Package smitest fakes nvidia-smi for tests that run it through PATH: a
// shell script that answers any --query-gpu field list for the GPUs it is
// given, selects one with -i (an index or a UUID), and, as a driver before
// compute_cap, refuses a query that asks for it.
package smitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/host"
)

// Script is the fake nvidia-smi for gpus; old makes it a driver without
// compute_cap. A field it does not know reads "[N/A]", as nvidia-smi's do
// where the driver has no value; memory.total has its unit unless the format
// says nounits.
func Script(old bool, gpus ...host.SMI) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
q="" sel="" mib=" MiB"
while [ $# -gt 0 ]; do
  case $1 in --query-gpu=*) q=${1#--query-gpu=};; --format=*nounits*) mib="";; -i) shift; sel=$1;; esac
  shift
done
`)
	if old {
		b.WriteString(`case ",$q," in *,compute_cap,*) echo 'Field "compute_cap" is not a valid field to query.' >&2; exit 2;; esac
`)
	}
	b.WriteString(`gpu() {
  [ -n "$sel" ] && [ "$sel" != "$1" ] && [ "$sel" != "$2" ] && return
  found=1 out="" IFS=,
  for f in $q; do
    case $f in index) v=$1;; uuid) v=$2;; name) v=$3;; driver_version) v=$4;; memory.total) v=$5$mib;; compute_cap) v=$6;; *) v="[N/A]";; esac
    out="${out:+$out, }$v"
  done
  echo "$out"
}
`)
	for _, g := range gpus {
		fmt.Fprintf(&b, "gpu %s %s %s %s %d %s\n", quote(g.Index), quote(g.UUID), quote(g.Name), quote(g.Driver), g.MemoryMiB, quote(g.ComputeCap))
	}
	b.WriteString(`[ -n "$found" ] || { echo "No devices were found"; exit 6; }
`)
	return b.String()
}

// Install writes Script as dir/nvidia-smi (dir to put first on PATH).
func Install(t testing.TB, dir string, old bool, gpus ...host.SMI) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(Script(old, gpus...)), 0o755); err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
