#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nothing lost, nothing counted twice: in a job run under MPI (3 ranks) a worker rank is killed
# with SIGKILL part-way (Open MPI then ends the job), the job is run again (which resumes it), and must end with exactly the totals of an uninterrupted
# run of the same job (node-limited games are deterministic; pair ids fix openings and
# colours). Also: a plain rerun over a journal stops and names --resume and --fresh; a
# changed engine is refused by --resume, naming it; a harmless change (concurrency) is
# accepted; a net (EvalFile) retrained to the same path is refused, naming EvalFile;
# --resume needs a journal; --fresh moves the old outputs aside; and a job that
# cannot write its output stops everywhere with a clear error.
set -u
xq=$1 job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
sets=(--set job.kind=match --set job.rounds=24 --set job.concurrency=1)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "uninterrupted run failed: $(tail -5 "$work/a.log")"
want=$(grep -E '^(Games|Ptnml)' "$work/a.log")
[[ -n $want ]] || fail "no summary in the uninterrupted run"

# Once some results are journaled...
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" >"$work/b1.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    [[ -s $work/b/journal.xqj ]] && [[ $(stat -c %s "$work/b/journal.xqj") -gt 2000 ]] && break
    sleep 0.05
done
# Kill one worker rank (rank 1): Open MPI then ends the whole job, as on a real cluster.
killed=""
for p in $(pgrep -f "output.dir=$work/b"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
        kill -KILL "$p" && killed=$p
    fi
done
[[ -n $killed ]] || { kill -KILL $pid; pkill -KILL -f "output.dir=$work/b"; }
wait $pid 2>/dev/null
pkill -KILL -f "output.dir=$work/b" 2>/dev/null
[[ -n $killed ]] || fail "could not find worker rank 1 to kill"

# Another experiment (the engine "new" changed) must not touch this journal.
"$xq" run "$job" "${sets[@]}" --set engine.new.option.horse_mg=310 --set output.dir="$work/b" \
    --resume >"$work/b2.log" 2>&1 && fail "a changed engine accepted the journal"
grep -q "another experiment.*'new'" "$work/b2.log" ||
    fail "no refusal naming the changed engine: $(tail -3 "$work/b2.log")"
# A plain rerun does not resume silently: it says to use --resume or --fresh.
"$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" >"$work/b5.log" 2>&1 &&
    fail "a plain rerun over a journal went on"
grep -q -- "--resume.*--fresh" "$work/b5.log" || fail "no hint at --resume/--fresh: $(tail -3 "$work/b5.log")"
"$xq" run "$job" "${sets[@]}" --set output.dir="$work/none" --resume >"$work/b4.log" 2>&1 &&
    fail "--resume without a journal succeeded"

# --resume continues it, with another concurrency (not part of the experiment).
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set job.concurrency=2 --set output.dir="$work/b" \
    --resume >"$work/b3.log" 2>&1 ||
    fail "resumed run failed: $(tail -5 "$work/b3.log")"
grep -q "Resuming" "$work/b3.log" || fail "the resumed run did not replay the journal"
got=$(grep -E '^(Games|Ptnml)' "$work/b3.log")
[[ $got == "$want" ]] || fail "resumed totals differ: want '$want' got '$got'"
# The PGN holds exactly the journal's games, none torn or doubled: as many as the totals.
games=$(grep -c '^\[Result ' "$work/b/games.pgn")
[[ $games == 48 ]] || fail "the resumed PGN holds $games games, 48 expected"
# A resumed run may raise rounds: the same experiment, two more pairs.
"$xq" run "$job" "${sets[@]}" --set job.rounds=26 --set output.dir="$work/b" --resume \
    >"$work/b7.log" 2>&1 || fail "raising rounds on resume failed: $(tail -3 "$work/b7.log")"
grep -q "^Games: 52," "$work/b7.log" || fail "raising rounds: not 52 games: $(grep ^Games "$work/b7.log")"
id1=$(sed -n 's/^Resuming run \([0-9a-f]*\):.*/\1/p' "$work/b3.log")
id2=$(jq -r .run_id "$work/b/result.json")
[[ -n $id1 && $id1 == "$id2" ]] || fail "a resumed run changed its run_id ($id1, $id2)"
[[ $(grep -c '^\[Result ' "$work/b/games.pgn") == 52 ]] || fail "raising rounds: the PGN is not 52 games"
# --fresh moves the old outputs aside and starts again.
"$xq" run "$job" --set job.kind=match --set job.rounds=2 --set job.concurrency=2 \
    --set output.dir="$work/b" --fresh >"$work/b6.log" 2>&1 || fail "--fresh failed: $(tail -3 "$work/b6.log")"
ls -d "$work"/b/previous-* >/dev/null 2>&1 || fail "--fresh did not keep the old outputs"
grep -q "Games: 4," "$work/b6.log" || fail "--fresh did not start afresh"
[[ $(jq -r .run_id "$work/b/result.json") != "$id2" ]] || fail "--fresh kept the old run_id"
# A net counts by its bytes: retrained to the same path, --resume refuses it naming EvalFile.
cp "$(dirname "$0")/../search/nets/default.nnue" "$work/net.nnue"
netset=(--set job.rounds=1 --set engine.new.option.EvalFile="$work/net.nnue" --set output.dir="$work/n")
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${netset[@]}" >"$work/n1.log" 2>&1 ||
    fail "a run with EvalFile failed: $(tail -3 "$work/n1.log")"
# Another valid net (a damaged one is refused before the journal is read: job/job_check.h).
"$xq" nnue net --random 32 -o "$work/net.nnue" --seed 2 >/dev/null
"$xq" run "$job" "${sets[@]}" "${netset[@]}" --resume >"$work/n2.log" 2>&1 &&
    fail "a retrained net at the same path was accepted on --resume"
grep -q "another experiment: engine 'new': option EvalFile changed" "$work/n2.log" ||
    fail "no refusal naming EvalFile: $(tail -3 "$work/n2.log")"
# A job whose output cannot be written stops on every rank with a message, never hangs.
if timeout 60 "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir=/proc/xqforge-no >"$work/c.log" 2>&1; then
    fail "a run with an unwritable output directory succeeded"
fi
grep -q "cannot create /proc/xqforge-no" "$work/c.log" || fail "no clear error: $(tail -3 "$work/c.log")"

echo "resume after SIGKILL: $(grep Resuming "$work/b3.log")"
echo "1 passed, 0 failed"
