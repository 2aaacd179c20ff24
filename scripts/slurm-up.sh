#!/usr/bin/env bash
# Starts a real one-node Slurm cluster on this machine, for the cluster
# integration test and for trying the Slurm scheduler locally, without systemd:
# munged, MariaDB + slurmdbd (so that sacct works as on a real cluster),
# slurmctld and slurmd (node ci1 on 127.0.0.1, this machine's CPUs as the
# resource, partition "debug"). Everything lives in WORKDIR (a fresh one per
# run: Slurm recovers old jobs from its state folder); clients find the
# cluster through SLURM_CONF=WORKDIR/slurm.conf. Installs Debian's packages
# when they are missing. Stop it with scripts/slurm-down.sh WORKDIR.
#   scripts/slurm-up.sh /tmp/pm-slurm && export SLURM_CONF=/tmp/pm-slurm/slurm.conf
set -euo pipefail
W=${1:?usage: slurm-up.sh WORKDIR}
mkdir -p "$W"; W=$(readlink -f "$W"); mkdir -p "$W"/{state,spool,log}
t0=$(date +%s%N)

pkgs=(slurmctld slurmd slurm-client slurmdbd munge mariadb-server)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

say() { echo "slurm-up: $*"; }
waitfor() { # seconds, description, command...
  local n=$1 what=$2; shift 2
  for _ in $(seq $((n * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "slurm-up: $what did not come up (logs in $W/log)" >&2; return 1
}

# munge: no systemd, so nobody makes /run/munge; munged must run as munge.
[ -s /etc/munge/munge.key ] || runuser -u munge -- mungekey --create
chown munge:munge /etc/munge/munge.key; chmod 0600 /etc/munge/munge.key
install -d -o munge -g munge -m 0755 /run/munge
munge_ok() { munge -n | unmunge; }
if ! munge_ok >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  waitfor 10 munged munge_ok
  cp /run/munge/munged.pid "$W/munged.pid"   # ours to stop
fi

# MariaDB for slurmdbd: our own server on the packaged datadir, localhost only.
install -d -o mysql -g mysql /run/mysqld
if ! mariadb-admin ping >/dev/null 2>&1; then
  mariadbd --user=mysql --datadir=/var/lib/mysql --socket=/run/mysqld/mysqld.sock \
    --bind-address=127.0.0.1 >"$W/log/mariadb.log" 2>&1 &
  echo $! >"$W/mariadb.bgpid"
  waitfor 60 mariadb mariadb-admin ping
fi
mariadb -e "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"

# A cluster name of its own per start: the accounting database outlives
# WORKDIR, and job ids start again at 1 with a fresh state folder.
CLUSTER=ci$(date +%s)
MEM=$(awk '/MemTotal/{print int($2/1024*0.9)}' /proc/meminfo)   # at most what slurmd sees
cat >"$W/slurm.conf" <<CONF
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/filetxt
JobCompLoc=$W/log/jobcomp.txt
NodeName=ci1 NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
cat >"$W/slurmdbd.conf" <<CONF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
LogFile=$W/log/slurmdbd.log
PidFile=$W/slurmdbd.pid
CONF
chmod 600 "$W/slurmdbd.conf"   # slurmdbd refuses a readable one
export SLURM_CONF=$W/slurm.conf

slurmdbd -D >"$W/log/slurmdbd.stderr" 2>&1 & echo $! >"$W/dbd.bgpid"
waitfor 30 slurmdbd sacctmgr -n list cluster
# The cluster must be known to the database before slurmctld starts.
sacctmgr -i add cluster "$CLUSTER" >/dev/null

slurmctld -D >"$W/log/slurmctld.stderr" 2>&1 & echo $! >"$W/ctld.bgpid"
slurmd -D -N ci1 >"$W/log/slurmd.stderr" 2>&1 & echo $! >"$W/slurmd.bgpid"
node_idle() { [ "$(sinfo -h -n ci1 -o %T)" = idle ]; }
if ! waitfor 60 "node ci1" node_idle; then sinfo -N -l >&2 || true; exit 1; fi
# Another Slurm on this machine holds the ports: ours exit, and sinfo answers
# from the other one. Refuse, rather than hand its cluster to the tests.
for f in dbd ctld slurmd; do
  kill -0 "$(cat "$W/$f.bgpid")" 2>/dev/null || { echo "slurm-up: our $f exited: is another Slurm running here? (logs in $W/log)" >&2; exit 1; }
done
say "up in $(( ($(date +%s%N) - t0) / 1000000 )) ms: export SLURM_CONF=$W/slurm.conf"
