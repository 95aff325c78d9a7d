#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# xqforge nnue train killed with SIGKILL three times at random moments and resumed ends with
# the very net file and loss CSV (bytes) of an uninterrupted run; SIGTERM stops it after a
# checkpoint (exit 130) and it resumes too; other settings are refused naming the difference
# (exit 2); a damaged positions file is refused (exit 2); the net kept is the best-validation
# epoch's (said on the console); `nnue train` and [train] share one default lambda.
# With MPIEXEC also a kind = train job on 2 ranks, one rank killed with SIGKILL three times,
# `xqforge run --resume` to the end: the net and CSV bytes of an uninterrupted job.
# Usage: nnue_train_run.sh XQFORGE TEST_NNUE_TRAIN [MPIEXEC] (the test program writes the
# positions file)
set -u
X=$1
GEN=$2
W=$(mktemp -d /tmp/nnue_train_run.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

# One default lambda: `nnue train`'s (NNUE_TRAIN_LAMBDA, in its usage) is [train] lambda's.
SRC=$(cd "$(dirname "$0")/.." && pwd)
jl=$(sed -n 's/^KEY(train, lambda, KEY_DBL, train.lambda, 0, 1, \([0-9.]*\),.*/\1/p' "$SRC/job/job_keys.def")
cl=$("$X" nnue train --help 2>&1 | sed -n 's/.*lambda \([0-9.]*\),.*/\1/p')
[ -n "$jl" ] && [ "$jl" = "$cl" ] || fail "default lambda: [train] $jl, nnue train $cl"

"$GEN" --write 20000 "$W/d.xqp" || fail "cannot write the positions"
ARGS=(--data "$W/d.xqp" --hidden 32 --epochs 60 --batch 1024 --threads 2 --checkpoint-steps 3)

"$X" nnue train "${ARGS[@]}" --out "$W/a" >"$W/a.log" 2>&1 || fail "uninterrupted run: $(tail -3 "$W/a.log")"
[ -s "$W/a/net.nnue" ] || fail "no net written"
grep -q "^Best validation at epoch [0-9]* of 60" "$W/a.log" || fail "no best epoch said: $(tail -5 "$W/a.log")"

# A checkpoint newer than the mark is the new run's (its log is no mark: the run may not
# have opened it yet when the first check comes, and a missing file is "older").
for k in 1 2 3; do
    touch "$W/mark"
    "$X" nnue train "${ARGS[@]}" --out "$W/b" >"$W/b$k.log" 2>&1 &
    pid=$!
    end=$((SECONDS + 300)) # this run's first checkpoint (every 3 steps), then a moment more,
    until [ "$W/b/train.ckpt" -nt "$W/mark" ] || [ $SECONDS -ge $end ]; do # so a fast
        sleep 0.02 # machine cannot finish first; by time, as polls are slow under load
    done
    sleep "0.0$((RANDOM % 5))"
    kill -9 "$pid" 2>/dev/null || fail "run $k ended before its kill (make the run longer)"
    wait "$pid" 2>/dev/null
    [ ! -e "$W/b/net.nnue" ] || fail "run $k finished before its kill"
done
grep -q "Resuming at epoch" "$W/b2.log" "$W/b3.log" || fail "no kill left a checkpoint to resume"

# SIGTERM: a checkpoint, exit 130.
touch "$W/mark"
"$X" nnue train "${ARGS[@]}" --out "$W/b" >"$W/bt.log" 2>&1 &
pid=$!
# Its first checkpoint: the handler is in place (a signal before it ends the run with 143).
# Waited for by time, not by a count of polls: a loaded machine once took longer than 500.
end=$((SECONDS + 300))
until [ "$W/b/train.ckpt" -nt "$W/mark" ]; do
    kill -0 "$pid" 2>/dev/null || break # finished: the check below says so
    [ $SECONDS -lt $end ] || fail "SIGTERM: no checkpoint in 300 s: $(tail -3 "$W/bt.log")"
    sleep 0.02
done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" = 130 ] || [ -e "$W/b/net.nnue" ] || fail "SIGTERM: exit $rc, not 130"

"$X" nnue train "${ARGS[@]}" --out "$W/b" >"$W/bf.log" 2>&1 || fail "resumed run: $(tail -3 "$W/bf.log")"
cmp "$W/a/net.nnue" "$W/b/net.nnue" || fail "the resumed net differs from the uninterrupted one"
cmp "$W/a/train-loss.csv" "$W/b/train-loss.csv" ||
    fail "the resumed loss CSV differs: $(diff "$W/a/train-loss.csv" "$W/b/train-loss.csv" | head -5)"

# Other settings: refused, the difference named.
out=$("$X" nnue train "${ARGS[@]}" --lambda 0.6 --out "$W/b" 2>&1)
[ $? = 2 ] && grep -q "lambda 0.75" <<<"$out" || fail "a checkpoint of other settings was not refused: $out"
# A damaged positions file: exit 2 with posdata's reason.
cp "$W/d.xqp" "$W/bad.xqp"
printf '\x55' | dd of="$W/bad.xqp" bs=1 seek=5000 conv=notrunc 2>/dev/null
out=$("$X" nnue train --data "$W/bad.xqp" --out "$W/c" 2>&1)
[ $? = 2 ] && grep -qi "bad.xqp" <<<"$out" || fail "a damaged file was not refused: $out"

if [ $# -ge 3 ]; then
    MPI=("$3" --oversubscribe --bind-to none -np 2)
    printf '%s\n' "[job]" "kind = train" "name = mpi-train" "[train]" "data = $W/d.xqp" \
        "hidden = 64" "epochs = 80" "batch = 1024" "threads = 1" "lambda = 0.5" "[output]" \
        "dir = $W/ma" >"$W/t.ini"
    "${MPI[@]}" "$X" run "$W/t.ini" >"$W/ma.log" 2>&1 || fail "MPI job: $(tail -5 "$W/ma.log")"
    # Each run holds still after its third checkpoint (XQ_TEST_PAUSE_CKPTS, marked by
    # train.ckpt.paused) and is killed there: at a state the run reached, never after a guessed
    # time, so a quiet machine's fast run cannot end before its kill.
    for k in 1 2 3; do
        resume=()
        [ "$k" = 1 ] || resume=(--resume)
        rm -f "$W/mb/train.ckpt.paused"
        XQ_TEST_PAUSE_CKPTS=3 "${MPI[@]}" -x XQ_TEST_PAUSE_CKPTS "$X" run "$W/t.ini" \
            --set output.dir="$W/mb" "${resume[@]}" >"$W/mb$k.log" 2>&1 &
        mp=$!
        for _ in $(seq 1200); do
            [ -e "$W/mb/train.ckpt.paused" ] && break
            sleep 0.1
        done
        [ -e "$W/mb/train.ckpt.paused" ] || fail "MPI run $k never reached its third checkpoint"
        ranks=($(pgrep -P "$mp"))
        [ ${#ranks[@]} -ge 1 ] || fail "MPI run $k: no rank to kill (ended early?)"
        kill -9 "${ranks[$((k % ${#ranks[@]}))]}" # one rank, a different one by turns
        wait "$mp" 2>/dev/null
        [ ! -e "$W/mb/net.nnue" ] || fail "MPI run $k finished before its kill"
    done
    rm -f "$W/mb/train.ckpt.paused"
    "${MPI[@]}" "$X" run "$W/t.ini" --set output.dir="$W/mb" --resume >"$W/mbf.log" 2>&1 ||
        fail "resumed MPI job: $(tail -5 "$W/mbf.log")"
    grep -q "Resuming at epoch" "$W/mbf.log" || fail "the MPI job did not resume"
    cmp "$W/ma/net.nnue" "$W/mb/net.nnue" || fail "the resumed MPI net differs"
    cmp "$W/ma/train-loss.csv" "$W/mb/train-loss.csv" || fail "the resumed MPI loss CSV differs"
    # [train] features = xq2: the job trains and exports a king-bucketed (version 2) net.
    "${MPI[@]}" "$X" run "$W/t.ini" --set output.dir="$W/mx" --set train.features=xq2 \
        --set train.epochs=2 >"$W/mx.log" 2>&1 || fail "xq2 MPI job: $(tail -5 "$W/mx.log")"
    "$X" nnue net "$W/mx/net.nnue" | grep -q "version 2 (XQ2), 7560 features" ||
        fail "features = xq2 did not export an XQ2 net: $("$X" nnue net "$W/mx/net.nnue" | head -3)"
    echo "PASS: 2 ranks, one rank killed 3 times, resumed to the same net and loss CSV"
fi
echo "PASS: killed 3 times and stopped once, the resumed run wrote the same net and loss CSV"
