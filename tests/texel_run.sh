#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Texel end to end with real games: a match writes a PGN, `texel extract` keeps its quiet
# positions (and a cluster match with [output] positions writes the same file itself), a kind = texel job fits on 2 MPI ranks (each a shard, gradients summed), and
# (1) lowers the loss, (2) killed part-way and run again, resumes from its checkpoint and
# ends with exactly the weights of an uninterrupted run; killed three times (kill -9) and
# resumed, it writes the very weights file and loss CSV of an uninterrupted fit, on 2 ranks and
# with `texel fit` on one machine, and a fit on too little data warns, (3) damaged datasets
# are refused
# with the reason, (4) a checkpoint is never resumed for another dataset or other settings
# (exit 2, the difference named, nothing written).
set -u
xq=$(realpath "$1") job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 2)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

"$xq" play -engine name=a -engine name=b option.horse_mg=230 -each nodes=400 option.UseNNUE=false -rounds 30 -repeat \
    -openings order=random -maxplies 250 -resign movecount=3 score=600 \
    -pgnout file="$work/g.pgn" >"$work/play.log" 2>&1 || fail "play: $(tail -3 "$work/play.log")"
"$xq" texel extract -o "$work/texel.xqd" "$work/g.pgn" >"$work/x.log" 2>&1 ||
    fail "extract: $(cat "$work/x.log")"
grep -q "60 games" "$work/x.log" || fail "extract did not read the 60 games: $(cat "$work/x.log")"
"$xq" texel info "$work/texel.xqd" | grep -q "positions" || fail "info"

# The cluster writes the same dataset itself: [output] positions on a 3-rank match equals
# extracting its PGN.
mpirun --oversubscribe --bind-to none -np 3 "$xq" run "$(dirname "$job")/../../jobs/sprt-weights.ini" \
    --set job.kind=match --set job.rounds=8 --set output.dir="$work/m" \
    --set output.positions=pos.xqd >"$work/m.log" 2>&1 || fail "match with positions: $(tail -3 "$work/m.log")"
grep -q "^Positions: " "$work/m.log" || fail "no positions line: $(tail -3 "$work/m.log")"
"$xq" texel extract -o "$work/m/pgn.xqd" "$work/m/games.pgn" >/dev/null 2>&1
cmp -s "$work/m/pos.xqd" "$work/m/pgn.xqd" || fail "the run's positions differ from its PGN's"

sets=(--set texel.data="$work/texel.xqd" --set texel.checkpoint_every=3)
# 400 epochs for the first kill: the 40 of the test job can all pass between two polls.
ab=(--set texel.epochs=400)
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${ab[@]}" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "fit failed: $(tail -5 "$work/a.log")"
line=$(grep -E '^K [0-9.]+, loss' "$work/a.log") || fail "no summary: $(tail -5 "$work/a.log")"
read -r start end <<<"$(sed -E 's/.*loss ([0-9.]+) -> ([0-9.]+).*/\1 \2/' <<<"$line")"
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e < s) }' || fail "loss did not fall: $line"
# The held-out games: their loss beside the training loss, and the epoch whose weights are
# written named (a fit that only overfits keeps the start weights, and says so).
grep -qE '^Best validation at epoch [0-9]+ of 400' "$work/a.log" || fail "no best epoch: $(tail -8 "$work/a.log")"
grep -qE '^Validation loss [0-9.]+ -> [0-9.]+; written: epoch [0-9]+ of 400' "$work/a.log" ||
    fail "no validation summary: $(tail -8 "$work/a.log")"
[[ $(head -1 "$work/a/texel-loss.csv") == epoch,loss,val ]] || fail "loss CSV header: $(head -1 "$work/a/texel-loss.csv")"
# One default val: `texel fit`'s (TEXEL_VAL_DEFAULT, in its usage) is [texel] val's.
jv=$(sed -n 's/^KEY(texel, val, KEY_DBL, texel.val, 0, 0.5, \([0-9.]*\),.*/\1/p' "$(dirname "$0")/../job/job_keys.def")
cv=$("$xq" texel 2>&1 | sed -n 's/.*--val (default \([0-9.]*\)).*/\1/p')
[[ -n $jv && $jv == "$cv" ]] || fail "default val: [texel] $jv, texel fit $cv"

# Kill rank 0 once a few epochs are checkpointed, then run again.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${ab[@]}" --set output.dir="$work/b" >"$work/b1.log" 2>&1 &
pid=$!
for _ in $(seq 3000); do
    [[ -f $work/b/texel-loss.csv ]] && (($(wc -l <"$work/b/texel-loss.csv") > 8)) && break
    sleep 0.02
done
pkill -KILL -f "output.dir=$work/b"
wait $pid 2>/dev/null
grep -q "^Tuned weights" "$work/b1.log" && fail "the fit ended before the kill"
[[ -f $work/b/texel.ckpt ]] || fail "no checkpoint after the kill"
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${ab[@]}" --set output.dir="$work/b" --resume >"$work/b2.log" 2>&1 ||
    fail "resumed fit failed: $(tail -5 "$work/b2.log")"
grep -q "Resuming at epoch" "$work/b2.log" || fail "did not resume: $(head -5 "$work/b2.log")"
cmp -s "$work/a/texel-weights.txt" "$work/b/texel-weights.txt" ||
    fail "resumed weights differ from the uninterrupted run's"

# Killed three times (kill -9, at different epochs) and resumed each time: the weights file
# and the loss CSV are byte for byte those of an uninterrupted fit, on 2 MPI ranks
# (kind = texel) and on one machine (texel fit). Long fits with checkpoints every 7 epochs,
# so every kill lands between checkpoints and the rows after the last one must be cut.
# $1: label, $2: dir (whose texel-loss.csv is watched), the rest: the fit's command.
kill3() {
    local label=$1 dir=$2
    shift 2
    for i in 1 2 3; do
        "$@" >"$dir.k$i.log" 2>&1 &
        local pid=$!
        local want=$((250 * i + 40 * RANDOM / 32768))
        for _ in $(seq 6000); do
            [[ -f $dir/texel-loss.csv ]] && (($(wc -l <"$dir/texel-loss.csv") > want)) && break
            kill -0 $pid 2>/dev/null || break
            sleep 0.01
        done
        if [[ $label == mpi ]]; then pkill -KILL -f "output.dir=$dir( |$)"; else kill -KILL $pid; fi
        { wait $pid; } 2>/dev/null
        grep -q "^Tuned weights" "$dir.k$i.log" && fail "$label: the fit ended before kill $i"
        ((i == 1)) || grep -q "Resuming at epoch" "$dir.k$i.log" ||
            fail "$label: run $i did not resume: $(head -3 "$dir.k$i.log")"
        kills="$kills $label:$(wc -l <"$dir/texel-loss.csv")rows/ckpt@$(grep -o 'Resuming at epoch [0-9]*' "$dir.k$i.log" | grep -o '[0-9]*$')"
    done
    "$@" >"$dir.end.log" 2>&1 || fail "$label: the last resume failed: $(tail -3 "$dir.end.log")"
    grep -q "Resuming at epoch" "$dir.end.log" || fail "$label: the last run did not resume"
}
kills=""
long=(--set texel.epochs=1500 --set texel.checkpoint_every=7)
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${long[@]}" --set output.dir="$work/c0" >"$work/c0.log" 2>&1 ||
    fail "long fit failed: $(tail -5 "$work/c0.log")"
kill3 mpi "$work/c" "${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${long[@]}" --set output.dir="$work/c" --resume=auto
for f in texel-weights.txt texel-loss.csv; do
    cmp "$work/c0/$f" "$work/c/$f" >&2 || fail "mpi: $f after three kills differs from the uninterrupted fit's"
done
fit=("$xq" texel fit --data "$work/texel.xqd" --params eval --epochs 1500 --lr 3 --threads 1
    --checkpoint-every 7)
(mkdir -p "$work/d0" && cd "$work/d0" && "${fit[@]}" >../d0.log 2>&1) || fail "texel fit: $(tail -3 "$work/d0.log")"
grep -q "warning: [0-9]* positions for [0-9]* tuned weights" "$work/d0.log" ||
    fail "a fit on too little data did not warn: $(grep -i warn "$work/d0.log")"
grep -q "per weight, below the" "$work/d0/report.json" || fail "the report lacks the data warning"
mkdir -p "$work/d"
cd "$work/d" || fail "cd"
kill3 fit "$work/d" "${fit[@]}"
cd - >/dev/null || fail "cd"
for f in texel-weights.txt texel-loss.csv texel-weights.txt.diff; do
    cmp "$work/d0/$f" "$work/d/$f" >&2 || fail "texel fit: $f after three kills differs from the uninterrupted fit's"
done
# SIGTERM (a drain) checkpoints the epoch it stopped at and exits 130; the rerun finishes the
# same files.
mkdir -p "$work/e"
cd "$work/e" || fail "cd"
"${fit[@]}" >../e1.log 2>&1 &
pid=$!
for _ in $(seq 6000); do
    [[ -f texel-loss.csv ]] && (($(wc -l <texel-loss.csv) > 300)) && break
    sleep 0.01
done
kill -TERM $pid
wait $pid
rc=$?
[[ $rc == 130 ]] && grep -q "^Drained: stopped after epoch" ../e1.log || fail "SIGTERM: exit $rc: $(tail -2 ../e1.log)"
"${fit[@]}" >../e2.log 2>&1 || fail "after the drain: $(tail -3 ../e2.log)"
cd - >/dev/null || fail "cd"
for f in texel-weights.txt texel-loss.csv; do
    cmp "$work/d0/$f" "$work/e/$f" >&2 || fail "texel fit: $f after a drain differs from the uninterrupted fit's"
done
rows=$(($(wc -l <"$work/d/texel-loss.csv") - 1))
[[ $rows == 1501 && $(cut -d, -f1 "$work/d/texel-loss.csv" | uniq -d) == "" ]] ||
    fail "the loss CSV has $rows rows (or repeats an epoch): expected epochs 0..1500 once each"
# A fresh fit rewrites the loss CSV: no second curve appended.
(cd "$work/d" && "${fit[@]}" --epochs 20 --fresh >../d2.log 2>&1) || fail "fresh fit: $(tail -3 "$work/d2.log")"
[[ $(wc -l <"$work/d/texel-loss.csv") == 22 ]] || fail "a fresh fit appended to the loss CSV"

# A checkpoint made from another dataset, or for other settings, is refused by --resume (it
# resumed and wrote the old weights after 0 epochs), naming the difference; nothing changes.
"$xq" texel extract --skip 12 -o "$work/other.xqd" "$work/g.pgn" >/dev/null 2>&1 || fail "extract other"
sum_before=$(cat "$work/b/texel.ckpt" "$work/b/texel-weights.txt" "$work/b/texel-loss.csv" | cksum)
"${mpi[@]}" "$xq" run "$job" --set texel.data="$work/other.xqd" --set output.dir="$work/b" --resume \
    >"$work/s1.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] || fail "a changed dataset: exit $rc, expected 2: $(tail -3 "$work/s1.log")"
grep -q "texel.ckpt was made from another dataset (hash [0-9a-f]*, now [0-9a-f]*): start afresh with --fresh" \
    "$work/s1.log" || fail "a changed dataset not named: $(tail -3 "$work/s1.log")"
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set texel.epochs=50 --set output.dir="$work/b" --resume \
    >"$work/s2.log" 2>&1 && fail "changed epochs resumed: $(tail -3 "$work/s2.log")"
grep -q "was made for 400 epochs, now 50" "$work/s2.log" || fail "epochs not named: $(tail -3 "$work/s2.log")"
[[ $(cat "$work/b/texel.ckpt" "$work/b/texel-weights.txt" "$work/b/texel-loss.csv" | cksum) == "$sum_before" ]] ||
    fail "a refused checkpoint changed the outputs"
# As the refusal says: --fresh moves the old fit aside (all of it) and fits the new dataset.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set texel.data="$work/other.xqd" --set output.dir="$work/b" \
    --fresh >"$work/s3.log" 2>&1 || fail "--fresh after a changed dataset: $(tail -3 "$work/s3.log")"
grep -q "Resuming" "$work/s3.log" && fail "--fresh resumed the old checkpoint"
[[ $(cat "$work"/b/previous-*/texel.ckpt "$work"/b/previous-*/texel-weights.txt \
    "$work"/b/previous-*/texel-loss.csv | cksum) == "$sum_before" ]] || fail "--fresh did not keep the old fit"

# Search rows (search_params.def) are SPSA's: Texel refuses them by name or as "search", and
# "all" fits the evaluation's weights only.
"$xq" texel fit --data "$work/texel.xqd" --params "horse_mg search_rfp_depth" >"$work/p.log" 2>&1
[[ $? == 2 ]] && grep -q "'search_rfp_depth' is a search row" "$work/p.log" || fail "texel fit tuned a search row: $(cat "$work/p.log")"
"$xq" run "$job" "${sets[@]}" --set texel.params=search --set output.dir="$work/p" >"$work/p.log" 2>&1
[[ $? == 2 ]] && grep -q "'search' is a search row" "$work/p.log" || fail "a texel job tuned the search rows: $(cat "$work/p.log")"
(mkdir -p "$work/p" && cd "$work/p" && "$xq" texel fit --data "$work/texel.xqd" --params all --epochs 30 --lr 50 >../p.log 2>&1) ||
    fail "params all: $(tail -3 "$work/p.log")"
evals=$(grep -cv "^#\|^search_\|^tm_\|^$" "$work/p/texel-weights.txt")
grep -q "positions for $evals tuned weights" "$work/p.log" ||
    fail "params = all did not tune exactly the $evals evaluation weights: $(grep -o 'for [0-9]* tuned' "$work/p.log")"

# Damage: truncated, and not a dataset at all.
head -c 1000 "$work/texel.xqd" >"$work/cut.xqd"
"$xq" texel info "$work/cut.xqd" >"$work/c.log" 2>&1 && fail "truncated dataset accepted"
grep -q "positions need" "$work/c.log" || fail "no clear error: $(cat "$work/c.log")"
"$xq" texel fit --data "$work/g.pgn" >"$work/d.log" 2>&1 && fail "a PGN accepted as a dataset"
grep -q "bad magic" "$work/d.log" || fail "no clear error: $(cat "$work/d.log")"

echo "$(cat "$work/x.log" | head -1); $line; $(grep 'Resuming' "$work/b2.log"); kills (rows in the CSV at the kill / epoch resumed):$kills"
echo "1 passed, 0 failed"
