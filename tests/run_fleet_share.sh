#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fleet shares its ranks by throughput: two match tests of one time control, submitted at
# throughput 100 and 300, on a 5-rank fleet (4 workers) get 1 and 3 worker ranks, and the
# games each played over the same interval (from a moment both play, counted in their PGNs
# as they grow, to both stopped at once about 40 s later) are in ratio 1:3 within 15%. The
# games before that moment do not count: under load the first test starts seconds before the
# three ranks of the second, and its head start alone once made the ratio 2.47.
set -u
xq=$1 jobs=$2
source "$(dirname "$0")/fleet_lib.sh"
for tp in 100 300; do
    "$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds=100000 \
        --set job.concurrency=1 --set time.nodes=150 --throughput "$tp" --name "tp$tp" >/dev/null ||
        fail "submit at throughput $tp"
done
timeout 300 mpirun --oversubscribe --bind-to none -np 5 "$xq" fleet "$q" --until-empty \
    >"$work/fleet.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    (($(journal_size 0001) > 0 && $(journal_size 0002) > 0)) && break
    sleep 0.05
done
# Games so far: the PGN being written (games.pgn.rebuild, flushed after every pair).
played() {
    local n
    n=$(grep -c '^\[Result ' "$q/tests/$1/games.pgn.rebuild" 2>/dev/null)
    echo "${n:-0}"
}
sleep 2
a0=$(played 0001) b0=$(played 0002)
sleep "${XQ_SHARE_SECONDS:-40}"
"$xq" stop "$q" 0001 >/dev/null && "$xq" stop "$q" 0002 >/dev/null || fail "stop"
wait $pid || fail "the fleet: exit $?: $(tail -5 "$work/fleet.log")"
grep -q '^xqforge fleet: test 0001 (tp100, match) on 1 worker rank$' "$work/fleet.log" ||
    fail "throughput 100 did not get 1 of the 4 workers: $(grep 'test 0001 (' "$work/fleet.log")"
grep -q '^xqforge fleet: test 0002 (tp300, match) on 3 worker ranks$' "$work/fleet.log" ||
    fail "throughput 300 did not get 3 of the 4 workers: $(grep 'test 0002 (' "$work/fleet.log")"
a=$(($(jq .games "$q/tests/0001/result.json") - a0)) b=$(($(jq .games "$q/tests/0002/result.json") - b0))
((a > 0 && b > 0)) || fail "no games in the interval: $a and $b (before it: $a0 and $b0)"
ratio=$(echo "scale=3; $b / $a" | bc)
echo "$ratio >= 2.55 && $ratio <= 3.45" | bc | grep -q 1 ||
    fail "games $a and $b: ratio $ratio, not 3 within 15%"
echo "fleet share: throughput 100 and 300 on 1 and 3 workers: $a and $b games in the interval, ratio $ratio"
echo "1 passed, 0 failed"
