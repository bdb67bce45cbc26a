#!/usr/bin/env bash
# Installs the Debian 12 packages LCI needs to build, test and benchmark.
# Safe to run again. As root it calls apt-get directly (a fresh Debian has no
# sudo, and root needs none); as another user it goes through sudo, and says
# what to do when sudo is not there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libfabric-dev libfabric-bin     # the libfabric backend (shm, tcp providers)
  libibverbs-dev rdma-core        # the verbs backend (lci/backend/ibv; built when found)
  doctest-dev                     # unit tests
  libtbb-dev libboost-context-dev # task-runtime waiting (oneTBB, fibers) and examples
  libpmix-dev                     # the PMIx bootstrap
  mpich libmpich-dev              # Hydra (mpiexec.hydra, PMI-1) and the MPI that the
                                  # comparison programs (bfs_mpi, mpi_bench) are built on
  openmpi-bin                     # Open MPI's mpirun (PMIx launcher tests; runtime only)
  iproute2                        # network namespaces for the two-host test
  python3                         # benchmarks/compare (and its smoke test)
  valgrind                        # benchmarks/callgrind_rtt (instructions per round trip)
  ucx-utils                       # ucx_perftest, a reference of benchmarks/compare shm-table
  clang libclang-rt-14-dev        # libFuzzer targets of the parsers (tests/fuzz)
  slurm-wlm munge                 # a one-node Slurm for the srun tests (tests/slurm)
  gnuplot-nox                     # plots of benchmarks/compare (SVG, PNG)
  doxygen                         # the API reference (LCI_WITH_DOC, test docs.api_reference)
  groff-base                      # renders the man pages (test docs.man_pages)
)

installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# Runs "$@" as root: directly when root, else through sudo; without sudo,
# says what needed root ($why) and what to run instead, and fails.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-deps: $why needs root, and sudo is not installed; run" >&2
    echo "  su -c '$(cd "$(dirname "$0")" && pwd)/install-deps.sh'" >&2
    echo "and then this command again." >&2
    exit 1
  fi
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
else
  why="installing the Debian packages ${missing[*]}"
  echo "install-deps: installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The default MPI (mpicc, mpicxx, mpirun, mpiexec: Debian's alternatives "mpi"
# and "mpirun"). openmpi-bin outranks mpich there, but only Open MPI's
# runtime is installed above, not its headers (libopenmpi-dev): its mpicc
# would point every find_package(MPI) at the missing .../openmpi/include and
# fail the configure. Without libopenmpi-dev, make MPICH, whose headers are
# installed, the default compiler wrappers and launcher alike. Open MPI's
# mpirun stays reachable as mpirun.openmpi (the PMIx launcher tests use that
# name). With libopenmpi-dev installed, Debian's choice is left alone.
if ! installed libopenmpi-dev && installed libmpich-dev; then
  for pair in mpi:/usr/bin/mpicc.mpich mpirun:/usr/bin/mpirun.mpich; do
    name=${pair%%:*}
    target=${pair#*:}
    if [ "$(readlink -f "/etc/alternatives/$name" 2>/dev/null)" != "$(readlink -f "$target")" ]; then
      why="making MPICH the default MPI (update-alternatives --set $name $target)"
      echo "install-deps: $name -> $target (Open MPI's headers are not installed)"
      as_root update-alternatives --quiet --set "$name" "$target"
    fi
  done
fi
