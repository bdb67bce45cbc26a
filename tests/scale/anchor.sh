#!/bin/sh
# anchor.sh: the scale job (scale_ring, --k K) under LCI and the same job
# under MPICH (scale_ring_mpi under mpiexec.hydra) at each size given, back
# to back in one run, and one Markdown table of what each job measured of
# itself: the time from the first rank's start until every rank had
# initialized, the peak resident memory and open descriptors per rank, and
# the LCI/MPICH ratio of the times.
#
# usage: anchor.sh [--k K] [--reps R] [--timeout S] LCRUN SCALE_RING SCALE_RING_MPI N...
#   (MPIEXEC names Hydra's launcher, default mpiexec.hydra; LCI's own
#   settings come from the environment, e.g. LCI_SHM=1 for the native
#   transport, LCI_SHM=0 FI_PROVIDER=tcp FI_TCP_IFACE=lo for tcp)
# Exit status 0 only if every job completed with every message intact.
set -u
k=1 reps=1 limit=600
while [ $# -gt 0 ]; do
  case "$1" in
    --k) k=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -lt 4 ]; then
  echo "usage: anchor.sh [--k K] [--reps R] [--timeout S] LCRUN SCALE_RING SCALE_RING_MPI N..." >&2
  exit 2
fi
lcrun=$1 ring=$2 ring_mpi=$3
shift 3
mpiexec=${MPIEXEC:-mpiexec.hydra}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# One job: its output line on stdout, or nothing (and status 1) if it failed.
run() {  # run NAME CMD...
  name=$1
  shift
  if timeout "$limit" "$@" >"$tmp/out" 2>"$tmp/err"; then
    line=$(grep "^$name: .*wrong 0\$" "$tmp/out")
    if [ -n "$line" ]; then
      echo "$line"
      return 0
    fi
  fi
  echo "anchor.sh: $name failed: $*" >&2
  sed 's/^/  /' "$tmp/err" | tail -5 >&2
  return 1
}

# The fields of an output line: seconds, max RSS (MB), max fds.
fields() {
  echo "$1" | sed -n 's/.*all initialized \([0-9.]*\) s .*fds per rank [0-9]*\.\.\([0-9]*\); peak RSS per rank [0-9.]*\.\.\([0-9.]*\) MB.*/\1 \3 \2/p'
}

echo "| ranks | LCI: all initialized (s) | MPICH: all initialized (s) | LCI/MPICH | LCI peak RSS per rank (MB) | MPICH peak RSS per rank (MB) | LCI fds per rank | MPICH fds per rank |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "$@"; do
  rep=1
  while [ "$rep" -le "$reps" ]; do
    l=$(run scale_ring "$lcrun" -n "$n" "$ring" --k "$k") || status=1
    m=$(run scale_ring_mpi "$mpiexec" -n "$n" "$ring_mpi" --k "$k") || status=1
    set -- $(fields "$l") - - -
    lt=$1 lr=$2 lf=$3
    set -- $(fields "$m") - - -
    mt=$1 mr=$2 mf=$3
    ratio=$(awk -v a="$lt" -v b="$mt" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }')
    echo "| $n | $lt | $mt | $ratio | $lr | $mr | $lf | $mf |"
    rep=$((rep + 1))
  done
done
exit $status
