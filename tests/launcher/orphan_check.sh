#!/bin/sh
# orphan_check.sh LCRUN HELPER N: starts "LCRUN -n N HELPER sleep", waits
# until every rank has printed its pid, kills lcrun with SIGKILL (so it
# cannot clean up) and checks that every rank is gone within 5 s. Exits 0
# on success, 1 naming the surviving pids otherwise. Every wait is bounded.
set -u
lcrun=$1 helper=$2 n=$3
out=$(mktemp "${TMPDIR:-/tmp}/orphan_check.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

"$lcrun" -n "$n" "$helper" sleep >"$out" &
lcrun_pid=$!
i=0
while [ "$(grep -c '^pid ' "$out")" -lt "$n" ]; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then
    echo "orphan_check.sh: FAILED: the ranks did not start within 10 s" >&2
    kill -s KILL "$lcrun_pid" 2>/dev/null
    exit 1
  fi
  sleep 0.1
done
pids=$(sed -n 's/^pid //p' "$out")
kill -s KILL "$lcrun_pid"
wait "$lcrun_pid" 2>/dev/null

# A rank counts as gone once it no longer exists or is a zombie (whether it
# is reaped depends on the container's init, not on lcrun).
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != "Z" ] && [ "$state" != "X" ]
}
i=0
while :; do
  left=""
  for p in $pids; do
    if alive "$p"; then left="$left $p"; fi
  done
  [ -z "$left" ] && { echo "orphan_check.sh: all $n ranks ended with lcrun"; exit 0; }
  i=$((i + 1))
  if [ $i -gt 50 ]; then
    echo "orphan_check.sh: FAILED: ranks outlived lcrun by 5 s:$left" >&2
    for p in $left; do kill -s KILL "$p" 2>/dev/null; done
    exit 1
  fi
  sleep 0.1
done
