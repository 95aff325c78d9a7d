#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Texel end to end with real games: a match writes a PGN, `texel extract` keeps its quiet
# positions (and a cluster match with [output] positions writes the same file itself), a kind = texel job fits on 2 MPI ranks (each a shard, gradients summed), and
# (1) lowers the loss, (2) killed part-way and run again, resumes from its checkpoint and
# ends with exactly the weights of an uninterrupted run, (3) damaged datasets are refused
# with the reason, (4) a checkpoint is never resumed for another dataset or other settings
# (exit 2, the difference named, nothing written).
set -u
xq=$1 job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 2)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

"$xq" play -engine name=a -engine name=b option.horse_mg=230 -each nodes=400 -rounds 30 -repeat \
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

sets=(--set texel.data="$work/texel.xqd")
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "fit failed: $(tail -5 "$work/a.log")"
line=$(grep -E '^K [0-9.]+, loss' "$work/a.log") || fail "no summary: $(tail -5 "$work/a.log")"
read -r start end <<<"$(sed -E 's/.*loss ([0-9.]+) -> ([0-9.]+).*/\1 \2/' <<<"$line")"
awk -v s="$start" -v e="$end" 'BEGIN { exit !(e < s) }' || fail "loss did not fall: $line"

# Kill rank 0 once a few epochs are checkpointed, then run again.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" >"$work/b1.log" 2>&1 &
pid=$!
for _ in $(seq 3000); do
    [[ -f $work/b/texel-loss.csv ]] && (($(wc -l <"$work/b/texel-loss.csv") > 8)) && break
    sleep 0.02
done
pkill -KILL -f "output.dir=$work/b"
wait $pid 2>/dev/null
grep -q "^Tuned weights" "$work/b1.log" && fail "the fit ended before the kill"
[[ -f $work/b/texel.ckpt ]] || fail "no checkpoint after the kill"
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/b" --resume >"$work/b2.log" 2>&1 ||
    fail "resumed fit failed: $(tail -5 "$work/b2.log")"
grep -q "Resuming at epoch" "$work/b2.log" || fail "did not resume: $(head -5 "$work/b2.log")"
cmp -s "$work/a/texel-weights.txt" "$work/b/texel-weights.txt" ||
    fail "resumed weights differ from the uninterrupted run's"

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
grep -q "was made for 40 epochs, now 50" "$work/s2.log" || fail "epochs not named: $(tail -3 "$work/s2.log")"
[[ $(cat "$work/b/texel.ckpt" "$work/b/texel-weights.txt" "$work/b/texel-loss.csv" | cksum) == "$sum_before" ]] ||
    fail "a refused checkpoint changed the outputs"
# As the refusal says: --fresh moves the old fit aside (all of it) and fits the new dataset.
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set texel.data="$work/other.xqd" --set output.dir="$work/b" \
    --fresh >"$work/s3.log" 2>&1 || fail "--fresh after a changed dataset: $(tail -3 "$work/s3.log")"
grep -q "Resuming" "$work/s3.log" && fail "--fresh resumed the old checkpoint"
[[ $(cat "$work"/b/previous-*/texel.ckpt "$work"/b/previous-*/texel-weights.txt \
    "$work"/b/previous-*/texel-loss.csv | cksum) == "$sum_before" ]] || fail "--fresh did not keep the old fit"

# Damage: truncated, and not a dataset at all.
head -c 1000 "$work/texel.xqd" >"$work/cut.xqd"
"$xq" texel info "$work/cut.xqd" >"$work/c.log" 2>&1 && fail "truncated dataset accepted"
grep -q "positions need" "$work/c.log" || fail "no clear error: $(cat "$work/c.log")"
"$xq" texel fit --data "$work/g.pgn" >"$work/d.log" 2>&1 && fail "a PGN accepted as a dataset"
grep -q "bad magic" "$work/d.log" || fail "no clear error: $(cat "$work/d.log")"

echo "$(cat "$work/x.log" | head -1); $line; $(grep 'Resuming' "$work/b2.log")"
echo "1 passed, 0 failed"
