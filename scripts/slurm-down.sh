#!/usr/bin/env bash
# Stops what scripts/slurm-up.sh WORKDIR started, by the PIDs it recorded:
# slurmd, slurmctld, slurmdbd, MariaDB, munged (SIGTERM, then SIGKILL).
W=$(readlink -f "${1:?usage: slurm-down.sh WORKDIR}")
waitpids() { for _ in $(seq 100); do local a=0; for p in "$@"; do kill -0 "$p" 2>/dev/null && a=1; done; [ $a = 0 ] && return 0; sleep 0.1; done; return 1; }
for f in slurmd.bgpid ctld.bgpid dbd.bgpid mariadb.bgpid munged.pid; do
  [ -s "$W/$f" ] || continue
  p=$(cat "$W/$f")
  kill -TERM "$p" 2>/dev/null && { waitpids "$p" || kill -KILL "$p" 2>/dev/null; }
  rm -f "$W/$f"
done
exit 0
