#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A fleet on 3 ranks (2 workers: two tests at once) plays a queue: a long SPRT stopped part
# way (recorded stopped, its result.json interrupted), two fixed-node SPRTs and a fixed-node
# match, a test whose engine is gone by the time it runs (it fails alone, with the reason,
# and the fleet goes on), and a test submitted while the fleet runs (it takes the next free
# rank before the older tests of lower priority). Rank 0 is then killed with SIGKILL while
# the match runs, and a new fleet resumes every test left running from its journal; that
# one loses a worker (SIGKILL) part way, and a third fleet finishes the queue. Every
# finished test's result.json totals, and its PGN's results, equal those of a solo
# `xqforge run` of the same job; `xqforge queue --json` and index.json agree with the files.
set -u
xq=$1 jobs=$2
source "$(dirname "$0")/fleet_lib.sh"
base=(--set job.concurrency=1)
job=$jobs/sprt-weights.ini
submit() { "$xq" submit "$q" "$job" "${base[@]}" "$@" || fail "submit $*"; }
state() { jq -r .state "$q/tests/$1/test.json"; }
fleet() { # fleet LOG: a 3-rank fleet until the queue is empty
    timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$xq" fleet "$q" --until-empty >"$1" 2>&1
}

submit --set job.rounds=400 --priority 10 --name long >/dev/null # 0001: stopped part way
submit --set job.rounds=5 --name sprt-a >/dev/null                 # 0002
submit --set job.rounds=4 --set sprt.elo1=20 --name sprt-b >/dev/null # 0003
submit --set job.rounds=20 --set job.kind=match --name match >/dev/null # 0004: killed in it
# 0005: an external engine that is there when submitted and gone when the test starts.
cp /usr/games/fairy-stockfish "$work/fsf" || fail "fairy-stockfish is missing (scripts/install-deps.sh)"
printf '[job]\nkind = match\nrounds = 1\n[each]\nnodes = 2000\n[engine a]\ncmd = ./fsf\nproto = uci\n[engine b]\n' >"$work/ext.ini"
(cd "$work" && "$xq" submit "$q" ext.ini --priority 7 >/dev/null) || fail "submit ext.ini"
rm "$work/fsf"
fleet "$work/f1.log" &
pid=$!
for _ in $(seq 1200); do
    (($(journal_size 0001) > 0)) && break
    sleep 0.05
done
(($(journal_size 0001) > 0)) || fail "the first test did not start: $(tail -5 "$work/f1.log")"
id=$(submit --set job.rounds=3 --priority 5 --name late) # 0006: submitted part way
[[ $id == 0006 ]] || fail "the late test got id '$id'"
for _ in $(seq 1200); do
    (($(journal_size 0001) > 3000)) && break
    sleep 0.05
done
(($(journal_size 0001) > 3000)) || fail "the first test did not go on: $(tail -5 "$work/f1.log")"
"$xq" stop "$q" 0001 >/dev/null || fail "stop 0001"
for _ in $(seq 1200); do
    [[ $(state 0001) == stopped ]] && break
    sleep 0.05
done
[[ $(state 0001) == stopped ]] || fail "0001 is $(state 0001), not stopped"
grep -q '"interrupted": true' "$q/tests/0001/result.json" || fail "0001's result.json: not interrupted"
# The match (last by priority and id) is killed part way: SIGKILL to rank 0.
for _ in $(seq 2400); do
    (($(journal_size 0004) > 3000)) && break
    sleep 0.05
done
(($(journal_size 0004) > 3000)) || fail "the match did not start: $(tail -5 "$work/f1.log")"
for p in $(pgrep -f "fleet $q"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=0' && kill -KILL "$p"
done
wait $pid
[[ $(state 0004) == running ]] || fail "the killed test is $(state 0004), not running"
# The order of starts: 0001 (priority 10) and 0005 (7) first, the two workers' first tests;
# the late 0006 (5) before the older 0003 and 0004 (0), whatever else freed a rank first.
order=$(grep -oE '^xqforge fleet: test 000[0-9] \(' "$work/f1.log" | awk '{print $4}' | tr '\n' ' ')
[[ $order == "0001 0005 "* ]] || fail "the fleet's first tests: $order"
[[ $order =~ 0006.*0003.*0004 ]] || fail "the late test did not go before the older ones: $order"
grep -q '^xqforge fleet: test 0001 (long, sprt) on 1 worker rank$' "$work/f1.log" ||
    fail "0001 did not get one of the two workers: $(grep 'test 0001 (' "$work/f1.log")"
[[ $(state 0005) == failed ]] || fail "the test without its engine is $(state 0005)"
jq -r .reason "$q/tests/0005/test.json" | grep -q "engine 'a': cmd: .*fsf: No such file" ||
    fail "0005's reason: $(jq -r .reason "$q/tests/0005/test.json")"
# The second fleet loses a worker (SIGKILL: mpirun ends the job) part way through the
# match; a third one finishes the queue.
before=$(journal_size 0004)
fleet "$work/f2.log" &
pid=$!
for _ in $(seq 2400); do
    (($(journal_size 0004) > before + 1500)) && break
    sleep 0.05
done
(($(journal_size 0004) > before + 1500)) || fail "the second fleet did not go on with 0004: $(tail -5 "$work/f2.log")"
for p in $(pgrep -f "fleet $q"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && kill -KILL "$p"
done
wait $pid
[[ $(state 0004) == running ]] || fail "0004 is $(state 0004) after the worker's kill"
fleet "$work/f3.log" || fail "the third fleet: exit $?: $(tail -5 "$work/f3.log")"
grep -q '^xqforge fleet: test 0004 (match, match) on [12] worker ranks\?: resuming it' "$work/f3.log" ||
    fail "the third fleet did not resume 0004: $(head -5 "$work/f3.log")"
grep -q '^xqforge fleet: test 0004 (match, match) on [12] worker ranks\?: resuming it' "$work/f2.log" ||
    fail "the second fleet did not resume 0004: $(head -5 "$work/f2.log")"
for t in 0002 0003 0004 0006; do
    [[ $(state "$t") == finished ]] || fail "$t is $(state "$t")"
done

# Each finished test against a solo run of its job.
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml, .pairs_done]' "$1"; }
results() { grep -o '^\[Result "[^"]*"\]' "$1" | sort | uniq -c | tr -s ' ' | tr '\n' ' '; }
solo() { # solo NAME SET...
    local name=$1
    shift
    timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$xq" run "$job" "${base[@]}" "$@" \
        --set output.dir="$work/solo-$name" >"$work/solo-$name.log" 2>&1 ||
        fail "solo $name: $(tail -3 "$work/solo-$name.log")"
}
solo 0002 --set job.rounds=5
solo 0003 --set job.rounds=4 --set sprt.elo1=20
solo 0004 --set job.rounds=20 --set job.kind=match
solo 0006 --set job.rounds=3
for t in 0002 0003 0004 0006; do
    [[ $(totals "$q/tests/$t/result.json") == "$(totals "$work/solo-$t/result.json")" ]] ||
        fail "$t: $(totals "$q/tests/$t/result.json") against solo $(totals "$work/solo-$t/result.json")"
    [[ $(results "$q/tests/$t/games.pgn") == "$(results "$work/solo-$t/games.pgn")" ]] ||
        fail "$t's PGN results differ from the solo run's"
done
# The listing and the page agree with the tests' own files.
listed=$("$xq" queue "$q" --json | jq -r '[.tests[] | "\(.id) \(.state) \(.result.games)"] | join(",")')
filed=$(for t in 0001 0002 0003 0004 0005 0006; do
    echo "$t $(state $t) $(jq .games "$q/tests/$t/result.json" 2>/dev/null || echo null)"
done | paste -sd, -)
[[ $listed == "$filed" ]] || fail "queue --json: $listed, the files: $filed"
paged=$(jq -r '[.tests[] | "\(.id) \(.state) \(.result.games)"] | sort | join(",")' "$q/index.json")
[[ $paged == "$filed" ]] || fail "index.json: $paged, the files: $filed"
echo "fleet: order $order; 0001 stopped at $(jq .games "$q/tests/0001/result.json") games;" \
    "0005 failed alone; 0004 resumed after SIGKILL of rank 0, then of a worker; 4 tests equal their solo runs"
echo "1 passed, 0 failed"
