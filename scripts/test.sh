#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README command 2: the whole test suite. Installs what is needed, checks formatting, builds
# Release with -Werror and runs the unit tier, then builds Debug with AddressSanitizer and
# UndefinedBehaviorSanitizer (board_is_ok and key checks after every make/unmake) and runs
# the unit tier and one MPI test of each code path again. The Release run includes the slow
# tier (full perft suite, a 300,000-position cross-check against Fairy-Stockfish, a real
# match), the MPI tier (a job on 3 ranks, kill and resume) and the report tier (uploads to a
# real nginx, the page in headless Chromium; screenshots in build/tests/report_browser);
# XQ_FAST=1 runs the unit tier only.
# Then the ThreadSanitizer tier (build-tsan), every libFuzzer harness for XQ_FUZZ_SECONDS
# (20; scripts/fuzz.sh, when clang is installed), the fault drills (tests/drills.sh), the
# Slurm tier (a one-node cluster, tests/run_slurm.sh) and valgrind memcheck on a short
# cluster run (tests/valgrind_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

echo "== format check (clang-format)"
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
clang-format --dry-run --Werror $files

echo "== Release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DXQ_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
labels='unit|slow|mpi|report'
[[ ${XQ_FAST:-0} == 1 ]] && labels=unit
(cd build && ctest -L "$labels" -j"$jobs" --output-on-failure)

echo "== Debug build with sanitizers"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DXQ_WERROR=ON -DXQ_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest -L unit -j"$jobs" --output-on-failure)
if [[ ${XQ_FAST:-0} != 1 ]]; then
    echo "== MPI tests under AddressSanitizer and UndefinedBehaviorSanitizer (label asan)"
    # Each MPI code path once (tests/CMakeLists.txt says which); the long kill drills ran above.
    # Leak checking off: Open MPI keeps allocations past MPI_Finalize by design.
    (cd build-asan && ASAN_OPTIONS=detect_leaks=0 ctest -L '^asan$' -j"$jobs" --output-on-failure)
fi

echo "== ThreadSanitizer build (Lazy SMP and the TT, UCI, games, engines, concurrent games, a 1-rank run)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXQ_WERROR=ON -DXQ_TSAN=ON >/dev/null
cmake --build build-tsan -j"$jobs" --target test_search test_uci test_game test_player_ext \
    test_process test_bookgen test_loops xqforge
supp=$PWD/tests/tsan.supp # Open MPI's internals only
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 suppressions=$supp" ctest -L tsan -j"$jobs" \
    --output-on-failure)

[[ ${XQ_FAST:-0} == 1 ]] && exit 0
echo "== Fuzzing: each harness for ${XQ_FUZZ_SECONDS:=20} s (skipped without clang)"
if command -v clang >/dev/null; then
    bash scripts/fuzz.sh "$XQ_FUZZ_SECONDS"
fi

echo "== Fault drills (kills and resume, disk full, unwritable output, hostile engines)"
(cd build && ctest -L drill --output-on-failure)

echo "== Slurm: a one-node cluster, jobs/slurm.sbatch requeued part way (skipped without root)"
(cd build && ctest -L slurm --output-on-failure)

echo "== Valgrind memcheck on a short cluster run (a build without -march=native)"
cmake -S . -B build-vg -DCMAKE_BUILD_TYPE=RelWithDebInfo -DXQ_NATIVE=OFF -DXQ_WERROR=ON \
    -DBUILD_TESTING=OFF >/dev/null
cmake --build build-vg -j"$jobs" --target xqforge >/dev/null
bash tests/valgrind_run.sh build-vg/xqforge jobs/sprt-weights.ini
