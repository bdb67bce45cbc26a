#!/bin/sh
# run-matrix.sh BUILD_DIR [REGEX] : the whole soak matrix, one combination
# after another (docs/failure.md, "The soak matrix").
#
# Transports (native, native-nocma, tcp, shm) x progress threads per rank
# (1, 2, 4) x progress patterns (busy, 10ms, bursts) x failure modes (abort
# on 3 ranks, continue on 4 with rank 1 killed) x traffic (medium, long,
# putget, iovec, am, mixed): 432 runs. REGEX (grep -E) selects combinations
# by their name "TRANSPORT.tTHREADS.PATTERN.TRAFFIC.FAILURE", e.g.
# 'tcp\.t4' or 'continue'. SOAK_MESSAGES (default 60) sets the operations
# per pair of ranks and kind, SOAK_TIMEOUT (default 60) each run's bound.
# Prints one line per combination (PASS, FAIL with its first cause, or
# UNSUPPORTED with the reason), then the counts and the total time; exits 0
# only if every selected combination passed.
set -u
[ $# -ge 1 ] || { echo "usage: run-matrix.sh BUILD_DIR [REGEX]" >&2; exit 2; }
build=$1
filter=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
lcrun=$build/tools/lcrun
soak=$build/tests/soak/soak
[ -x "$lcrun" ] && [ -x "$soak" ] ||
  { echo "run-matrix.sh: $lcrun or $soak missing (cmake --build $build --target lcrun soak)" >&2; exit 2; }
messages=${SOAK_MESSAGES:-60}
timeout=${SOAK_TIMEOUT:-60}
log=${SOAK_LOG:-$build/soak-matrix.log}
: >"$log"

pass=0 fail=0 unsupported=0
start=$(date +%s)
for transport in native native-nocma tcp shm; do
  for threads in 1 2 4; do
    for pattern in busy 10ms bursts; do
      for failure in abort continue; do
        for traffic in medium long putget iovec am mixed; do
          name=$transport.t$threads.$pattern.$traffic.$failure
          echo "$name" | grep -qE -- "$filter" || continue
          np=3
          [ "$failure" = continue ] && np=4
          echo "=== $name" >>"$log"
          sh "$here/soak_run.sh" --timeout "$timeout" "$lcrun" "$soak" "$transport" "$np" \
            "$threads" "$pattern" "$traffic" "$failure" "$messages" >>"$log" 2>&1
          verdict=$(grep -E "^soak: (PASS|FAIL|UNSUPPORTED)" "$log" | tail -1)
          case "$verdict" in
            "soak: PASS"*) pass=$((pass + 1)); echo "PASS        $name (${verdict##* messages $messages })" ;;
            "soak: UNSUPPORTED"*) unsupported=$((unsupported + 1))
              echo "UNSUPPORTED $name: $(grep "soak: unsupported combination" "$log" | tail -1 | sed 's/.*: \([^:]*\)$/\1/')" ;;
            *) fail=$((fail + 1)); echo "FAIL        $name: ${verdict#*messages $messages }" ;;
          esac
        done
      done
    done
  done
done
total=$(($(date +%s) - start))
echo "soak matrix: $pass passed, $fail failed, $unsupported unsupported, $((pass + fail + unsupported)) runs in $total s (log: $log)"
[ "$fail" -eq 0 ] && [ "$unsupported" -eq 0 ]
