#!/bin/sh
# shm_files.sh [--status S] [--hostile N] -- COMMAND...
#
# Runs COMMAND (a launcher starting shm_files, or shm_files alone; at most
# 60 s) and checks that no /dev/shm file of the job outlives it: neither a
# file that a rank reported mapping ("shm_files: rank R file NAME") nor one
# named after a rank's pid the way libfabric's shm provider names its regions
# by default ("<pid>:..."). --status S also requires COMMAND's exit status S.
#
# --hostile N: before COMMAND, creates /dev/shm/<pid>:<uid>:0 for the next N
# pids (as uid 65534 when run as root, else as the caller), the file that a
# process with that pid would have used as its region under the default
# naming, as a stale file of a dead process or another user's trap would.
# The job must still start and end as required. Unless a rank got one of
# those pids, nothing was shown: COMMAND is run again (5 tries), then the
# test is skipped (status 77). Only the files this script created are removed.
#
# Exits 0 on success, 1 naming what was left behind or went wrong.
set -u
status_want="" hostile=0
while [ $# -gt 0 ]; do
  case $1 in
    --status) status_want=$2; shift 2 ;;
    --hostile) hostile=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "shm_files.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "shm_files.sh: no command" >&2; exit 2; }

out=$(mktemp "${TMPDIR:-/tmp}/shm_files.XXXXXX") || exit 2
created=$(mktemp "${TMPDIR:-/tmp}/shm_files_created.XXXXXX") || exit 2
uid=$(id -u)
trap_owner=$uid
if [ "$uid" = 0 ]; then trap_owner=65534; fi

# Removes the files of the --hostile trap that are still there and still
# belong to the trap's owner (nothing else is touched).
remove_trap() {
  [ -s "$created" ] || return 0
  while read -r f; do
    if [ -f "$f" ] && [ "$(stat -c %u "$f" 2>/dev/null)" = "$trap_owner" ]; then rm -f "$f"; fi
  done <"$created"
  : >"$created"
}
trap 'remove_trap; rm -f "$out" "$created"' EXIT
trap 'exit 1' INT TERM

# Creates /dev/shm/<p>:<uid>:0 for the next $hostile pids, skipping any name
# that exists already; one shell writes them all, so this uses one pid.
set_trap() {
  last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo $$)
  max=$(cat /proc/sys/kernel/pid_max)
  list=""
  i=1
  while [ $i -le "$hostile" ]; do
    p=$((last + i))
    [ $p -ge "$max" ] && p=$((p - max + 300))
    f="/dev/shm/$p:$uid:0"
    [ -e "$f" ] || list="$list $f"
    i=$((i + 1))
  done
  script='for f; do if [ ! -e "$f" ]; then printf "%4096s" "" >"$f" && echo "$f"; fi; done'
  if [ "$uid" = 0 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$script" sh $list >"$created"
  else
    sh -c "$script" sh $list >"$created"
  fi
}

tries=1
[ "$hostile" -gt 0 ] && tries=5
try=1
while :; do
  [ "$hostile" -gt 0 ] && set_trap
  timeout -k 5 60 "$@" >"$out"
  status=$?
  cat "$out"
  pids=$(sed -n 's/^shm_files: rank [0-9]* pid \([0-9]*\)$/\1/p' "$out")
  files=$(sed -n 's/^shm_files: rank [0-9]* file \(.*\)$/\1/p' "$out")
  hit=""
  if [ "$hostile" -gt 0 ]; then
    for p in $pids; do
      if grep -q "^/dev/shm/$p:" "$created"; then hit="$hit $p"; fi
    done
  fi
  remove_trap
  if [ "$hostile" -gt 0 ] && [ -z "$hit" ] && [ -n "$pids" ] && [ $status -eq "${status_want:-$status}" ]; then
    if [ $try -lt $tries ]; then
      try=$((try + 1))
      echo "shm_files.sh: no rank got a pid of the trap; again (try $try of $tries)"
      continue
    fi
    echo "shm_files.sh: no rank got a pid of the trap in $tries tries: skipped"
    exit 77
  fi
  break
done

failed=0
if [ -n "$status_want" ] && [ "$status" -ne "$status_want" ]; then
  echo "shm_files.sh: FAILED: exit status $status, expected $status_want" >&2
  failed=1
fi
if [ -z "$pids" ]; then
  echo "shm_files.sh: FAILED: no rank reported its pid" >&2
  failed=1
fi
[ -n "$hit" ] && echo "shm_files.sh: rank pids$hit had a file of the trap in /dev/shm"

# Leftovers: files the ranks mapped, and files named after their pids
# (libfabric's default names and LCI's).
left=""
for f in $(for n in $files; do echo "/dev/shm/$n"; done) \
         $(for p in $pids; do echo /dev/shm/"$p":* /dev/shm/lci-"$p"-*; done); do
  [ -e "$f" ] || continue
  case " $left " in *" $f "*) continue ;; esac
  left="$left $f"
done
if [ -n "$left" ]; then
  echo "shm_files.sh: FAILED: left in /dev/shm after the job:$left" >&2
  # They belong to the job's (dead) processes: remove them so that they
  # cannot harm a later process.
  for f in $left; do rm -f "$f"; done
  failed=1
fi
[ $failed -eq 0 ] && echo "shm_files.sh: nothing of the job is left in /dev/shm"
exit $failed
