#!/bin/bash
# run_netns.sh LCRUN TWO_HOSTS [PHASE...]
#
# Runs LCI ranks on two "hosts" on one machine: two network namespaces joined
# by a veth pair whose end is named lcinet0 in both (10.213.0.1/24 and
# 10.213.0.2/24), started by lcrun --hosts 2 --prefix 'ip netns exec NS{host}'
# (rank r in namespace r mod 2) over libfabric's tcp provider only
# (FI_PROVIDER=tcp FI_TCP_IFACE=lcinet0). Phases (all by default):
#   pingpong      2 ranks, medium round trips of 1 byte to LCI_MEDIUM_SIZE
#   many_to_one   4 ranks, ranks 1-3 each send 5000 x 4 KiB to rank 0
#   long          2 ranks, 1 MiB and 16 MiB sendl/recvl both ways, twice
#   mixed         4 ranks (0 and 2 on one host, 1 and 3 on the other) with
#                 LCI's native shared-memory transport on (LCI_SHM=1): every
#                 rank with every other, medium messages, many_to_one (ranks
#                 1-3 send 5000 x 4 KiB to rank 0), then 1 MiB and 16 MiB
#                 sendl/recvl both ways of every pair, twice; ranks of one
#                 host talk through shared memory, the others through tcp
#   mixed_network the same job with LCI_SHM=0 (everything through tcp): shows
#                 that the loopback check below sees same-host traffic that
#                 goes through the network
#   rank_failure  4 ranks of tests/integration/failure/rank_failure (path in
#                 LCIT_NETNS_RANK_FAILURE; by default only when that is set):
#                 rank 1 dies by SIGKILL, the job must end, naming it
# All but mixed run with LCI_SHM=0, so that everything goes through tcp.
# The program runs with --hosts 2 and checks which transport serves each rank
# (LCIX_transport_of) and that each transport received at least the messages
# of the ranks routed to it (LCIX_transport_counts). After each phase:
#  - the transmit byte counters of lcinet0 in each namespace must have grown
#    by at least the payload that the ranks of that namespace sent to ranks of
#    the other one (as the program reports it);
#  - traffic between two ranks of one namespace never crosses the veth: over
#    tcp it goes through that namespace's loopback interface, which carries
#    nothing else (the ranks reach lcrun through socket pairs). With
#    LCI_SHM=0 the transmit counter of lo must have grown by at least that
#    payload; with LCI_SHM=1 by less than 1% of it (shared memory carries it);
#  - every rank must have logged that it uses the tcp provider.
#
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2; without them it
# prints why and exits 77, which ctest reports as skipped.
# LCIT_NETNS_FAKE_NO_PRIVILEGE=1 takes the same path, to test it.
# Namespaces are named lci-netns-<pid of this script>-{0,1}, so concurrent
# runs never share one; they are deleted on exit, and leftovers of runs whose
# script no longer exists are deleted at start.
set -u

SKIP=77
lcrun=${1:?usage: run_netns.sh LCRUN TWO_HOSTS [PHASE...]}
prog=${2:?usage: run_netns.sh LCRUN TWO_HOSTS [PHASE...]}
shift 2
phases=("$@")
if [ ${#phases[@]} -eq 0 ]; then
  phases=(pingpong many_to_one long mixed mixed_network)
  [ -z "${LCIT_NETNS_RANK_FAILURE:-}" ] || phases+=(rank_failure)
fi

skip() {
  echo "run_netns.sh: SKIPPED: $*"
  exit "$SKIP"
}
fail() {
  echo "run_netns.sh: FAILED: $*" >&2
  exit 1
}

[ -z "${LCIT_NETNS_FAKE_NO_PRIVILEGE:-}" ] || skip "LCIT_NETNS_FAKE_NO_PRIVILEGE is set"
command -v ip >/dev/null 2>&1 || skip "the ip command (iproute2) is not installed"
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root (running as uid $(id -u))"

base=lci-netns-$$-
ns=("${base}0" "${base}1")
addr=(10.213.0.1/24 10.213.0.2/24)
iface=lcinet0
work=$(mktemp -d "${TMPDIR:-/tmp}/lci-netns.XXXXXX") || fail "mktemp"

lcrun_pid=""
cleanup() {
  local n pid
  # A signal interrupted a phase: lcrun ends its ranks on SIGTERM (SIGKILL
  # 2 s later) and exits.
  if [ -n "$lcrun_pid" ] && kill -0 "$lcrun_pid" 2>/dev/null; then
    kill -TERM "$lcrun_pid" 2>/dev/null
    wait "$lcrun_pid" 2>/dev/null
  fi
  for n in "${ns[@]}"; do
    ip netns list 2>/dev/null | grep -q "^$n\b" || continue
    # Only processes of this run can be in its namespaces (lcrun normally
    # ended them already).
    for pid in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    ip netns del "$n" 2>/dev/null || echo "run_netns.sh: could not delete namespace $n" >&2
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Namespaces of earlier runs that were killed before their cleanup ran.
for old in $(ip netns list 2>/dev/null | grep -o '^lci-netns-[0-9]*-[01]'); do
  pid=${old#lci-netns-}
  pid=${pid%-*}
  if ! kill -0 "$pid" 2>/dev/null; then
    for p in $(ip netns pids "$old" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$old" 2>/dev/null && echo "run_netns.sh: deleted leftover namespace $old"
  fi
done

if ! err=$(ip netns add "${ns[0]}" 2>&1); then
  skip "cannot create a network namespace: $err"
fi
ip netns add "${ns[1]}" || fail "ip netns add ${ns[1]}"
# Without CAP_NET_ADMIN (or the veth driver) the namespaces exist but stay
# unconnected; without CAP_SYS_ADMIN ip netns exec cannot enter them.
if ! err=$(ip link add "$iface" netns "${ns[0]}" type veth peer name "$iface" netns "${ns[1]}" 2>&1); then
  skip "cannot create a veth pair: $err"
fi
# How ranks (and this script's ip commands) enter a namespace: `ip netns
# exec` and `ip -n` also remount /sys for the namespace, which fails where / is
# not a mount point (a chroot, such as a fresh-root CI run); `nsenter --net`
# only joins the network namespace, which is all they need. Both exec the
# program in the same process, as lcrun --prefix requires.
if ip netns exec "${ns[0]}" true >/dev/null 2>&1; then
  enter="ip netns exec ${base}{host}"
  in_ns() { local i=$1; shift; ip netns exec "${ns[$i]}" "$@"; }
elif ! err=$(nsenter --net="/run/netns/${ns[0]}" true 2>&1); then
  skip "cannot enter a network namespace (ip netns exec, nsenter --net): $err"
else
  enter="nsenter --net=/run/netns/${base}{host}"
  in_ns() { local i=$1; shift; nsenter --net="/run/netns/${ns[$i]}" "$@"; }
  echo "run_netns.sh: ip netns exec cannot remount /sys here; ranks enter with nsenter --net"
fi
for i in 0 1; do
  in_ns "$i" ip link set lo up || fail "lo up in ${ns[$i]}"
  in_ns "$i" ip addr add "${addr[$i]}" dev "$iface" || fail "address in ${ns[$i]}"
  in_ns "$i" ip link set "$iface" up || fail "$iface up in ${ns[$i]}"
done
# The link must be up (carrier on both ends) before the ranks start: libfabric
# lists only running interfaces, and a rank that starts too early publishes
# 127.0.0.1 instead of its lcinet0 address.
for try in $(seq 1 100); do
  up=0
  for i in 0 1; do
    in_ns "$i" ip -o link show dev "$iface" 2>/dev/null | grep -q ' state UP ' && up=$((up + 1))
  done
  [ "$up" -eq 2 ] && break
  [ "$try" -lt 100 ] || fail "$iface did not come up in 10 s"
  sleep 0.1
done

tx_bytes() {  # namespace index, interface; `ip -s` prints "TX: bytes ..." then the numbers
  local n
  n=$(in_ns "$1" ip -s link show dev "$2" | awk '/TX:/ { getline; print $1; exit }')
  [ -n "$n" ] && echo "$n"
}

# run_phase NAME MODE NP LCI_SHM ARGS...: the program's MODE on NP ranks
run_phase() {
  local name=$1 mode=$2 np=$3 shm=$4
  shift 4
  local before0 before1 after0 after1 lo_before0 lo_before1 lo_after0 lo_after1 status
  before0=$(tx_bytes 0 "$iface") && before1=$(tx_bytes 1 "$iface") &&
    lo_before0=$(tx_bytes 0 lo) && lo_before1=$(tx_bytes 1 lo) ||
    fail "cannot read the byte counters"
  echo "run_netns.sh: $name: lcrun -n $np --hosts 2 on ${ns[0]} and ${ns[1]}, LCI_SHM=$shm"
  env FI_PROVIDER=tcp FI_TCP_IFACE=$iface LCI_SHM=$shm LCI_LOG_LEVEL=info \
    LCRUN_TIMEOUT=${LCRUN_TIMEOUT:-120} \
    "$lcrun" -n "$np" --hosts 2 --prefix "$enter" "$prog" "$mode" --hosts 2 "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
  # In the background, so that a signal to this script runs its trap at once.
  lcrun_pid=$!
  wait "$lcrun_pid"
  status=$?
  lcrun_pid=""
  after0=$(tx_bytes 0 "$iface") && after1=$(tx_bytes 1 "$iface") &&
    lo_after0=$(tx_bytes 0 lo) && lo_after1=$(tx_bytes 1 lo) ||
    fail "cannot read the byte counters"
  cat "$work/$name.out"
  grep -v 'libfabric device .* on provider' "$work/$name.err" >&2
  [ "$status" -eq 0 ] || fail "$name: lcrun exited with status $status"
  local passed
  passed=$(grep -c "two_hosts $mode passed" "$work/$name.out")
  [ "$passed" -eq "$np" ] || fail "$name: $passed of $np ranks passed"
  # Every rank opened its device on tcp (LCI_LOG_LEVEL=info names the provider).
  local tcp other
  tcp=$(grep -c 'libfabric device 0 on provider tcp' "$work/$name.err")
  other=$(grep 'libfabric device .* on provider' "$work/$name.err" | grep -vc 'on provider tcp')
  [ "$tcp" -eq "$np" ] && [ "$other" -eq 0 ] ||
    fail "$name: expected $np ranks on provider tcp, got $tcp (and $other on another provider)"
  # Payload from host h to the other host (want), and between two ranks of
  # host h (same), with rank r on host r mod 2.
  local want0 want1 same0 same1
  read -r want0 want1 same0 same1 < <(awk '/^two_hosts: payload [0-9]+ -> [0-9]+: [0-9]+$/ {
      from = $3; to = $5; sub(":", "", to); bytes = $6
      if (from % 2 != to % 2) cross[from % 2] += bytes
      else if (from != to) same[from % 2] += bytes
    } END { printf "%d %d %d %d\n", cross[0], cross[1], same[0], same[1] }' "$work/$name.out")
  local got0=$((after0 - before0)) got1=$((after1 - before1))
  echo "run_netns.sh: $name: ${ns[0]} sent $got0 bytes on $iface for $want0 payload bytes;" \
    "${ns[1]} sent $got1 for $want1"
  [ "$((want0 + want1))" -gt 0 ] || fail "$name: no payload crossed between the hosts"
  [ "$got0" -ge "$want0" ] && [ "$got1" -ge "$want1" ] ||
    fail "$name: the veth carried less than the payload: did the traffic cross it?"
  local lo0=$((lo_after0 - lo_before0)) lo1=$((lo_after1 - lo_before1)) i lo same
  [ "$((same0 + same1))" -eq 0 ] && return 0
  echo "run_netns.sh: $name: lo carried $lo0 bytes in ${ns[0]} for $same0 payload bytes" \
    "between its ranks, $lo1 in ${ns[1]} for $same1"
  for i in 0 1; do
    if [ "$i" -eq 0 ]; then lo=$lo0 same=$same0; else lo=$lo1 same=$same1; fi
    [ "$same" -gt 0 ] || continue
    if [ "$shm" = 0 ]; then
      [ "$lo" -ge "$same" ] ||
        fail "$name: lo in ${ns[$i]} carried $lo bytes, less than the $same payload bytes" \
          "between its ranks over tcp"
    else
      [ "$((lo * 100))" -lt "$same" ] ||
        fail "$name: lo in ${ns[$i]} carried $lo bytes for $same payload bytes between its" \
          "ranks: did their traffic go through tcp instead of shared memory?"
    fi
  done
}

# Rank 1 (on the second host) dies by SIGKILL while the others wait for it:
# lcrun must end the job within 20 s, with status 137, naming rank 1.
run_rank_failure() {
  local prog_rf=${LCIT_NETNS_RANK_FAILURE:-}
  [ -n "$prog_rf" ] || fail "rank_failure: set LCIT_NETNS_RANK_FAILURE to the rank_failure program"
  echo "run_netns.sh: rank_failure: lcrun -n 4 --hosts 2 on ${ns[0]} and ${ns[1]}"
  local start end status
  start=$(date +%s%N)
  env FI_PROVIDER=tcp FI_TCP_IFACE=$iface LCRUN_TIMEOUT=60 \
    "$lcrun" -n 4 --hosts 2 --prefix "$enter" "$prog_rf" --mode kill \
    --victim 1 --wait-seconds 30 >"$work/rank_failure.out" 2>"$work/rank_failure.err" &
  lcrun_pid=$!
  wait "$lcrun_pid"
  status=$?
  lcrun_pid=""
  end=$(date +%s%N)
  cat "$work/rank_failure.out"
  cat "$work/rank_failure.err" >&2
  local ms=$(((end - start) / 1000000))
  echo "run_netns.sh: rank_failure: lcrun exited with status $status after $ms ms"
  [ "$status" -eq 137 ] || fail "rank_failure: expected status 137, got $status"
  [ "$ms" -lt 20000 ] || fail "rank_failure: the job took $ms ms, limit 20 s"
  grep -Eq 'lcrun: rank 1 \(pid [0-9]+\) was killed by signal 9' "$work/rank_failure.err" ||
    fail "rank_failure: lcrun did not name rank 1"
}

for phase in "${phases[@]}"; do
  case "$phase" in
    pingpong) run_phase pingpong pingpong 2 0 --iters 2000 ;;
    many_to_one) run_phase many_to_one many_to_one 4 0 --count 5000 --size 4096 ;;
    long) run_phase long long 2 0 --sizes 1048576,16777216 --reps 2 ;;
    mixed | mixed_network)
      shm=1
      [ "$phase" = mixed ] || shm=0
      run_phase "$phase" mixed 4 "$shm" --iters 1000 --count 5000 --size 4096 \
        --sizes 1048576,16777216 --reps 2
      ;;
    rank_failure) run_rank_failure ;;
    *) fail "unknown phase $phase" ;;
  esac
done
echo "run_netns.sh: passed: ${phases[*]}"
