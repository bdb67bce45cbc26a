#!/bin/sh
# outsider.sh LCRUN JOB ATTACKER [hijack|hold]
#
# A process outside a running job attacks it over the tcp provider
# (outsider_job.cpp, outsider_attacker.cpp). Starts JOB on two ranks under
# LCRUN, reads what rank 0 published (pid, buffer addresses, a completion
# handle, the registered buffer's keys as if read off the wire), finds rank 0's listening port the way any local user can
# (`ss -ltn`, every listening port on the loopback address; the pid is
# only used to pick the job's when `ss -p` can tell), and runs ATTACKER
# against it: as uid/gid 65534 (setpriv) when run as root, else as the
# caller. Then tells the job the attack is over (<dir>/attack_done).
#
# Passes (exit 0) when the attacker saw none of its RDMA operations
# complete and the job passed its checks (every byte of its own traffic,
# its buffers untouched, messages counted as dropped).
#
# With `hijack`, the attacker instead claims rank 1's listening port (found
# the same way, from rank 1's pid) in its connection request to rank 0,
# which takes rank 1's connection over, reads rank 0's messages for rank 1
# and sends rank 0 forged ones. Passes when no forged message was accepted
# and nothing was lost silently: the job either passed every check (exit
# 0), or ended with the error that names the peer ("connection to rank 1
# was taken over" at rank 0 for a forged message, "messages on the
# connection to rank 1 are lost" for what the attacker took; rank 1, whose
# connection rank 0 closed, may name rank 0 first). Anything else fails: a check of the job failed
# (forged data received), the job ended another way, or it exited 0
# without its checks. Bounded: the attacker runs at most 300 s (under
# AddressSanitizer it needs about 120), the job gives up after 330 s, the
# script waits at most 400 s for it.
#
# With `hold`, the job runs with LCI_PEER_FAILURE=continue and the
# attacker takes rank 1's connection at rank 0 over three times, each time
# holding it 1 s without sending anything. Both ranks are alive: a broken
# connection is only suspicion, so neither may declare the other failed
# ("rank N failed"). Messages tcp reported sent into the replaced
# connection are lost; the heartbeat finds the gap and the job ends naming
# it. Passes when no such warning appears and the job either exits 0 with
# all its checks passed or ends naming the lost messages (never silently,
# never with data not its own).
set -u
lcrun=$1 job=$2 attacker=$3 mode=${4:-forge}
dir=$(mktemp -d /tmp/lci-outsider.XXXXXX) || exit 1
chmod 755 "$dir"
job_pid=""
cleanup() {
  [ -n "$job_pid" ] && kill "$job_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

# A job that a takeover ends (by design, with a fatal error naming the
# peer) is not expected to free what it held: no leak report for it.
leaks=""
[ "$mode" = hijack ] && leaks="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 IPATH_NO_BACKTRACE=1"
# A job that ends naming the loss aborts: libinfinipath (loaded with
# libfabric's psm provider) would print a backtrace from its SIGABRT
# handler, which ThreadSanitizer reports as a signal-unsafe call.
[ "$mode" = hold ] && leaks="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 IPATH_NO_BACKTRACE=1 LCI_PEER_FAILURE=continue OUTSIDER_SILENT=1 LCI_OFI_HEARTBEAT_GRACE=1"
env $leaks LCI_TEST_HOOKS=1 FI_PROVIDER=tcp FI_TCP_IFACE=${FI_TCP_IFACE:-lo} LCI_BACKEND=ofi LCI_SHM=0 \
  "$lcrun" -n 2 "$job" "$dir" >"$dir/job.log" 2>&1 &
job_pid=$!

i=0
while [ ! -s "$dir/victim.info" ]; do
  i=$((i + 1))
  if [ $i -gt 300 ] || ! kill -0 "$job_pid" 2>/dev/null; then
    cat "$dir/job.log"; echo "outsider.sh: the job did not start"; exit 1
  fi
  sleep 0.1
done
read -r pid secret target handle pid1 peer_key provider_key <"$dir/victim.info"

# A rank's listening ports: with -p, ss names the owner (always for root);
# otherwise every listening port on the loopback address is a candidate.
ports_of() {
  p=$(ss -Hltnp 2>/dev/null | grep "pid=$1," | awk '{print $4}' | sed 's/.*://' | sort -u)
  [ -n "$p" ] || p=$(ss -Hltn 2>/dev/null | awk '$4 ~ /^127\.0\.0\.1:/ {print $4}' | sed 's/.*://')
  echo $p
}
ports=$(ports_of "$pid")
[ -n "$ports" ] || { cat "$dir/job.log"; echo "outsider.sh: no listening port found"; exit 1; }
if [ "$mode" != forge ]; then
  claimed=$(ports_of "$pid1")
  [ -n "$claimed" ] || { cat "$dir/job.log"; echo "outsider.sh: no port of rank 1 found"; exit 1; }
fi

as_other=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
   setpriv --reuid=65534 --regid=65534 --clear-groups "$attacker" >/dev/null 2>&1; [ $? -eq 2 ]; then
  as_other="setpriv --reuid=65534 --regid=65534 --clear-groups"
  echo "outsider.sh: the attacker runs as uid 65534"
else
  echo "outsider.sh: the attacker runs as uid $(id -u) (no other user id available)"
fi

status=0
for port in $ports; do
  if [ "$mode" = hold ]; then
    for c in $claimed; do
      [ "$c" = "$port" ] && continue
      for i in 1 2 3; do
        echo "outsider.sh: connecting to 127.0.0.1:$port (rank 0, pid $pid) claiming port $c (rank 1, pid $pid1), holding it 1 s"
        FI_PROVIDER=tcp FI_TCP_IFACE=${FI_TCP_IFACE:-lo} timeout 60 \
          $as_other "$attacker" --hold 127.0.0.1 "$port" "$c" 1 || status=1
        sleep 0.5
      done
    done
    continue
  fi
  if [ "$mode" = hijack ]; then
    for c in $claimed; do
      [ "$c" = "$port" ] && continue
      echo "outsider.sh: connecting to 127.0.0.1:$port (rank 0, pid $pid) claiming port $c (rank 1, pid $pid1)"
      FI_PROVIDER=tcp FI_TCP_IFACE=${FI_TCP_IFACE:-lo} timeout 60 \
        $as_other "$attacker" --hijack 127.0.0.1 "$port" "$c" || status=1
    done
    continue
  fi
  echo "outsider.sh: attacking 127.0.0.1:$port (rank 0, pid $pid)"
  FI_PROVIDER=tcp FI_TCP_IFACE=${FI_TCP_IFACE:-lo} timeout 300 \
    $as_other "$attacker" 127.0.0.1 "$port" "$secret" "$target" "$handle" "$peer_key" \
    "$provider_key"
  rc=$?
  [ $rc -eq 0 ] || { echo "outsider.sh: the attacker failed or ran out of time (status $rc)"; status=1; }
done
touch "$dir/attack_done"

i=0
while kill -0 "$job_pid" 2>/dev/null; do
  i=$((i + 1))
  [ $i -gt 4000 ] && { echo "outsider.sh: the job did not end"; break; }
  sleep 0.1
done
wait "$job_pid"
job_status=$?
job_pid=""
cat "$dir/job.log"
if [ "$mode" = hijack ]; then
  # Data not the job's own: a byte that differs, a buffer changed, a forged
  # completion queued. (Operations that fail when the connection goes,
  # "sendl failed", are expected: the job then ends naming the peer.)
  if grep -q "differs\|changed\|reached the default queue\|reached the explicit queue" "$dir/job.log"; then
    echo "outsider.sh: FAILED: the job received data that was not its own, or lost some"
    status=1
  elif [ "$job_status" -ne 0 ] && grep -Eq "connection to rank [01] was taken over|messages on the connection (to|from) rank [01] (are|were) lost" "$dir/job.log"; then
    echo "outsider.sh: the job ended naming the connection taken over (status $job_status)"
  elif [ "$job_status" -eq 0 ] && grep -q "outsider_job passed" "$dir/job.log"; then
    echo "outsider.sh: the job completed with all its data verified"
  else
    echo "outsider.sh: FAILED: the job ended with status $job_status, without naming rank 1"
    status=1
  fi
  [ "$status" -eq 0 ] && echo "outsider.sh: passed"
  exit "$status"
fi
if [ "$mode" = hold ]; then
  if grep -q "rank [01] failed" "$dir/job.log"; then
    echo "outsider.sh: FAILED: a rank declared its living peer failed"
    status=1
  fi
  if grep -q "differs\|changed\|reached the default queue\|reached the explicit queue" "$dir/job.log"; then
    echo "outsider.sh: FAILED: the job received data that was not its own"
    status=1
  elif [ "$job_status" -eq 0 ] && grep -q "outsider_job passed" "$dir/job.log"; then
    echo "outsider.sh: the job completed with all its data verified"
  elif [ "$job_status" -ne 0 ] && grep -Eq "messages on the connection (to|from) rank [01] (are|were) lost" "$dir/job.log"; then
    # What tcp reported sent into the replaced connection is gone: the
    # job ends naming the loss (docs/failure.md, "Peer states"), never
    # silently, and never by declaring a living rank dead.
    echo "outsider.sh: the job ended naming the messages lost with the connection (status $job_status)"
  else
    echo "outsider.sh: FAILED: the job ended with status $job_status, neither with all its data verified nor naming the loss"
    status=1
  fi
  [ "$status" -eq 0 ] && echo "outsider.sh: passed"
  exit "$status"
fi
[ "$job_status" -eq 0 ] || { echo "outsider.sh: the job failed (status $job_status)"; status=1; }
[ "$status" -eq 0 ] && echo "outsider.sh: passed"
exit "$status"
