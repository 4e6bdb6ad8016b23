#!/usr/bin/env bash
# A one-node Slurm for the tests: munged and slurmctld/slurmd of Debian's
# packages (munge, slurmctld, slurmd, slurm-client), everything under one
# directory (configuration, sockets, state, logs, on ports 16817/16818), as
# root. Sourced: slurm_up DIR starts it and exports SLURM_CONF; slurm_down
# stops it. slurm_up returns 1 and sets SLURM_SKIP (the reason) where it
# cannot start: not root, packages missing, or the daemons do not come up.
slurm_up() {
  local dir=$1
  SLURM_SKIP=""
  if [[ $(id -u) -ne 0 ]]; then SLURM_SKIP="not root (slurmd and munged run as root here)"; return 1; fi
  for b in munged slurmctld slurmd srun salloc sinfo; do
    command -v "$b" >/dev/null || { SLURM_SKIP="$b not installed (apt-get install munge slurmctld slurmd slurm-client)"; return 1; }
  done
  [[ -r /etc/munge/munge.key ]] || { SLURM_SKIP="no /etc/munge/munge.key"; return 1; }
  mkdir -p "$dir/state" "$dir/spool"
  local host cpus
  host=$(hostname -s)
  cpus=8  # more tasks than the machine's cores, as the MPI tests run (config_overrides)
  munged --force --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
    --seed-file="$dir/munged.seed" --key-file=/etc/munge/munge.key 2>"$dir/munged.err" \
    || { SLURM_SKIP="munged did not start: $(cat "$dir/munged.err")"; return 1; }
  cat >"$dir/slurm.conf" <<CONF
ClusterName=hetcolltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$dir/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -c 2>"$dir/slurmctld.err" || { SLURM_SKIP="slurmctld did not start: $(tail -3 "$dir/slurmctld.err")"; slurm_down "$dir"; return 1; }
  slurmd 2>"$dir/slurmd.err" || { SLURM_SKIP="slurmd did not start: $(tail -3 "$dir/slurmd.err")"; slurm_down "$dir"; return 1; }
  local i
  for i in $(seq 1 60); do
    if sinfo -h -o "%T" 2>/dev/null | grep -q "idle"; then return 0; fi
    sleep 0.5
  done
  SLURM_SKIP="the node did not become idle in 30 s: $(sinfo -h 2>&1 | head -2) $(tail -3 "$dir/slurmctld.log" 2>/dev/null)"
  slurm_down "$dir"
  return 1
}

slurm_down() {
  local dir=$1 f
  for f in slurmd slurmctld munged; do
    if [[ -s "$dir/$f.pid" ]]; then kill "$(cat "$dir/$f.pid")" 2>/dev/null || true; fi
  done
  sleep 0.5
  for f in slurmd slurmctld munged; do
    if [[ -s "$dir/$f.pid" ]] && kill -0 "$(cat "$dir/$f.pid")" 2>/dev/null; then kill -9 "$(cat "$dir/$f.pid")" 2>/dev/null || true; fi
  done
}
