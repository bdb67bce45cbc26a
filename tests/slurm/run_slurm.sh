#!/bin/bash
# run_slurm.sh --mpi pmix|pmi2 --have-pmix 0|1 [--kvs KVS_CHECK]
#              [--case NAME NP PROGRAM [ARGS...]]...
#              [--fail-case NAME NP STATUS REGEX [VAR=VALUE...] -- PROGRAM [ARGS...]]...
#
# Starts a private one-node Slurm cluster on this machine (munged, slurmctld
# and slurmd from Debian's slurm-wlm, run directly, no systemd), runs each
# case under 'srun --mpi=MPI -N 1 -n NP' on libfabric's shm and tcp
# providers (LCI_BACKEND=ofi; tcp on lo), and stops the cluster again.
#
# Every case is forced onto the bootstrap that the plugin must give it, so
# that a wrong detection fails loudly instead of running NP jobs of one:
#   --mpi=pmix  LCI_PMI=pmix (the PMIx client, lci/bootstrap/pmix.cpp);
#   --mpi=pmi2  LCI_PMI=pmi1: Slurm's mpi/pmi2 plugin hands each task PMI_FD,
#               PMI_RANK, PMI_SIZE and PMI_JOBID and answers the PMI-1 wire
#               protocol on that descriptor (as well as PMI-2, chosen by the
#               version in the client's first "cmd=init" line), so the PMI-1
#               client (lci/bootstrap/pmi1.cpp) serves it.
# Before the cases, KVS_CHECK (tests/launcher/kvs_check.cpp) runs on 4 ranks
# with the bootstrap left to detection, and with LCI 1.7.9's LCT_PMI_BACKEND
# list "pmix,pmi2,pmi1" instead of LCI_PMI: both must pick the bootstrap
# above and see all 4 ranks (skipped without --kvs).
#
# A --fail-case is a job in which a rank fails and the others must run on
# (LCI_PEER_FAILURE=continue, docs/failure.md): it runs once, with LCI_PMI
# as above and the given variables (no provider loop), under
# 'srun --kill-on-bad-exit=0' (-K0: a task that fails does not end the
# step; -W 30 bounds the wait for the others), and passes when srun exits
# with STATUS and its stdout matches the extended regex REGEX.
#
# Exit status: 0 when every run passed; 77 (ctest's SKIP_RETURN_CODE) with
# "SKIPPED: reason" when this machine cannot run the test (not root, Slurm or
# munge not installed, no mpi/pmix plugin, LCI built without PMIx); 1
# otherwise. Everything is bounded in time: each daemon's start (30 s), each
# srun (LCIT_SLURM_SRUN_TIMEOUT, default 60 s, then SIGKILL 5 s later).
#
# The cluster lives in a fresh temporary directory: its slurm.conf, munge
# key and socket, state, spool and logs. Its ports are picked below 32768
# (under Linux's ephemeral range) and checked to be free. At exit (also on
# failure, timeout or a signal) every process of this run is killed by its
# PID: the daemons started here and whatever they started (slurmstepd and
# the tasks, which Slurm reparents to init), found by the variable
# LCIT_SLURM_RUN=<temporary directory> that only this run's processes carry.
# Logs of a failed run are printed before the directory is removed.
set -u

SKIP=77
mpi=""
have_pmix=0
kvs=""
cases=()  # each: "NAME<TAB>NP<TAB>PROGRAM ARGS..." (no tabs inside)
# each: "NAME<US>NP<US>STATUS<US>REGEX<US>VARS<US>PROGRAM ARGS..." (US: the
# unit separator, \x1f, which unlike a tab keeps an empty VARS a field)
fail_cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi) mpi=${2:?}; shift 2 ;;
    --have-pmix) have_pmix=${2:?}; shift 2 ;;
    --kvs) kvs=${2:?}; shift 2 ;;
    --case)
      shift
      [ $# -ge 3 ] || { echo "run_slurm.sh: --case needs NAME NP PROGRAM" >&2; exit 2; }
      c="$1"$'\t'"$2"$'\t'"$3"
      shift 3
      while [ $# -gt 0 ] && [ "$1" != --case ] && [ "$1" != --fail-case ]; do c+=" $1"; shift; done
      cases+=("$c")
      ;;
    --fail-case)
      shift
      [ $# -ge 6 ] ||
        { echo "run_slurm.sh: --fail-case needs NAME NP STATUS REGEX [VAR=VALUE...] -- PROGRAM" >&2; exit 2; }
      c="$1"$'\x1f'"$2"$'\x1f'"$3"$'\x1f'"$4"$'\x1f'
      shift 4
      while [ $# -gt 0 ] && [ "$1" != -- ]; do c+="$1 "; shift; done
      [ $# -ge 2 ] || { echo "run_slurm.sh: --fail-case: no -- PROGRAM" >&2; exit 2; }
      shift
      c+=$'\x1f'"$1"
      shift
      while [ $# -gt 0 ] && [ "$1" != --case ] && [ "$1" != --fail-case ]; do c+=" $1"; shift; done
      fail_cases+=("$c")
      ;;
    *) echo "run_slurm.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$mpi" in
  pmix) lci_pmi=pmix ;;
  pmi2) lci_pmi=pmi1 ;;
  *) echo "run_slurm.sh: --mpi must be pmix or pmi2" >&2; exit 2 ;;
esac

srun_timeout=${LCIT_SLURM_SRUN_TIMEOUT:-60}
start_timeout=30

skip() {
  echo "run_slurm.sh: SKIPPED: $*"
  exit "$SKIP"
}
fail() {
  echo "run_slurm.sh: FAILED: $*" >&2
  failed=1
  exit 1
}

[ -z "${LCIT_SLURM_FAKE_NO_PRIVILEGE:-}" ] || skip "LCIT_SLURM_FAKE_NO_PRIVILEGE is set"
[ "$(id -u)" -eq 0 ] ||
  skip "slurmd must run as root to start tasks (running as uid $(id -u))"
for tool in munged munge slurmctld slurmd srun scontrol sinfo; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not installed (Debian: apt-get install slurm-wlm munge)"
done
if [ "$mpi" = pmix ] && [ "$have_pmix" != 1 ]; then
  skip "LCI was built without PMIx, so srun --mpi=pmix has no client to talk to"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lci-slurm.XXXXXX") || fail "mktemp"
# munged insists that every directory on its socket's path is searchable by
# all, and that none on its key's path is writable by others.
chmod 755 "$work"
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log" "$work/out"
marker="LCIT_SLURM_RUN=$work"
failed=0
srun_pid=""

# PIDs of every process that carries this run's marker in its environment.
# Read from /proc/PID/environ, which a process cannot hide from root; this
# shell does not carry the marker (it is passed to children with env only).
run_pids() {
  local e pid
  for e in /proc/[0-9]*/environ; do
    pid=${e#/proc/}
    pid=${pid%/environ}
    [ "$pid" != "$$" ] || continue
    # A process may end (or be another user's) between the glob and the read.
    if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "$marker"; then echo "$pid"; fi
  done
}

cleanup() {
  local status=$? pid pids try
  trap - EXIT INT TERM HUP
  if [ -n "$srun_pid" ]; then kill -KILL "$srun_pid" 2>/dev/null; fi
  # TERM first (slurmd and slurmctld save state, slurmstepd ends its tasks),
  # then KILL for anything of this run still there 3 s later.
  pids=$(run_pids)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for try in $(seq 1 30); do
      pids=$(run_pids)
      [ -n "$pids" ] || break
      sleep 0.1
    done
    if [ -n "$pids" ]; then
      echo "run_slurm.sh: killing leftover processes of this run: $pids" >&2
      # shellcheck disable=SC2086
      kill -KILL $pids 2>/dev/null
    fi
  fi
  if [ "$status" -ne 0 ] && [ "$status" -ne "$SKIP" ]; then
    for f in "$work"/log/*.log "$work"/munge/munged.log; do
      [ -s "$f" ] || continue
      echo "---- last lines of $f" >&2
      tail -n 40 "$f" >&2
    done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---- ports: three free ones and a range of 40 for srun, all below 32768.
port_in_use() {  # port
  local hex
  hex=$(printf '%04X' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" {f=1} END {exit !f}'
}
base=""
for try in $(seq 1 50); do
  cand=$((20000 + (RANDOM % 250) * 48))
  busy=0
  for p in $(seq "$cand" $((cand + 43))); do
    if port_in_use "$p"; then busy=1; break; fi
  done
  if [ "$busy" -eq 0 ]; then base=$cand; break; fi
done
[ -n "$base" ] || fail "found no 44 free consecutive ports in 20000-31999"
ctld_port=$base
slurmd_port=$((base + 1))
srun_ports="$((base + 4))-$((base + 43))"

host=$(hostname -s 2>/dev/null || hostname)
[ -n "$host" ] || fail "this machine has no host name"

# ---- munge: its own key and socket.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none ||
  fail "cannot write a munge key"
chmod 400 "$work/munge/munge.key"
sock="$work/munge/munge.sock"

cat >"$work/slurm.conf" <<EOF
# A one-node cluster for LCI's tests (tests/slurm/run_slurm.sh).
ClusterName=lcitest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SrunPortRange=$srun_ports
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, no accounting: nothing outside this directory is touched.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# Four CPUs whatever the machine has: -n 4 fits on one node.
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=lcitest Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF

# Runs a command with this run's marker and configuration.
in_run() {
  env "$marker" SLURM_CONF="$work/slurm.conf" "$@"
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local seconds=$1 what=$2 deadline
  shift 2
  deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "$what within $seconds s"
    sleep 0.2
  done
}

echo "run_slurm.sh: starting munged, slurmctld and slurmd in $work (ports $ctld_port, $slurmd_port, $srun_ports)"
in_run munged --foreground --socket="$sock" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed" >"$work/log/munged.out" 2>&1 &
munged_pid=$!
munge_ok() { munge -n -S "$sock" | unmunge -S "$sock"; }
wait_for "$start_timeout" "munged did not answer on $sock" munge_ok

in_run slurmctld -D -c -f "$work/slurm.conf" >"$work/log/slurmctld.out" 2>&1 &
ctld_pid=$!
ctld_up() { kill -0 "$ctld_pid" && in_run scontrol ping | grep -q 'is UP'; }
wait_for "$start_timeout" "slurmctld did not come up" ctld_up

in_run slurmd -D -f "$work/slurm.conf" >"$work/log/slurmd.out" 2>&1 &
slurmd_pid=$!
node_idle() {
  kill -0 "$slurmd_pid" && [ "$(in_run sinfo -h -n "$host" -o %t)" = idle ]
}
wait_for "$start_timeout" "node $host did not become idle" node_idle
echo "run_slurm.sh: cluster up (munged $munged_pid, slurmctld $ctld_pid, slurmd $slurmd_pid)"

# srun must offer the plugin (Debian: mpi_pmix_v4.so in slurm-wlm-basic-plugins).
plugins=$(in_run srun --mpi=list 2>&1)
if ! grep -qw "$mpi" <<<"$plugins"; then
  if [ "$mpi" = pmix ]; then
    skip "srun --mpi=list offers no pmix plugin: $(tr '\n' ' ' <<<"$plugins")"
  fi
  fail "srun --mpi=list offers no $mpi plugin: $plugins"
fi

# run_srun LABEL NP [VAR=VALUE...] -- PROGRAM [ARGS...]: one srun, bounded.
# Passes when srun exits with $want_status (0 unless the caller sets it) and,
# when $want_stdout is set, its stdout matches that extended regex; srun's
# options are $srun_opts (a failing task ends the step unless set otherwise).
runs=0
want_status=0
want_stdout=""
srun_opts=(-K1 -W 15)
run_srun() {
  local label=$1 np=$2 start end status
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  local log="$work/out/run$runs"
  runs=$((runs + 1))
  start=$(date +%s%N)
  # -K1: a failing task ends the step; -W 15: the others get 15 s after the
  # first one exits; -t 2: slurmctld's own limit, behind the timeout below.
  # (--fail-case: -K0 -W 30.)
  # The bootstrap variables of the environment this test runs in are cleared;
  # each run sets its own.
  env -u LCI_PMI -u LCT_PMI_BACKEND "$marker" SLURM_CONF="$work/slurm.conf" "${vars[@]}" \
    timeout -k 5 "$srun_timeout" \
    srun --mpi="$mpi" -N 1 -n "$np" "${srun_opts[@]}" -t 2 "$@" >"$log.out" 2>"$log.err" &
  srun_pid=$!
  wait "$srun_pid"
  status=$?
  srun_pid=""
  end=$(date +%s%N)
  local why=""
  if [ "$status" -ne "$want_status" ]; then
    why="with status $status (expected $want_status)"
  elif [ -n "$want_stdout" ] && ! grep -Eq -- "$want_stdout" "$log.out"; then
    why="with status $status but stdout does not match /$want_stdout/"
  fi
  if [ -n "$why" ]; then
    echo "run_slurm.sh: $label: FAILED $why after $(((end - start) / 1000000)) ms" \
      "($( [ "$status" -eq 124 ] && echo "timed out after $srun_timeout s; " )" \
      "env ${vars[*]} srun --mpi=$mpi -n $np ${srun_opts[*]} $*)" >&2
    echo "---- stdout" >&2
    tail -n 30 "$log.out" >&2
    echo "---- stderr" >&2
    tail -n 30 "$log.err" >&2
    failed=1
    return 1
  fi
  echo "run_slurm.sh: $label: passed in $(((end - start) / 1000000)) ms"
}

# Detection alone, and LCI 1.7.9's LCT_PMI_BACKEND, must find all 4 ranks.
if [ -n "$kvs" ]; then
  run_srun "kvs_check, bootstrap detected" 4 -- "$kvs" 4 "$lci_pmi"
  run_srun "kvs_check, LCT_PMI_BACKEND=pmix,pmi2,pmi1" 4 LCT_PMI_BACKEND=pmix,pmi2,pmi1 -- \
    "$kvs" 4 "$lci_pmi"
fi

for prov in shm tcp; do
  prov_env=(LCI_BACKEND=ofi FI_PROVIDER=$prov LCI_PMI=$lci_pmi)
  [ "$prov" = tcp ] && prov_env+=(FI_TCP_IFACE=lo)
  for c in "${cases[@]}"; do
    IFS=$'\t' read -r name np cmd <<<"$c"
    # shellcheck disable=SC2086
    run_srun "$name.$prov" "$np" "${prov_env[@]}" -- $cmd
  done
done

# Jobs in which a rank fails: the others must run on and finish.
for c in "${fail_cases[@]}"; do
  IFS=$'\x1f' read -r name np want_status want_stdout vars cmd <<<"$c"
  srun_opts=(-K0 -W 30)
  # shellcheck disable=SC2086
  run_srun "$name" "$np" LCI_PMI="$lci_pmi" $vars -- $cmd
done
want_status=0
want_stdout=""
srun_opts=(-K1 -W 15)

[ "$failed" -eq 0 ] || fail "$mpi: some runs failed (see above)"
echo "run_slurm.sh: passed: srun --mpi=$mpi, $runs runs"
