#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Trainer throughput: the former embedded net's shape (XQ1, 128 wide), then XQ1 and the
# king-bucketed XQ2 (search/nnue.h) at HIDDEN (today's embedded net: XQ2 256), side by side:
# `xqforge nnue train` on one thread over the same positions (random games scored by the linear
# evaluation, written by test_nnue_train --write), one epoch each, positions/s per thread as
# the trainer counts it (its gradient sums) and over the whole run (wall clock, Adam's step
# over every parameter included); then search nodes/s (bench, one thread) with a random net of
# each kind, which costs what a trained net of that shape costs.
# Usage: scripts/bench-train.sh [HIDDEN [POSITIONS [DEPTH]]]   (defaults 256, 100000, 8; about 10 s)
#   XQ=path/to/xqforge, GEN=path/to/test_nnue_train (defaults: build/...)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
gen=${GEN:-$here/build/tests/test_nnue_train}
hidden=${1:-256} positions=${2:-100000} depth=${3:-8}
for v in "$hidden" "$positions" "$depth"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-train.sh: '$v': expected a positive integer" >&2; exit 2; }
done
[[ -x $xq ]] || { echo "bench-train.sh: $xq: no xqforge binary (set XQ)" >&2; exit 2; }
[[ -x $gen ]] || { echo "bench-train.sh: $gen: no test_nnue_train (build the tests, or set GEN)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gen" --write "$positions" "$work/pos.xqp"
now() { date +%s.%N; }
printf '%d positions, 1 epoch, 1 thread, batch 16384\n' "$positions"
printf '%-5s %6s %9s %14s %14s %14s\n' net hidden features "pos/s (sums)" "pos/s (wall)" "bench nodes/s"
rows=("xq1 128")
((hidden != 128)) && rows+=("xq1 $hidden")
rows+=("xq2 $hidden")
for row in "${rows[@]}"; do
    read -r f h <<<"$row"
    t0=$(now)
    out=$("$xq" nnue train --data "$work/pos.xqp" --out "$work/$f-$h" --hidden "$h" \
        --epochs 1 --threads 1 --val 0 --features "$f" 2>&1) || { echo "$out" >&2; exit 1; }
    t1=$(now)
    sums=$(sed -n 's/^epoch 1\/1:.*, \([0-9]*\) positions\/s$/\1/p' <<<"$out")
    wall=$(echo "$positions / ($t1 - $t0)" | bc -l)
    "$xq" nnue net --random "$h" --features "$f" -o "$work/$f-$h.nnue" >/dev/null
    nf=$("$xq" nnue net "$work/$f-$h.nnue" | sed -n 's/^format.*), \([0-9]*\) features.*/\1/p')
    nps=$("$xq" bench "$depth" 1 16 --option "EvalFile=$work/$f-$h.nnue" --option UseNNUE=true \
        2>/dev/null | awk -F: '/Nodes\/second/ {gsub(/ /, "", $2); print $2}')
    printf '%-5s %6s %9s %14s %14.0f %14s\n' "$f" "$h" "$nf" "$sums" "$wall" "$nps"
done
