#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer harnesses (fuzz/, clang, ASan+UBSan) in build-fuzz and runs each for
# SECONDS (default 60) on one core, one after another, then prints a table: harness, seconds,
# executions, coverage (edges) and features, corpus size, crashes. New inputs go to
# build-fuzz/fuzz-run/NAME/corpus (the committed seeds in fuzz/corpus/NAME are only read);
# a crash leaves its input in build-fuzz/fuzz-run/NAME/ and makes the script exit 1.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]   (XQ_FUZZ_NICE=N sets the niceness, 19)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
all=(fen move openings pgn pgntext job engine wire journal texel movebook upload)
harnesses=("${@:-${all[@]}}")
[[ $# -eq 0 ]] && harnesses=("${all[@]}")
command -v clang >/dev/null || { echo "fuzz: clang is not installed" >&2; exit 77; }

cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DXQ_FUZZ=ON \
    -DXQ_WERROR=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers >/dev/null

dict_of() {
    case $1 in
    fen) echo fuzz/dict/fen.dict ;;
    openings | pgn | pgntext) echo fuzz/dict/pgn.dict ;;
    job) echo fuzz/dict/job.dict ;;
    engine) echo fuzz/dict/engine.dict ;;
    esac
}
# Inputs longer than the engine's line cap (64 KiB) reach the over-long line path.
maxlen_of() { [[ $1 == engine ]] && echo 140000 || echo 16384; }

rows=() failed=0
for h in "${harnesses[@]}"; do
    run=build-fuzz/fuzz-run/$h
    mkdir -p "$run/corpus"
    args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$(maxlen_of "$h")"
          -print_final_stats=1 -artifact_prefix="$run/")
    d=$(dict_of "$h")
    [[ -n $d ]] && args+=(-dict="$d")
    log=$run/last-$$.log # runs at the same time keep their own logs
    start=$(date +%s)
    rc=0
    nice -n "${XQ_FUZZ_NICE:-19}" "build-fuzz/fuzz/fuzz_$h" "${args[@]}" "$run/corpus" \
        "fuzz/corpus/$h" >"$log" 2>&1 || rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    crashes=0
    if ((rc != 0)); then
        crashes=1
        failed=1
        echo "fuzz: $h failed (exit $rc); see $run/last.log" >&2
        grep -E 'ERROR: |SUMMARY: |Test unit written' "$log" | head -5 >&2 || true
    fi
    mv "$log" "$run/last.log"
    rows+=("$(printf '%-10s %6s %12s %7s %8s %7s %7s' "$h" "$took" "${execs:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$crashes")")
done
printf '%-10s %6s %12s %7s %8s %7s %7s\n' harness secs executions cov features corpus crashes
printf '%s\n' "${rows[@]}"
exit $failed
