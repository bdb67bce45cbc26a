#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. release build: every test (unit, launcher, integration on shm and tcp,
#      examples, C99 compatibility);
#   2. AddressSanitizer + UBSan build with -DLCI_DEBUG=ON: every test again,
#      plus the bad-input checks that exist only in debug builds;
#   3. ThreadSanitizer build: the threaded tests, the survivors tests
#      (a rank dies, the others go on: LCI_PEER_FAILURE=continue) and the
#      soak matrix's CI subset (ctest -L soak).
# Each build has its own directory under build-test/. Ends with one line
# "N passed, N failed" summing the three ctest runs.
set -uo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh || exit 1
jobs=$(nproc)
root=build-test
passed=0
failed=0
skipped=0

run_suite() {   # name, ctest args, cmake args...
  local name=$1 ctest_args=$2
  shift 2
  local dir=$root/$name
  echo "=== [$name] configure and build"
  if ! cmake -S . -B "$dir" -DLCI_BUILD_BENCHMARKS=ON "$@" >"$dir.configure.log" 2>&1 &&
     true; then
    cat "$dir.configure.log"; failed=$((failed + 1)); return
  fi
  if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
    tail -50 "$dir.build.log"; echo "[$name] build failed"; failed=$((failed + 1)); return
  fi
  echo "=== [$name] ctest $ctest_args"
  local log=$dir.ctest.log
  (cd "$dir" && ctest --output-on-failure -j"$jobs" $ctest_args) 2>&1 | tee "$log"
  local p f
  p=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "$log" | tail -1)
  if [ -z "$p" ]; then
    echo "[$name] ctest printed no summary"; failed=$((failed + 1)); return
  fi
  set -- $p
  # Skipped tests (e.g. the verbs backend where no device exists) are listed
  # by ctest under "The following tests did not run"; they count as neither.
  local s
  s=$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$log")
  passed=$((passed + $1 - $2 - s))
  failed=$((failed + $2))
  skipped=$((skipped + s))
}

mkdir -p "$root"
export FI_TCP_IFACE=lo
run_suite release "" -DCMAKE_BUILD_TYPE=RelWithDebInfo
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  run_suite asan-ubsan "" -DCMAKE_BUILD_TYPE=Debug -DLCI_DEBUG=ON -DLCI_SANITIZE=address,undefined
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  run_suite tsan "-L threaded|survivors|soak" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLCI_SANITIZE=thread

echo
echo "$skipped skipped (not counted as passed; reasons in the logs above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
