#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 1: install what is needed, build (Release, -O3), and run the main job.
# For now the main job is a start-position perft; the cluster job replaces it later.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
echo "== main job: xqforge perft 5 (start position)"
./build/xqforge perft 5
