#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Group commit loses nothing it acknowledged: the coordinator (rank 0) of a run fed by 4
# simulated worker ranks (tests/sim_rank: stored real results over the real wire protocol) is
# killed with SIGKILL part way. Every game its progress line had counted by then is in the
# journal (the resumed run replays at least as many), and the resumed run ends with every pair
# counted exactly once (the totals and the PGN).
# Usage: run_coord_kill.sh BUILD_DIR
set -u
build=$1
here=$(cd "$(dirname "$0")/.." && pwd)
xq=$build/xqforge sim=$build/tests/sim_rank
work=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pairs=5000
# Ends what this test started (its ranks are the only processes naming its directory).
cleanup() {
    for p in $(pgrep -f "$work/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The benchmark's job, its recorded results and the bench signature, from a tiny benchmark.
XQ_BUILD=$build PAIRS=20 BENCH_DIR=$work RUN_TIMEOUT=120 bash "$here/scripts/bench-coordinator.sh" 2 \
    >"$work/setup.log" 2>&1 || fail "the benchmark's setup failed: $(tail -5 "$work/setup.log")"
sig=$(awk -F: '/^Nodes searched/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")
nps=$(awk -F: '/^Nodes\/second/ {gsub(/ /, "", $2); print $2}' "$work/bench.log")
run() { # run LOG [--resume]: rank 0 and 4 simulated ranks
    local log=$1
    shift
    timeout 300 mpirun --oversubscribe --bind-to none --mca btl self,vader \
        --mca mpi_yield_when_idle 1 -np 1 "$xq" run "$work/job.ini" --set job.rounds=$pairs \
        --set output.dir="$work/k" "$@" : -np 4 "$sim" "$work/record/journal.xqj" "$sig" "$nps" \
        >"$log" 2>&1
}
# The most games the coordinator said it had counted: its progress lines ("N/M games,") and
# the summaries it prints with its reports ("(N games,").
counted() {
    grep -aoE '(^|\()[0-9]+(/[0-9]+)? games,' "$1" | tr -d '(' | cut -d/ -f1 | cut -d' ' -f1 |
        sort -n | tail -n 1
}

run "$work/k1.log" &
pid=$!
for _ in $(seq 2400); do
    [[ $(counted "$work/k1.log") -ge 600 ]] 2>/dev/null && break
    sleep 0.05
done
killed=""
for p in $(pgrep -f "output.dir=$work/k"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=0'; then
        kill -KILL "$p" && killed=$p
    fi
done
acked=$(counted "$work/k1.log")
wait $pid
[[ -n $killed ]] || fail "rank 0 was not found running (the run: $(tail -3 "$work/k1.log"))"
[[ -n $acked && $acked -ge 600 && $acked -lt $((2 * pairs)) ]] ||
    fail "killed at '$acked' games, not part way"
for p in $(pgrep -f "$work/"); do kill -KILL "$p" 2>/dev/null; done

run "$work/k2.log" --resume || fail "the resumed run failed: $(tail -5 "$work/k2.log")"
done_units=$(sed -n 's/^Resuming run [0-9a-f]*: \([0-9]*\) units\? already done.*/\1/p' "$work/k2.log")
[[ -n $done_units ]] || fail "the resumed run did not replay the journal"
((2 * done_units >= acked)) ||
    fail "the coordinator had counted $acked games, the journal holds $((2 * done_units))"
grep -aq "^Games: $((2 * pairs))," "$work/k2.log" ||
    fail "the resumed run did not end with $((2 * pairs)) games: $(grep -a '^Games' "$work/k2.log")"
games=$(grep -c '^\[Result ' "$work/k/games.pgn")
[[ $games == $((2 * pairs)) ]] || fail "the PGN holds $games games, $((2 * pairs)) expected"
echo "killed at $acked games counted; the journal held $((2 * done_units)); resumed to $((2 * pairs))"
echo "1 passed, 0 failed"
