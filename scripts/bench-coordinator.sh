#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The coordinator at scale: the real `xqforge run` on rank 0 with N simulated worker ranks
# (tests/sim_rank.c: real MPI processes speaking the real wire protocol, answering every WORK
# at once with stored results of real games), so the figures are the coordinator's own: every
# pair checked move by move by the rules, journaled durably (group commit: one fdatasync per
# batch) before it counts, written to the PGN and the reports.
# First a short real run of the same job (1 rank) records a few pair results in its journal;
# the job has a single opening, so a stored pair is valid for every pair id.
# For each N it prints results absorbed (games per second and per minute), rank 0's CPU per
# 1,000 games, journal fsyncs and bytes per game, rank 0's peak memory (VmHWM), from the line
# the coordinator prints when its loop ends ("Coordinator: ..."); it checks that the run
# ended with every game counted and that the journal file holds the bytes it reports.
# The simulated ranks sleep while they wait (1 ms, or N/16 ms with N ranks: at most about 16,000
# polls a second in all), Open MPI yields when idle, and each run has a time limit.
# Usage: scripts/bench-coordinator.sh [N ...]   (default: 8 64 256)
# Environment: XQ_BUILD (build dir, default build), PAIRS (game pairs per run, default 6000),
# BENCH_DIR (work directory, default a temporary one, removed at the end), RUN_TIMEOUT
# (seconds per run, default 600), MPI_EXTRA (more mpirun options).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${XQ_BUILD:-$here/build}
xq=$build/xqforge sim=$build/tests/sim_rank
pairs=${PAIRS:-6000}
ranks=("$@")
[[ ${#ranks[@]} -eq 0 ]] && ranks=(8 64 256)
for f in "$xq" "$sim"; do
    [[ -x $f ]] || { echo "bench-coordinator: $f missing: build first (cmake --build $build)" >&2; exit 2; }
done
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "bench-coordinator: PAIRS must be a positive number" >&2; exit 2; }
limit=${RUN_TIMEOUT:-600}
[[ $limit =~ ^[1-9][0-9]*$ ]] || { echo "bench-coordinator: RUN_TIMEOUT must be a positive number" >&2; exit 2; }
for n in "${ranks[@]}"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench-coordinator: '$n' is not a number of ranks" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -n ${BENCH_DIR:-} ]]; then
    work=$BENCH_DIR
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

# One opening (the start position): every pair plays it, with colours swapped.
echo 'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1' >"$work/one.epd"
cat >"$work/job.ini" <<EOF
[job]
kind = match
name = coordinator bench
rounds = 4
concurrency = 2
[engine new]
option.horse_mg = 300
[engine base]
[each]
proto = builtin
option.UseNNUE = false
option.Threads = 1
option.Hash = 16
[time]
nodes = 2000
[openings]
file = one.epd
order = sequential
[adjudication]
resign = on
maxplies = 300
EOF

rm -rf "$work/record"
"$xq" run "$work/job.ini" --set output.dir="$work/record" >"$work/record.log" 2>&1 ||
    { cat "$work/record.log" >&2; echo "bench-coordinator: the recording run failed" >&2; exit 1; }
"$xq" bench >"$work/bench.log" 2>&1
sig=$(awk -F: '/^Nodes searched/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")
nps=$(awk -F: '/^Nodes\/second/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")

# Columns: ranks; games counted; games per second and per minute over coord_run's whole time;
# rank 0's CPU and its time in fdatasync per 1,000 games; the games per minute rank 0 alone
# would allow (60 * games / (CPU + fdatasync time)); fdatasync calls and journal bytes per
# game; rank 0's peak resident memory (VmHWM, Open MPI's shared memory included).
printf '%6s %7s %8s %10s %10s %11s %10s %12s %11s %10s\n' ranks games "games/s" "games/min" \
    "CPU s/1k" "fsync s/1k" "cap g/min" "fsyncs/game" "bytes/game" "rank 0 MiB"
for n in "${ranks[@]}"; do
    out=$work/n$n log=$work/n$n.log
    rm -rf "$out"
    nap=$((n / 16 > 1 ? n / 16 : 1))
    # -np 1 xqforge (rank 0, the coordinator) : -np N simulated workers; shared memory only.
    # shellcheck disable=SC2086 # MPI_EXTRA: options, split on purpose
    if ! timeout "$limit" mpirun --oversubscribe --bind-to none --mca btl self,vader \
        --mca mpi_yield_when_idle 1 ${MPI_EXTRA:-} \
        -np 1 "$xq" run "$work/job.ini" --verbose --set job.rounds="$pairs" --set output.dir="$out" \
        : -np "$n" "$sim" "$work/record/journal.xqj" "$sig" "$nps" 2 "$nap" >"$log" 2>&1; then
        rc=$?
        tail -n 20 "$log" >&2
        [[ $rc -eq 124 ]] && echo "bench-coordinator: $n ranks: not done within $limit s" >&2
        echo "bench-coordinator: the run with $n ranks failed (log: $log)" >&2
        exit 1
    fi
    line=$(grep -a '^Coordinator: ' "$log" | tail -n 1)
    read -r results wall cpu fsync syncs bytes kib < <(echo "$line" | awk '{
        for (i = 1; i <= NF; i++) {
            if ($(i + 1) == "results") r = $i
            if ($i == "in" && $(i + 2) == "s,") w = $(i + 1)
            if ($i == "CPU") c = $(i + 1)
            if ($i == "fdatasync") f = $(i + 1)
            if ($(i + 1) == "syncs" && s == "") s = $i
            if ($(i + 1) == "bytes" && b == "") b = $i
            if ($i == "memory") k = $(i + 1)
        }
        print r, w, c, f, s, b, k }')
    games=$((2 * results))
    # Every pair counted, and the journal file holds what the coordinator says it wrote.
    grep -aq "Games: $((2 * pairs))," "$log" ||
        { echo "bench-coordinator: $n ranks: not every game was counted (log: $log)" >&2; exit 1; }
    size=$(stat -c %s "$out/journal.xqj")
    [[ $results -eq $pairs ]] ||
        { echo "bench-coordinator: $n ranks: $results results, not $pairs" >&2; exit 1; }
    awk -v n="$n" -v g="$games" -v w="$wall" -v c="$cpu" -v f="$fsync" -v s="$syncs" \
        -v b="$bytes" -v k="$kib" -v size="$size" 'BEGIN {
        printf "%6d %7d %8.0f %10.0f %10.3f %11.3f %10.0f %12.4f %11.0f %10.1f\n", n, g, g / w,
               60 * g / w, 1000 * c / g, 1000 * f / g, 60 * g / (c + f), s / g, b / g, k / 1024
        if (size <= b) { printf "journal file %d bytes, not above the %d written\n", size, b; exit 1 } }'
done
