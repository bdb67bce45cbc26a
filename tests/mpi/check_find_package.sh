#!/usr/bin/env bash
# A fresh CMake project calling find_package(MPI REQUIRED) (find_package/)
# configures and builds an MPI C program against the machine's default MPI,
# as any other software on a machine set up by scripts/setup.sh would.
# Exits 77 (skipped) only when no MPI is installed at all: no compiler
# wrapper of MPICH or Open MPI and no pkg-config module of either.
#   check_find_package.sh <cmake> <find_package/ folder> <scratch folder>
set -uo pipefail
cmake=$1 src=$2 work=$3

mpicc=$(command -v mpicc || command -v mpicc.mpich || command -v mpicc.openmpi || true)
modules=""
for m in mpi mpich ompi; do
  pkg-config --exists "$m" 2>/dev/null && modules="$modules $m"
done
if [ -z "$mpicc" ] && [ -z "$modules" ]; then
  echo "SKIP: no MPI is installed (no mpicc, mpicc.mpich or mpicc.openmpi, no mpi/mpich/ompi pkg-config module)"
  exit 77
fi

rm -rf "$work"
if ! out=$("$cmake" -S "$src" -B "$work" 2>&1); then
  echo "$out"
  echo "FAIL: find_package(MPI) does not configure (mpicc: ${mpicc:-none} -> $(readlink -f "${mpicc:-/nonexistent}");" \
       "pkg-config modules:${modules:- none}); scripts/install-deps.sh makes the default MPI one whose headers are installed"
  update-alternatives --query mpi 2>/dev/null | sed -n '1,4p'
  exit 1
fi
echo "$out" | grep -E "^-- (Found MPI|MPI )"
if ! out=$("$cmake" --build "$work" 2>&1); then
  echo "$out"
  echo "FAIL: the MPI hello does not build"
  exit 1
fi
echo "mpi.find_package: configured and built $work/mpi_hello"
