#!/usr/bin/env bash
# Makes the LAMMPS reference outputs that internal/testsnap checks our SNAP
# (harness/snap) against: LAMMPS's own ML-SNAP, built from Debian's `lammps`
# source package, computes energies, forces and per-atom bispectra for a few
# perturbed bcc tungsten configurations with the 2J8 W potential (W_2940_2017_2,
# shipped in the source tree's potentials/) and one 2J6 variant of it.
# Outputs: internal/testsnap/testdata/<config>.{snapparam,snapcoeff,dump},
# the dumps as LAMMPS writes them (dump custom; positions are taken from
# them, so LAMMPS's random numbers need not be reproduced). Build tree: build/testsnap-lammps (git-ignored), about 3-5 min.
# Usage: scripts/testsnap-reference.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/build/testsnap-lammps
out=$root/internal/testsnap/testdata
sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$work" "$out"

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" xz-utils
fi

# 1. LAMMPS source from the system release's deb-src, through a private source
#    list so that the system's apt configuration is left alone.
lmp=$work/build/lmp
if [ ! -x "$lmp" ]; then
  apt=$work/apt; mkdir -p "$apt/lists/partial"
  mirror=$( (grep -rhoE 'https?://[^ ]*/debian$' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true) | sed -n 1p)
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  echo "deb-src $mirror $suite main" > "$apt/src.list"
  O=(-o Dir::Etc::SourceList="$apt/src.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$apt/lists")
  apt-get "${O[@]}" update -qq
  (cd "$work" && apt-get "${O[@]}" source --download-only lammps)
  dsc=$(ls "$work"/lammps_*.dsc | head -1)
  rm -rf "$work/src"
  dpkg-source --no-check -x "$dsc" "$work/src" >/dev/null
  cmake -S "$work/src/cmake" -B "$work/build" -D PKG_ML-SNAP=on -D BUILD_MPI=off -D BUILD_OMP=off \
    -D CMAKE_BUILD_TYPE=Release -D CMAKE_DISABLE_FIND_PACKAGE_MPI=ON -D WITH_JPEG=off -D WITH_PNG=off \
    -D WITH_FFMPEG=off -D WITH_GZIP=off -D BUILD_TOOLS=off -D BUILD_SHARED_LIBS=off >"$work/cmake.log"
  make -C "$work/build" -j"$(nproc)" lmp >"$work/make.log"
fi
pot=$work/src/potentials
[ -f "$pot/W_2940_2017_2.snapcoeff" ] || { echo "no W_2940_2017_2 potential in $pot" >&2; exit 1; }

# 2. Configurations: name cells displacement(A) seed twojmax shape
#    shape: ortho (id type x y z fx fy fz c_pe c_sna[*]); tri (a triclinic
#    box, scaled positions, columns out of order); steps (three timesteps
#    of a short NVE run, unwrapped positions, no bispectrum); md (the paper's
#    2000 atoms after 100 NVE steps from 3000 K, a benchmark input for
#    PM_SNAP_DUMP: positions, forces, energies).
configs=(
  "w2j8_c1_d010 1 0.10 4711 8 ortho"
  "w2j8_c2_d005 2 0.05 1234 8 ortho"
  "w2j8_c2_d025 2 0.25 9876 8 ortho"
  "w2j6_c2_d015 2 0.15 2468 6 ortho"
  "w2j8_tri_c3_d010 3 0.10 1357 8 tri"
  "w2j8_steps_c2 2 0.05 8642 8 steps"
  "w2j8_md_c10 10 0.05 2024 8 md"
)
for c in "${configs[@]}"; do
  read -r name cells disp seed twojmax shape <<<"$c"
  run=$work/run/$name; mkdir -p "$run"
  if [ "$twojmax" = 8 ]; then
    cp "$pot/W_2940_2017_2.snapparam" "$run/pot.snapparam"
    cp "$pot/W_2940_2017_2.snapcoeff" "$run/pot.snapcoeff"
  else
    # The W potential's parameters at a smaller twojmax, with its first
    # coefficients: not a physical potential, a test of twojmax as a parameter.
    # Components j2 <= j1 <= j: sum_{k=1}^{m+1} k^2 for m = twojmax/2 (55 for 8).
    m=$(( twojmax / 2 ))
    ncoeff=$(( (m + 1) * (m + 2) * (2 * m + 3) / 6 ))
    [ $(( twojmax % 2 )) = 0 ] || { echo "odd twojmax unsupported here" >&2; exit 1; }
    sed -E "s/^twojmax .*/twojmax $twojmax/" "$pot/W_2940_2017_2.snapparam" > "$run/pot.snapparam"
    awk -v n=$((ncoeff + 1)) '
      /^[[:space:]]*#/ || NF == 0 { next }
      h == 0 { print "1 " n; h = 1; next }
      h == 1 { print; h = 2; next }
      k < n { print; k++ }' "$pot/W_2940_2017_2.snapcoeff" > "$run/pot.snapcoeff"
  fi
  grep -v '^#' "$run/pot.snapparam" | awk 'NF' > "$run/p"
  rcutfac=$(awk '$1=="rcutfac"{print $2}' "$run/p")
  rfac0=$(awk '$1=="rfac0"{print $2}' "$run/p")
  rmin0=$(awk '$1=="rmin0"{print $2}' "$run/p")
  # The tilted box: each tilt one lattice constant, so the bcc lattice stays
  # periodic in it.
  region="region box block 0 $cells 0 $cells 0 $cells"
  columns="id type x y z fx fy fz c_pe c_sna[*]"
  steps="run 0"
  before=""
  case $shape in
    tri) region="region box prism 0 $cells 0 $cells 0 $cells 1 1 1"
         columns="c_sna[*] fz fy fx c_pe zs type ys id xs" ;;
    steps) columns="id type xu yu zu fx fy fz c_pe"
           steps="velocity all create 3000 $seed loop geom
fix nve all nve
run 2" ;;
    md) columns="id type x y z fx fy fz c_pe"
        before="velocity all create 3000 $seed loop geom
fix nve all nve
run 100" ;;
  esac
  cat > "$run/in.lmp" <<IN
units metal
boundary p p p
atom_modify map array
lattice bcc 3.1803
$region
create_box 1 box
create_atoms 1 box
mass 1 183.84
displace_atoms all random $disp $disp $disp $seed units box
pair_style snap
pair_coeff * * pot.snapcoeff pot.snapparam W
compute pe all pe/atom
compute sna all sna/atom $rcutfac $rfac0 $twojmax 0.5 1.0 rmin0 $rmin0 bzeroflag 0 quadraticflag 0 switchflag 1
thermo_style custom step pe
thermo_modify format float %.17g
$before
dump d all custom 1 dump.txt $columns
dump_modify d format float %.17g sort id
$steps
IN
  (cd "$run" && "$lmp" -in in.lmp -log log.lammps -screen none)
  cp "$run/pot.snapparam" "$out/$name.snapparam"
  cp "$run/pot.snapcoeff" "$out/$name.snapcoeff"
  # The dump as LAMMPS wrote it, after two comment lines of provenance.
  {
    echo "# LAMMPS $(head -1 "$run/log.lammps" | sed 's/^LAMMPS (\(.*\))$/\1/'), pair_style snap + compute sna/atom (bzeroflag 0): bcc W a=3.1803, ${cells}^3 cells ($shape), random displacement $disp A (seed $seed), twojmax $twojmax"
    echo "# made by scripts/testsnap-reference.sh"
    cat "$run/dump.txt"
  } > "$out/$name.dump"
  echo "$name: $(awk '/ITEM: NUMBER OF ATOMS/{getline; print; exit}' "$run/dump.txt") atoms"
done
echo "reference outputs in $out"
