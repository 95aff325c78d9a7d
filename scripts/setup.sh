#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 1: install what is needed, build (Release, -O3), and run the main job: a
# short SPRT between two builtin weight sets (jobs/sprt-weights.ini) under mpirun on this
# machine, one coordinator rank plus one worker rank per core.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
ranks=$(($(nproc) + 1))
rm -rf out/sprt-weights # the demo starts afresh each time (a real job would --resume)
echo "== main job: mpirun -np $ranks build/xqforge run jobs/sprt-weights.ini"
mpirun --oversubscribe --bind-to none -np "$ranks" ./build/xqforge run jobs/sprt-weights.ini
