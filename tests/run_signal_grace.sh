#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGTERM to Open MPI's mpirun with a long drain grace ([job] drain_grace = 30): mpirun sends
# the ranks SIGTERM and SIGKILLs them about a second later, whatever the grace. The ranks see
# that the SIGTERM comes from the launcher and end the grace at once, so rank 0 writes
# result.json (interrupted) and the report before the SIGKILL; the console does not promise a
# grace it cannot have. Then the same run resumed ends with every pair played. And a worker
# killed with SIGKILL (mpirun then ends the job the same way): result.json says interrupted.
# Usage: run_signal_grace.sh XQFORGE JOB
set -u
xq=$1 job=$2
work=$(mktemp -d)
pid=
cleanup() {
    [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
sets=(--set job.kind=match --set job.rounds=30 --set job.concurrency=1 --set job.drain_grace=30
    --set output.dir="$work/out")
fail() {
    echo "FAIL: $*"
    echo "0 passed, 1 failed"
    exit 1
}
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" >"$work/run.out" 2>"$work/run.err" &
pid=$!
for _ in $(seq 2400); do
    [[ -s $work/out/journal.xqj && $(stat -c %s "$work/out/journal.xqj") -gt 2000 ]] && break
    sleep 0.05
done
[[ -s $work/out/journal.xqj ]] || fail "nothing journaled: $(tail -3 "$work/run.err")"
start=$(date +%s%N)
kill -TERM "$pid"
wait "$pid"
rc=$? pid=
ms=$((($(date +%s%N) - start) / 1000000))
grep -q '"interrupted": true' "$work/out/result.json" 2>/dev/null ||
    fail "SIGTERM to mpirun (exit $rc after $ms ms): no result.json saying interrupted: $(tail -4 "$work/run.out")"
grep -q '^Drained: ' "$work/run.out" || fail "no account of the drain"
grep -q 'may finish within' "$work/run.out" && fail "the console promised a grace mpirun does not give"
grep -q 'Interrupted by the launcher' "$work/run.out" || fail "no word that the launcher ends the run"
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --resume >"$work/resume.out" 2>&1 ||
    fail "the resumed run failed: $(tail -3 "$work/resume.out")"
[[ $(jq .pairs_done "$work/out/result.json") == 30 ]] || fail "the resumed run did not play every pair"
echo "SIGTERM to mpirun with drain_grace = 30: exit $rc after $ms ms, $(grep -h '^Drained: ' "$work/run.out"); resumed to the end"

# A worker killed with SIGKILL: mpirun ends the job (SIGTERM to the others, SIGKILL after).
# Rank 0 does not wait for the dead rank's BYE past the launcher's kill: result.json says
# interrupted.
sets=(--set job.kind=match --set job.rounds=30 --set job.concurrency=1 --set job.drain_grace=30
    --set output.dir="$work/kill")
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" >"$work/kill.out" 2>"$work/kill.err" &
pid=$!
for _ in $(seq 2400); do
    [[ -s $work/kill/journal.xqj && $(stat -c %s "$work/kill/journal.xqj") -gt 2000 ]] && break
    sleep 0.05
done
worker=
for p in $(pgrep -f "output.dir=$work/kill\$"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && worker=$p
done
[[ -n $worker ]] || fail "no worker rank 1 found"
kill -KILL "$worker"
wait "$pid"
rc=$? pid=
grep -q '"interrupted": true' "$work/kill/result.json" 2>/dev/null ||
    fail "a worker killed: no result.json saying interrupted (mpirun exit $rc): $(tail -4 "$work/kill.out")"
grep -q 'did not say BYE before the launcher' "$work/kill.out" || fail "no word of the dead rank"
echo "a worker killed: mpirun exit $rc, $(grep -h '^Drained: ' "$work/kill.out")"
echo "1 passed, 0 failed"
