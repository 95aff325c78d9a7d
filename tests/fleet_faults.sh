#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet under faults (issue 44, items 2 and 3):
# 1. One fleet per queue: while a fleet plays a test, a second fleet is refused (exit 2)
#    naming the first one's host and pid, and `requeue` of its running test is refused; the
#    first fleet is killed (SIGKILL, every rank: a lost allocation), its test stays running,
#    `xqforge requeue` puts it back, and a new fleet resumes it to its full total.
# 2. A test whose output directory another run holds is never failed for it: the fleet tries
#    again, backing off (2 s, 4 s ...), and plays it once the directory is free.
# 3. A state that cannot be recorded (test.json's write fails with ENOSPC, injected:
#    XQ_FAULT_RECORD_FULL) ends the fleet with exit 1 naming the cause, after one start, not
#    a restart loop; the journal is whole, and after `requeue` a fleet ends the test with the
#    same totals as a solo run of its job.
set -u
xq=$(realpath "$1") jobs=$(realpath "$2")
tests_dir=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/fleet_lib.sh"
cd "$work" || fail "no work directory"
state() { jq -r .state "$q/tests/$1/test.json"; }
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml]' "$1"; }
common=(--set job.kind=match --set job.concurrency=1 --set time.nodes=300)
# The first test's engines are xqforge's own behind a relay that holds every `go` while the
# file hold exists: the first fleet cannot end its test before the kill, whatever the load.
cc -O1 -DXQ="\"$xq\"" -DHOLD="\"$work/hold\"" -o held "$tests_dir/relay_engine.c" ||
    fail "cannot build the held engine"
held=(--set each.proto=uci --set "each.cmd=$work/held")
"$xq" submit "$q" "$jobs/sprt-weights.ini" "${common[@]}" "${held[@]}" --set job.rounds=10 \
    --name long >/dev/null || fail "submit"

# A test whose record is damaged is skipped and said once, not at every poll of the queue.
mkdir "$q/tests/0900" && echo '{' >"$q/tests/0900/test.json"
# 1. Two fleets over one queue; the first one held at its games' first move.
touch hold
timeout 600 mpirun --oversubscribe --bind-to none -np 2 "$xq" fleet "$q" --until-empty >f1.log 2>&1 &
for _ in $(seq 6000); do
    [[ -s $q/tests/0001/journal.xqj ]] && break
    sleep 0.05
done
[[ -s $q/tests/0001/journal.xqj ]] || fail "the first fleet did not start the test: $(tail -5 f1.log)"
timeout 60 "$xq" fleet "$q" --until-empty >f2.log 2>&1
rc=$?
[[ $rc == 2 ]] || fail "a second fleet: exit $rc, want 2: $(cat f2.log); the first fleet: $(tail -8 f1.log); the test: $(cat "$q/tests/0001/test.json")"
grep -q "queue $q is held by another fleet (pid [0-9]* on host $(hostname)" f2.log ||
    fail "the second fleet does not name the first: $(cat f2.log)"
[[ $(state 0001) == running ]] || fail "the second fleet changed the test: $(state 0001)"
"$xq" requeue "$q" 0001 >rq.log 2>&1 && fail "requeue of a live fleet's test succeeded"
grep -q "test 0001 is running in the fleet of pid" rq.log || fail "requeue: $(cat rq.log)"
sleep 5 # the first fleet polls the queue (every 2 s) a few times with the damaged record in it
for p in $(pgrep -f "fleet $q"); do kill -KILL "$p" 2>/dev/null; done
wait 2>/dev/null
rm hold # the killed fleet's engines see their input end, and go
[[ $(state 0001) == running ]] || fail "after the kill the test is $(state 0001)"
[[ $(grep -c "0900/test.json: not a test record.*(that test is skipped)" f1.log) == 1 ]] ||
    fail "the damaged record is not said exactly once: $(grep -c 0900 f1.log) times"
rm -r "$q/tests/0900"
"$xq" requeue "$q" 0001 >rq.log 2>&1 || fail "requeue of the abandoned test: $(cat rq.log)"
[[ $(state 0001) == queued ]] || fail "requeued, the test is $(state 0001)"
timeout 300 "$xq" fleet "$q" --until-empty >f3.log 2>&1 || fail "the third fleet: $(tail -5 f3.log)"
[[ $(state 0001) == finished && $(jq .games "$q/tests/0001/result.json") == 20 ]] ||
    fail "the resumed test: $(state 0001), $(jq .games "$q/tests/0001/result.json") games (want 20)"
echo "1: a second fleet refused naming the first; killed, requeued, resumed to 20 games"

# 2. The output directory held by another run: tried again, never failed for it.
"$xq" submit "$q" "$jobs/sprt-weights.ini" "${common[@]}" --set job.rounds=2 --name held >/dev/null || fail "submit 2"
# This shell holds the directory's lock (fd 9, never inherited by the fleet) until the fleet
# says its first start failed: a state, not a time.
exec 9>"$q/tests/0002/.xqforge.lock"
flock -n 9 || fail "cannot take the test's lock"
timeout 300 "$xq" fleet "$q" --until-empty >f4.log 2>&1 9>&- &
fleet_pid=$!
for _ in $(seq 2400); do
    grep -q "test 0002: start 1 of 6 failed" f4.log && break
    sleep 0.05
done
exec 9>&-
wait $fleet_pid || fail "the fleet with a held directory: $(tail -5 f4.log)"
grep -q "test 0002: start 1 of 6 failed: .*is in use by another xqforge run.*; tried again in 2 s" f4.log ||
    fail "no retry said: $(cat f4.log)"
[[ $(state 0002) == finished ]] || fail "the held test: $(state 0002), $(jq -r .reason "$q/tests/0002/test.json")"
echo "2: a held output directory: tried again after 2 s, then played ($(grep -c 'start [0-9] of 6 failed' f4.log) failed starts)"

# 3. test.json cannot be written after the first write (the start): exit 1, one start.
"$xq" submit "$q" "$jobs/sprt-weights.ini" "${common[@]}" --set job.rounds=3 --name full >/dev/null || fail "submit 3"
XQ_FAULT_RECORD_FULL=1 timeout 120 "$xq" fleet "$q" --until-empty >f5.log 2>&1
rc=$?
[[ $rc == 1 ]] || fail "the full disk: exit $rc, want 1: $(tail -5 f5.log)"
grep -q "xqforge fleet: cannot record test 0003: cannot write $q/tests/0003/test.json: No space left on device: the fleet stops" f5.log ||
    fail "the cause is not named: $(cat f5.log)"
[[ $(grep -c "^xqforge fleet: test 0003 (" f5.log) == 1 ]] || fail "the test was started again: $(grep -c 'test 0003 (' f5.log) starts"
[[ $(jq .games "$q/tests/0003/result.json") == 6 ]] || fail "the journal's games: $(jq .games "$q/tests/0003/result.json")"
"$xq" requeue "$q" 0003 >/dev/null || fail "requeue 0003"
timeout 120 "$xq" fleet "$q" --until-empty >f6.log 2>&1 || fail "after the space is freed: $(tail -5 f6.log)"
[[ $(state 0003) == finished ]] || fail "0003 is $(state 0003)"
"$xq" run "$jobs/sprt-weights.ini" "${common[@]}" --set job.rounds=3 --set output.dir="$work/solo" >solo.log 2>&1 || fail "solo"
[[ $(totals "$q/tests/0003/result.json") == "$(totals "$work/solo/result.json")" ]] ||
    fail "0003 $(totals "$q/tests/0003/result.json") against the solo run $(totals "$work/solo/result.json")"
echo "3: a record that cannot be written ends the fleet (exit 1, one start); requeued, the totals equal a solo run's"
echo "1 passed, 0 failed"
