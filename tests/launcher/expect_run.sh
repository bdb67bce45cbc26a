#!/bin/sh
# expect_run.sh [--status S | --nonzero] [--max-seconds T] [--stderr REGEX]
#               [--stdout REGEX] [--signal SIG:AFTER] -- command [args...]
#
# Runs a command (normally lcrun ...) and checks how it ended: its exit status
# (exactly S, or anything but 0), that it took less than T seconds, and that
# its stderr (and, with --stdout, its stdout) matches the extended regex
# REGEX (given several times: each must match). With --signal, sends SIG to the command AFTER seconds after starting
# it. Exits 0 when every check holds; otherwise prints what differed and
# exits 1. The command's stdout and stderr are echoed so ctest
# --output-on-failure shows them.
set -u

want_status=""
want_nonzero=0
max_seconds=""
stderr_regex=""
stdout_regex=""
signal_spec=""
while [ $# -gt 0 ]; do
  case "$1" in
    --status) want_status="$2"; shift 2 ;;
    --nonzero) want_nonzero=1; shift ;;
    --max-seconds) max_seconds="$2"; shift 2 ;;
    --stderr) stderr_regex="${stderr_regex:+$stderr_regex
}$2"; shift 2 ;;
    --stdout) stdout_regex="${stdout_regex:+$stdout_regex
}$2"; shift 2 ;;
    --signal) signal_spec="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect_run.sh: no command" >&2; exit 2; }

err_file=$(mktemp "${TMPDIR:-/tmp}/expect_run.XXXXXX") || exit 2
out_file=$(mktemp "${TMPDIR:-/tmp}/expect_run.XXXXXX") || { rm -f "$err_file"; exit 2; }
trap 'rm -f "$err_file" "$out_file"' EXIT

start=$(date +%s%N)
if [ -n "$signal_spec" ]; then
  sig=${signal_spec%%:*}
  after=${signal_spec#*:}
  "$@" >"$out_file" 2>"$err_file" &
  pid=$!
  sleep "$after"
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid"
  status=$?
else
  "$@" >"$out_file" 2>"$err_file"
  status=$?
fi
end=$(date +%s%N)
elapsed_ms=$(( (end - start) / 1000000 ))

cat "$out_file"
cat "$err_file" >&2
echo "expect_run.sh: exit status $status after ${elapsed_ms} ms" >&2

ok=1
if [ -n "$want_status" ] && [ "$status" -ne "$want_status" ]; then
  echo "expect_run.sh: FAILED: expected exit status $want_status, got $status" >&2
  ok=0
fi
if [ "$want_nonzero" -eq 1 ] && [ "$status" -eq 0 ]; then
  echo "expect_run.sh: FAILED: expected a nonzero exit status" >&2
  ok=0
fi
if [ -n "$max_seconds" ] && [ "$elapsed_ms" -ge $((max_seconds * 1000)) ]; then
  echo "expect_run.sh: FAILED: took ${elapsed_ms} ms, limit ${max_seconds} s" >&2
  ok=0
fi
# Each regex of a newline-separated list must match somewhere in the file.
check_all() {  # name regexes file
  [ -n "$2" ] || return 0
  result=0
  while IFS= read -r regex; do
    if ! grep -Eq -- "$regex" "$3"; then
      echo "expect_run.sh: FAILED: $1 does not match /$regex/" >&2
      result=1
    fi
  done <<EOF_REGEXES
$2
EOF_REGEXES
  return $result
}
check_all stderr "$stderr_regex" "$err_file" || ok=0
check_all stdout "$stdout_regex" "$out_file" || ok=0
[ "$ok" -eq 1 ]
