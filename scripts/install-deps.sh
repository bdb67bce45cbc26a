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
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-deps: these Debian packages are missing: ${missing[*]}" >&2
    echo "install-deps: installing them needs root, and sudo is not installed; run" >&2
    echo "  su -c '$(cd "$(dirname "$0")" && pwd)/install-deps.sh'" >&2
    echo "and then this command again." >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
