#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fleet moves ranks between running tests when shares change (fishtest's shares, OpenBench's
# 25% band): on a 4-rank fleet (3 workers) a match at throughput 100 runs alone on all 3;
# a second match at throughput 200 is submitted, so the first drains (after --settle) and goes
# on with 1 rank while the second gets 2; when the second ends, the first drains again and
# goes on with all 3. Both tests end with exactly the totals and PGN results of solo runs of
# their jobs (fixed nodes: the same games), nothing lost or doubled, and their records say
# no worker is left on them.
set -u
xq=$1 jobs=$2
source "$(dirname "$0")/fleet_lib.sh"
job=$jobs/sprt-weights.ini
base=(--set job.kind=match --set job.concurrency=1 --set "time.nodes=${XQ_FLEET_NODES:-500}")
"$xq" submit "$q" "$job" "${base[@]}" --set job.rounds=30 --name a >/dev/null || fail "submit a"
timeout 300 mpirun --oversubscribe --bind-to none -np 4 "$xq" fleet "$q" --until-empty \
    --settle 2 >"$work/f.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    (($(journal_size 0001) > 0)) && break
    sleep 0.05
done
(($(journal_size 0001) > 0)) || fail "the first test did not start: $(tail -5 "$work/f.log")"
"$xq" submit "$q" "$job" "${base[@]}" --set job.rounds=3 --throughput 200 --name b >/dev/null ||
    fail "submit b"
wait $pid || fail "the fleet: exit $?: $(tail -5 "$work/f.log")"
log=$work/f.log
grep -q '^xqforge fleet: test 0001 (a, match) on 3 worker ranks$' "$log" ||
    fail "the first test did not start on 3 ranks: $(grep 'test 0001' "$log" | head -3)"
grep -q '^xqforge fleet: test 0001 drains its 3 worker ranks, to go on with 1: a test waits for its share$' "$log" ||
    fail "the first test did not give ranks to the second: $(grep 'test 000' "$log" | head -5)"
grep -q '^xqforge fleet: test 0001 (a, match) on 1 worker rank: resuming it$' "$log" ||
    fail "the first test did not go on with 1 rank: $(grep 'test 0001' "$log" | head -5)"
grep -q '^xqforge fleet: test 0002 (b, match) on 2 worker ranks$' "$log" ||
    fail "the second test did not get 2 ranks: $(grep 'test 0002' "$log" | head -3)"
grep -q '^xqforge fleet: test 0001 drains its 1 worker rank, to go on with 3: free ranks raise its share$' "$log" ||
    fail "the first test did not take the freed ranks: $(grep 'test 000' "$log" | tail -5)"
grep -q '^xqforge fleet: test 0001 (a, match) on 3 worker ranks: resuming it$' "$log" ||
    fail "the first test did not go on with 3 ranks: $(grep 'test 0001' "$log" | tail -3)"
for t in 0001 0002; do
    [[ $(jq -r .state "$q/tests/$t/test.json") == finished ]] || fail "$t is not finished"
    [[ $(jq -r .workers "$q/tests/$t/test.json") == 0 ]] || fail "$t's record still has workers"
done
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml, .pairs_done]' "$1"; }
results() { grep -o '^\[Result "[^"]*"\]' "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ' '; }
for t in "0001 30" "0002 3"; do
    set -- $t
    timeout 300 mpirun --oversubscribe --bind-to none -np 2 "$xq" run "$job" "${base[@]}" \
        --set job.rounds="$2" --set output.dir="$work/solo-$1" >"$work/solo-$1.log" 2>&1 ||
        fail "solo $1: $(tail -3 "$work/solo-$1.log")"
    [[ $(totals "$q/tests/$1/result.json") == "$(totals "$work/solo-$1/result.json")" ]] ||
        fail "$1: $(totals "$q/tests/$1/result.json") against solo $(totals "$work/solo-$1/result.json")"
    [[ $(results "$q/tests/$1/games.pgn") == "$(results "$work/solo-$1/games.pgn")" ]] ||
        fail "$1's PGN results differ from the solo run's"
done
echo "fleet_migrate: 0001 went from 3 ranks to 1 and back to 3, 0002 had 2; both equal their solo runs"
echo "1 passed, 0 failed"
