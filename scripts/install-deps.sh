#!/usr/bin/env bash
# Installs the Debian 12 packages LCI needs to build, test and benchmark.
# Run as root (or with sudo). Safe to run again.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libfabric-dev libfabric-bin     # the libfabric backend (shm, tcp providers)
  libibverbs-dev rdma-core        # the verbs backend (lci/backend/ibv; built when found)
  doctest-dev                     # unit tests
  iproute2                        # network namespaces for the two-host test
  mpich openmpi-bin               # launchers: mpiexec.hydra (PMI-1), mpirun.openmpi (PMIx)
  libpmix-dev                     # the PMIx bootstrap
  libmpich-dev                    # MPI reference benchmarks
  libtbb-dev libboost-context-dev # task-runtime waiting (oneTBB, fibers) and examples
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
