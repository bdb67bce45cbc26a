#!/usr/bin/env bash
# First-time set-up on a fresh Debian 12 machine: install the dependencies,
# build LCI (release) into ./build, and run hello_world on 2 ranks with lcrun.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
echo "--- lcrun -n 2 build/examples/hello_world (FI_PROVIDER=${FI_PROVIDER:-shm})"
FI_PROVIDER="${FI_PROVIDER:-shm}" build/tools/lcrun -n 2 build/examples/hello_world
