#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A signal drains a run instead of killing it (what Slurm sends before a time limit, a
# preemption or a requeue). SIGUSR1 to a one-process run part-way: exit 130, the journal whole,
# the drain's account printed; the same command again with [job] resume = auto (no --resume)
# continues the journal and ends with the totals of an uninterrupted run. SIGTERM to rank 0 of
# a two-rank run in which rank 0 plays too (coordinator_plays) with a grace: every unit in
# progress finishes, none is dropped, exit 130, and --resume=auto ends with the same totals.
# A grace too short for the games in progress drops them all. resume = auto without a journal
# starts afresh; --resume=auto and --fresh together are refused.
set -u
xq=$1 job=$2
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np 2)
sets=(--set job.kind=match --set job.rounds=12 --set job.concurrency=1)
fail() {
    echo "FAIL: $*"
    echo "0 passed, 1 failed"
    exit 1
}
totals() { grep -E '^(Games|Ptnml)' "$1"; }
# Waits until DIR's journal holds more than BYTES (results, not only its header).
wait_journal() {
    for _ in $(seq 2400); do
        [[ -s $1/journal.xqj && $(stat -c %s "$1/journal.xqj") -gt $2 ]] && return 0
        sleep 0.05
    done
    return 1
}
# The pid of rank 0 of the run writing to DIR.
rank0_of() {
    for p in $(pgrep -f "output.dir=$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=0' &&
            echo "$p" && return 0
    done
    return 1
}

"$xq" run "$job" "${sets[@]}" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "uninterrupted run failed: $(tail -5 "$work/a.log")"
want=$(totals "$work/a.log")
[[ -n $want ]] || fail "no summary in the uninterrupted run"

# SIGUSR1, no grace: the games in progress are dropped, what was journaled stays.
auto=(--set job.resume=auto)
"$xq" run "$job" "${sets[@]}" "${auto[@]}" --set output.dir="$work/b" >"$work/b1.log" 2>&1 &
pid=$!
pids+=("$pid")
wait_journal "$work/b" 2000 || fail "no result journaled: $(tail -3 "$work/b1.log")"
kill -USR1 "$pid"
wait "$pid"
rc=$?
[[ $rc == 130 ]] || fail "SIGUSR1: exit $rc, 130 expected: $(tail -3 "$work/b1.log")"
grep -q "^Drained: [0-9]* of the [0-9]* units\? in progress finished" "$work/b1.log" ||
    fail "no account of the drain: $(tail -5 "$work/b1.log")"
# The same command again: resume = auto continues the journal.
"$xq" run "$job" "${sets[@]}" "${auto[@]}" --set output.dir="$work/b" >"$work/b2.log" 2>&1 ||
    fail "resume = auto failed: $(tail -5 "$work/b2.log")"
grep -q "resume = auto: continuing the journal" "$work/b2.log" || fail "resume = auto did not resume"
grep -q "^Resuming" "$work/b2.log" || fail "resume = auto replayed nothing"
[[ $(totals "$work/b2.log") == "$want" ]] ||
    fail "totals after SIGUSR1 and resume = auto: want '$want' got '$(totals "$work/b2.log")'"

# SIGTERM to rank 0 of two, rank 0 playing too, a grace long enough: none dropped.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set job.coordinator_plays=true \
    --set job.drain_grace=120 --set output.dir="$work/c" >"$work/c1.log" 2>&1 &
pid=$!
pids+=("$pid")
wait_journal "$work/c" 2000 || fail "no result journaled (two ranks): $(tail -3 "$work/c1.log")"
r0=$(rank0_of "$work/c") || fail "rank 0 not found"
kill -TERM "$r0"
wait "$pid"
rc=$?
[[ $rc == 130 ]] || fail "SIGTERM with a grace: exit $rc, 130 expected: $(tail -3 "$work/c1.log")"
grep -q "^rank 0 on .* joined" "$work/c1.log" || fail "rank 0 did not play (coordinator_plays)"
grep -q "^rank 1 on .* joined" "$work/c1.log" || fail "rank 1 did not play"
line=$(grep "^Drained: " "$work/c1.log")
[[ $line =~ ^Drained:\ ([0-9]+)\ of\ the\ ([0-9]+)\ units.*\ 0\ dropped ]] &&
    [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
    fail "with a grace every unit in progress finishes: '$line'"
grep -q "grace is over" "$work/c1.log" && fail "the grace ended though the games were short"
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set job.coordinator_plays=true \
    --set output.dir="$work/c" --resume=auto >"$work/c2.log" 2>&1 ||
    fail "--resume=auto failed: $(tail -5 "$work/c2.log")"
[[ $(totals "$work/c2.log") == "$want" ]] ||
    fail "totals after a drain with a grace: want '$want' got '$(totals "$work/c2.log")'"

# A grace shorter than a game (moves of 500,000 nodes): the units in progress are dropped
# when it ends (a game stops between moves).
"$xq" run "$job" "${sets[@]}" --set time.nodes=500000 --set job.drain_grace=1 \
    --set output.dir="$work/d" >"$work/d.log" 2>&1 &
pid=$!
pids+=("$pid")
for _ in $(seq 1200); do
    grep -q "joined" "$work/d.log" && break
    sleep 0.05
done
sleep 1 # the worker asks for its units as it joins
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc == 130 ]] || fail "a short grace: exit $rc, 130 expected: $(tail -3 "$work/d.log")"
grep -q "grace is over" "$work/d.log" || fail "the grace did not end: $(tail -3 "$work/d.log")"
line=$(grep "^Drained: " "$work/d.log")
[[ $line =~ ^Drained:\ 0\ of\ the\ ([0-9]+)\ units.*\ ([0-9]+)\ dropped ]] &&
    [[ ${BASH_REMATCH[1]} -gt 0 && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
    fail "a short grace drops the units in progress: '$line'"

# resume = auto with no journal starts afresh; it excludes --fresh.
"$xq" run "$job" --set job.kind=match --set job.rounds=1 "${auto[@]}" \
    --set output.dir="$work/e" >"$work/e.log" 2>&1 || fail "resume = auto without a journal failed"
grep -q "^Games: 2," "$work/e.log" || fail "resume = auto without a journal: no fresh run"
"$xq" run "$job" --resume=auto --fresh >"$work/f.log" 2>&1
[[ $? == 2 ]] || fail "--resume=auto with --fresh accepted"
grep -q "exclude each other" "$work/f.log" || fail "no clear error for --resume=auto --fresh"

echo "drain: $(grep -h '^Drained' "$work/b1.log" "$work/c1.log" "$work/d.log" | tr '\n' ' ')"
echo "1 passed, 0 failed"
