#!/bin/sh
# soak_run.sh [--timeout S] LCRUN SOAK TRANSPORT NP THREADS PATTERN TRAFFIC FAILURE MESSAGES
#
# Runs one combination of the soak matrix under lcrun and says whether it
# held, in one line: "soak: PASS|FAIL|UNSUPPORTED <combination> <seconds> s"
# (with the first line of the failure's cause). TRANSPORT: native (LCI_SHM=1),
# native-nocma (the same with LCI_SHM_CMA=0), tcp (libfabric tcp on
# loopback, LCI_SHM=0) or shm (libfabric shm, LCI_SHM=0). FAILURE abort: the
# job must exit 0 with every rank's pass line. FAILURE continue: under
# LCI_PEER_FAILURE=continue and lcrun --keep-going rank 1 kills itself; lcrun
# must exit 137 naming rank 1 alone, and every other rank print its pass
# line. S bounds the traffic (soak --timeout; default 60). Exits 0 on PASS,
# 1 otherwise (an unsupported combination too: it never passes).
set -u
timeout=60
if [ "${1:-}" = "--timeout" ]; then timeout=$2; shift 2; fi
[ $# -eq 9 ] || { echo "usage: soak_run.sh [--timeout S] LCRUN SOAK TRANSPORT NP THREADS PATTERN TRAFFIC FAILURE MESSAGES" >&2; exit 2; }
lcrun=$1 soak=$2 transport=$3 np=$4 threads=$5 pattern=$6 traffic=$7 failure=$8 messages=$9
combo="$transport np$np threads $threads pattern $pattern traffic $traffic failure $failure messages $messages"

case "$transport" in
  native) set -- LCI_BACKEND=ofi FI_PROVIDER=shm LCI_SHM=1 ;;
  native-nocma) set -- LCI_BACKEND=ofi FI_PROVIDER=shm LCI_SHM=1 LCI_SHM_CMA=0 ;;
  tcp) set -- LCI_BACKEND=ofi FI_PROVIDER=tcp LCI_SHM=0 FI_TCP_IFACE=lo ;;
  shm) set -- LCI_BACKEND=ofi FI_PROVIDER=shm LCI_SHM=0 ;;
  *) echo "soak: FAIL $combo: unknown transport $transport" >&2; exit 1 ;;
esac
keep=""
case "$failure" in
  abort) want_status=0 ;;
  continue) want_status=137; keep=--keep-going; set -- "$@" LCI_PEER_FAILURE=continue ;;
  *) echo "soak: FAIL $combo: unknown failure mode $failure" >&2; exit 1 ;;
esac

out=$(mktemp "${TMPDIR:-/tmp}/soak.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
start=$(date +%s%N)
env "$@" LCRUN_TIMEOUT=$((timeout + 30)) "$lcrun" $keep -n "$np" "$soak" --threads "$threads" \
  --pattern "$pattern" --traffic "$traffic" --failure "$failure" --messages "$messages" \
  --timeout "$timeout" >"$out" 2>&1
status=$?
end=$(date +%s%N)
secs=$(( (end - start) / 1000000 ))
secs=$(printf '%d.%01d' $((secs / 1000)) $(((secs % 1000) / 100)))

why=""
if grep -q "soak: unsupported combination" "$out"; then
  grep "soak: unsupported combination" "$out" | head -1
  echo "soak: UNSUPPORTED $combo $secs s"
  exit 1
fi
[ "$status" -eq "$want_status" ] || why="lcrun exited with status $status, expected $want_status"
r=0
while [ "$r" -lt "$np" ]; do
  if [ "$failure" = continue ] && [ "$r" -eq 1 ]; then r=$((r + 1)); continue; fi
  grep -q "^rank $r: soak passed" "$out" || why="${why:-rank $r printed no pass line}"
  r=$((r + 1))
done
if [ "$failure" = continue ]; then
  grep -q "lcrun: --keep-going: rank(s) 1 failed; the others ran on" "$out" ||
    why="${why:-lcrun did not name rank 1 alone as failed}"
fi
if grep -qE "FALSE FAILURE|Sanitizer|runtime error" "$out"; then
  why="${why:-a false failure or a sanitizer report}"
fi
if [ -z "$why" ]; then
  grep "^rank [0-9]*: soak passed" "$out"
  echo "soak: PASS $combo $secs s"
  exit 0
fi
tail -n 60 "$out"
# The first line that says why: a check, a fatal message, the library's error.
cause=$(grep -E "check failed|FATAL|FALSE FAILURE|fatal|error|failed authentication|watchdog|timeout|killed by signal|exited with status" "$out" |
  grep -vE "raising SIGKILL|warn: rank 1 failed|rank 1 \(pid [0-9]+\) was killed by signal 9" | head -1)
echo "soak: FAIL $combo $secs s: $why${cause:+; first cause: $cause}"
exit 1
