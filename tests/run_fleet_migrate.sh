#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fleet moves ranks between running tests when shares change (fishtest's shares, OpenBench's
# 25% band): on a 4-rank fleet (3 workers) a match runs alone on all 3; a second match of the
# same throughput is submitted, so the first drains (after --settle) and goes on with 2 while
# the second gets 1; `xqforge set` doubles the second's throughput, so the first drains to 1
# and the second, below its share, drains and goes on with 2; when the second ends, the
# first drains again and goes on with all 3. Both tests end with exactly the totals and PGN
# results of solo runs of their jobs (fixed nodes: the same games), nothing lost or doubled,
# and their records say no worker is left on them. XQ_ROUNDS_A and XQ_ROUNDS_B (pairs, 500
# and 60) must let b outlive the moves above and a outlive b: a plays alone on 3 ranks until
# b is in, and with 200 pairs a quiet machine once ended a before b.
set -u
xq=$1 jobs=$2
source "$(dirname "$0")/fleet_lib.sh"
job=$jobs/sprt-weights.ini
base=(--set job.kind=match --set job.concurrency=1 --set "time.nodes=${XQ_FLEET_NODES:-500}")
"$xq" submit "$q" "$job" "${base[@]}" --set job.rounds="${XQ_ROUNDS_A:-500}" --name a >/dev/null || fail "submit a"
timeout 540 mpirun --oversubscribe --bind-to none -np 4 "$xq" fleet "$q" --until-empty \
    --settle 2 >"$work/f.log" 2>&1 &
pid=$!
log=$work/f.log
for _ in $(seq 1200); do
    (($(journal_size 0001) > 0)) && break
    sleep 0.05
done
(($(journal_size 0001) > 0)) || fail "the first test did not start: $(tail -5 "$log")"
"$xq" submit "$q" "$job" "${base[@]}" --set job.rounds="${XQ_ROUNDS_B:-60}" --name b >/dev/null || fail "submit b"
for _ in $(seq 1200); do
    grep -q '^xqforge fleet: test 0002 (b, match) on 1 worker rank$' "$log" && break
    sleep 0.05
done
"$xq" set "$q" 0002 throughput=200 >/dev/null || fail "set 0002"
wait $pid || fail "the fleet: exit $?: $(cat "$log")"
expect() { # expect LINE WHAT: LINE is in the fleet's log
    grep -qx "xqforge fleet: $1" "$log" || fail "$2: $(grep 'test 000' "$log" | tr '\n' '|')"
}
expect 'test 0001 (a, match) on 3 worker ranks' "the first test did not start on 3 ranks"
expect 'test 0001 drains its 3 worker ranks, to go on with 2: a test waits for its share' \
    "the first test did not give a rank to the second"
expect 'test 0001 (a, match) on 2 worker ranks: resuming it' "the first test did not go on with 2"
expect 'test 0002 (b, match) on 1 worker rank' "the second test did not get 1 rank"
expect 'test 0001 drains its 2 worker ranks, to go on with 1: a test runs below its share' \
    "set did not make the first test give a rank back"
expect 'test 0001 (a, match) on 1 worker rank: resuming it' "the first test did not go on with 1"
expect 'test 0002 drains its 1 worker rank, to go on with 2: free ranks raise its share' \
    "the second test did not take the freed rank"
expect 'test 0002 (b, match) on 2 worker ranks: resuming it' "the second test did not go on with 2"
expect 'test 0001 drains its 1 worker rank, to go on with 3: free ranks raise its share' \
    "the first test did not take the ranks the second freed"
expect 'test 0001 (a, match) on 3 worker ranks: resuming it' "the first test did not go on with 3"
for t in 0001 0002; do
    [[ $(jq -r .state "$q/tests/$t/test.json") == finished ]] || fail "$t is not finished"
    [[ $(jq -r .workers "$q/tests/$t/test.json") == 0 ]] || fail "$t's record still has workers"
done
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml, .pairs_done]' "$1"; }
results() { grep -o '^\[Result "[^"]*"\]' "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ' '; }
for t in "0001 ${XQ_ROUNDS_A:-500}" "0002 ${XQ_ROUNDS_B:-60}"; do
    set -- $t
    timeout 540 mpirun --oversubscribe --bind-to none -np 4 "$xq" run "$job" "${base[@]}" \
        --set job.rounds="$2" --set output.dir="$work/solo-$1" >"$work/solo-$1.log" 2>&1 ||
        fail "solo $1: $(tail -3 "$work/solo-$1.log")"
    [[ $(totals "$q/tests/$1/result.json") == "$(totals "$work/solo-$1/result.json")" ]] ||
        fail "$1: $(totals "$q/tests/$1/result.json") against solo $(totals "$work/solo-$1/result.json")"
    [[ $(results "$q/tests/$1/games.pgn") == "$(results "$work/solo-$1/games.pgn")" ]] ||
        fail "$1's PGN results differ from the solo run's"
done
echo "fleet_migrate: 0001 went from 3 ranks to 2, 1 and back to 3, 0002 from 1 to 2; both equal their solo runs"
echo "1 passed, 0 failed"
