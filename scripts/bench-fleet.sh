#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet's coordinator at scale: the real `xqforge fleet QUEUE --until-empty` on rank 0 with
# N simulated worker ranks (tests/sim_rank.c --fleet: real MPI processes that take rank 0's
# orders as a fleet worker does, join each test's group with the same link functions, and
# answer every WORK at once with stored results of real games), so the figures are rank 0's
# own: every pair checked move by move by the rules, journaled durably before it counts, the
# queue's page rewritten as the tests go on.
# Two fleets play the same number of games: (a) one test of TESTS × PAIRS pairs on all N
# workers; (b) TESTS tests of PAIRS pairs each, submitted to the queue at once, which rank 0
# coordinates side by side (a thread and a group of about N/TESTS workers per test).
# First a short real run of the job (1 rank) records a few pair results in its journal; the
# job has a single opening, so a stored pair is valid for every pair id of every test (the
# tests differ only in name and rounds).
# For each fleet it prints the games counted, the time from the first test's start to the
# fleet's end, games per minute, rank 0's CPU (user + system, read from /proc/PID/stat at those
# two moments) per 1,000 games and its peak memory (VmHWM); then (b)'s figures over (a)'s. It
# checks that every test finished with all its games counted (its result.json).
# The simulated ranks sleep while they wait (1 ms, or N/16 ms with N ranks), Open MPI yields
# when idle, and each fleet has a time limit.
# Usage: scripts/bench-fleet.sh [N]   (default 256 simulated worker ranks; at least TESTS)
# Environment: XQ_BUILD (build dir, default build), TESTS (tests at once, default 16), PAIRS
# (game pairs per test, default 2500), BENCH_DIR (work directory, default a temporary one,
# removed at the end), RUN_TIMEOUT (seconds per fleet, default 600), MPI_EXTRA (more mpirun
# options).
set -euo pipefail
export LC_ALL=C # EPOCHREALTIME and awk's numbers with a decimal point
here=$(cd "$(dirname "$0")/.." && pwd)
build=${XQ_BUILD:-$here/build}
xq=$build/xqforge sim=$build/tests/sim_rank
die() {
    echo "bench-fleet: $*" >&2
    exit "${code:-1}"
}
code=2
[[ $# -le 1 ]] || die "usage: scripts/bench-fleet.sh [N]"
n=${1:-256} tests=${TESTS:-16} pairs=${PAIRS:-2500} limit=${RUN_TIMEOUT:-600}
for f in "$xq" "$sim"; do
    [[ -x $f ]] || die "$f missing: build first (cmake --build $build)"
done
[[ $n =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a number of ranks"
[[ $tests =~ ^[1-9][0-9]*$ ]] || die "TESTS must be a positive number"
[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive number"
[[ $limit =~ ^[1-9][0-9]*$ ]] || die "RUN_TIMEOUT must be a positive number"
((n >= tests)) || die "$n ranks cannot play $tests tests at once: give at least TESTS ranks"
((n < 1024)) || die "a fleet has at most 1024 ranks (rank 0 and $n workers is too many)"
code=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# mpirun holds a few descriptors per rank.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
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
name = fleet bench
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
file = $work/one.epd
order = sequential
[adjudication]
resign = on
maxplies = 300
EOF

rm -rf "$work/record"
"$xq" run "$work/job.ini" --set output.dir="$work/record" >"$work/record.log" 2>&1 ||
    { cat "$work/record.log" >&2; die "the recording run failed"; }
"$xq" bench >"$work/bench.log" 2>&1
sig=$(awk -F: '/^Nodes searched/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")
nps=$(awk -F: '/^Nodes\/second/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")
nap=$((n / 16 > 1 ? n / 16 : 1))

# Rank 0's CPU so far, user + system, in clock ticks (/proc/PID/stat fields 14 and 15).
cpu_ticks() {
    local f
    read -r -a f <"/proc/$1/stat" && echo $((f[13] + f[14]))
}

# fleet LABEL COUNT ROUNDS: a queue of COUNT tests of ROUNDS pairs each, played by one fleet of
# rank 0 and N simulated workers. Its log gets two lines of this script's own: "bench-fleet:
# start TIME TICKS" at the first test's start and "bench-fleet: end TIME TICKS KIB" at the
# fleet's end (rank 0's CPU then, and its peak memory).
fleet() {
    local label=$1 count=$2 rounds=$3 q=$work/$1.queue log=$work/$1.log rc pid='' started='' joined=''
    rm -rf "$q"
    for i in $(seq -w "$count"); do
        "$xq" submit "$q" "$work/job.ini" --set job.rounds="$rounds" --name "bench $i" \
            >>"$work/$label.submit.log" 2>&1 || { cat "$work/$label.submit.log" >&2; die "submit failed"; }
    done
    set +e
    # -np 1 xqforge fleet (rank 0, through bash so that it says its pid) : -np N simulated
    # workers; shared memory only.
    # shellcheck disable=SC2016,SC2086 # $$ and "$0" are the inner shell's; MPI_EXTRA split on purpose
    timeout "$limit" mpirun --oversubscribe --bind-to none --mca btl self,vader \
        --mca mpi_yield_when_idle 1 ${MPI_EXTRA:-} \
        -np 1 bash -c 'echo "bench-fleet: rank 0 is pid $$"; exec "$0" fleet "$1" --until-empty' \
        "$xq" "$q" \
        : -np "$n" "$sim" --fleet "$work/record/journal.xqj" "$sig" "$nps" 2 "$nap" 2>&1 |
        while IFS= read -r line; do
            printf '%s\n' "$line"
            case $line in
            "bench-fleet: rank 0 is pid "*) pid=${line##* } ;;
            "xqforge fleet: test "*" on "*" worker rank"*)
                [[ -n $started ]] || echo "bench-fleet: start $EPOCHREALTIME $(cpu_ticks "$pid")"
                started=1
                ;;
            "rank "*" joined: "*)
                [[ -n $joined ]] || echo "bench-fleet: joined $EPOCHREALTIME"
                joined=1
                ;;
            "xqforge fleet: no test left: the fleet ends")
                echo "bench-fleet: end $EPOCHREALTIME $(cpu_ticks "$pid")" \
                    "$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status")"
                ;;
            esac
        done >"$log"
    rc=${PIPESTATUS[0]}
    set -e
    # mpirun may fail after the fleet ended (seen at 257 processes on 2 cores: "process rank K
    # with PID 0 exiting improperly" while the ranks finalize): every figure below is rank 0's
    # from before that, and the checks that follow still require every game counted, so the
    # run stands, with the failure said. Any other failure is the fleet's.
    if ((rc != 0 && rc != 124)) && grep -q '^bench-fleet: end ' "$log"; then
        echo "bench-fleet: $label: mpirun exited $rc after the fleet ended: $(grep -m1 -A1 'mpirun has exited' "$log" | tr '\n' ' ')" >&2
    elif ((rc != 0)); then
        tail -n 20 "$log" >&2
        ((rc == 124)) && echo "bench-fleet: $label: not done within $limit s" >&2
        die "the $label fleet failed (log: $log)"
    fi
    # Every test finished with all its games counted.
    local games=0 g state
    for dir in "$q"/tests/*/; do
        g=$(jq -r .games "$dir/result.json" 2>/dev/null || echo none)
        state=$(jq -r .state "$dir/test.json" 2>/dev/null || echo unknown)
        [[ $g == "$((2 * rounds))" && $state == finished ]] ||
            die "$label: test $(basename "$dir") is $state with $g games, not finished with $((2 * rounds)) (log: $log)"
        games=$((games + g))
    done
    ((games == 2 * count * rounds)) || die "$label: $games games in all, not $((2 * count * rounds))"
    awk -v label="$label" -v count="$count" -v n="$n" -v games="$games" \
        -v hz="$(getconf CLK_TCK)" '
        $1 == "bench-fleet:" && $2 == "start" { t0 = $3; c0 = $4 }
        $1 == "bench-fleet:" && $2 == "joined" { tj = $3 }
        $1 == "bench-fleet:" && $2 == "end" { t1 = $3; c1 = $4; kib = $5 }
        /^coordinator CPU / { loops += $3 }
        END {
            if (t0 == "" || tj == "" || t1 == "" || c0 == "" || c1 == "") {
                print "bench-fleet: " label ": the fleet did not say when its tests started and ended" > "/dev/stderr"
                exit 1
            }
            c = (c1 - c0) / hz
            printf "%-8s %5d %6d %8d %8.2f %8.2f %10.0f %9.3f %10.3f %10.1f\n", label, count, n,
                   games, tj - t0, t1 - tj, 60 * games / (t1 - tj), 1000 * c / games,
                   1000 * loops / games, kib / 1024
        }' "$log"
}

# Columns: tests at once; simulated worker ranks; games counted; set-up: seconds from the
# first test's start (rank 0 names its ranks) to the first worker's HELLO on its group (the
# group made, the job loaded and checked, rank 0's bench: on 2 cores the group's ranks, each
# waiting in MPI_Comm_create_group, take most of it); play: seconds from that HELLO to the
# fleet's end; games per minute over the play; rank 0's CPU seconds (user + system, every
# test's set-up included) per 1,000 games from the first test's start to the end, and the
# part of it its tests' coordinating loops took (the sum of the "coordinator CPU" lines: each
# test's thread, after its set-up); rank 0's peak resident memory (VmHWM, Open MPI's shared
# memory included).
printf '%-8s %5s %6s %8s %8s %8s %10s %9s %10s %10s\n' fleet tests ranks games "set-up s" \
    "play s" "games/min" "CPU s/1k" "loops s/1k" "rank 0 MiB"
one=$(fleet single 1 $((tests * pairs)))
echo "$one"
many=$(fleet multi "$tests" "$pairs")
echo "$many"
awk -v a="$one" -v b="$many" '
    function r(p, q) { return q > 0 ? p / q : 0 }
    BEGIN {
        split(a, x); split(b, y)
        printf "%-8s %5s %6s %8s %8.2f %8.2f %10.2f %9.2f %10.2f %10.2f\n", "ratio", "", "",
               "", r(y[5], x[5]), r(y[6], x[6]), r(y[7], x[7]), r(y[8], x[8]), r(y[9], x[9]),
               r(y[10], x[10]) }'
