#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Evaluation speed, side by side in one run: xqforge's bench with a net (UseNNUE true), with
# the linear evaluation, and Fairy-Stockfish's bench on the same positions (xqforge's bench
# list), single thread, 16 MB hash, fixed depth (as scripts/bench-search.sh); prints each
# one's nodes per second and the ratios. Different evaluations grow different trees, so only
# the speeds are compared. Without NET, the net embedded in the binary (search/nets/); in a
# build without one, a random net of HIDDEN units (default 256) made for the run: it plays
# badly but costs what a trained net of that size costs.
# Usage: scripts/bench-nnue.sh [NET [DEPTH_XQ [DEPTH_FSF]]] (depth defaults 11 and 10)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
fsf=${FSF:-/usr/games/fairy-stockfish}
net=${1:-} dxq=${2:-11} dfsf=${3:-10} hidden=${HIDDEN:-256}
[[ -x $xq ]] || { echo "bench-nnue: $xq not built (run scripts/setup.sh)" >&2; exit 2; }
[[ -x $fsf ]] || { echo "bench-nnue: $fsf missing (apt-get install fairy-stockfish)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
opts=(--option UseNNUE=true)
if [[ -n $net ]]; then
    info=$("$xq" nnue net "$net") || exit 2
    opts=(--option "EvalFile=$net" "${opts[@]}")
elif ! info=$("$xq" nnue net --default 2>/dev/null); then
    net=$tmp/random.nnue
    "$xq" nnue net --random "$hidden" -o "$net" >/dev/null
    info=$("$xq" nnue net "$net") || exit 2
    opts=(--option "EvalFile=$net" "${opts[@]}")
fi
"$xq" bench --fens >"$tmp/fens"
n=$(wc -l <"$tmp/fens")

out_nnue=$("$xq" bench "$dxq" 1 16 "${opts[@]}" 2>/dev/null)
out_lin=$("$xq" bench "$dxq" 1 16 --option UseNNUE=false 2>/dev/null)
out_fsf=$("$fsf" bench xiangqi 16 1 "$dfsf" "$tmp/fens" depth 2>&1 >/dev/null | tail -n 5)
field() { awk -F: -v k="$1" '$0 ~ k {sub(/^ +/, "", $2); sub(/ +$/, "", $2); print $2}' <<<"$2"; }
nps_nnue=$(field 'Nodes/second' "$out_nnue") nps_lin=$(field 'Nodes/second' "$out_lin")
nps_fsf=$(field 'Nodes/second' "$out_fsf")
printf '%d positions; net %s, hidden %s (%s)\n' "$n" "$(field '^id' "$info")" \
    "$(field '^hidden' "$info")" "$(field '^description' "$info")"
row() { printf '%-22s depth %2d  nodes %10s  nodes/s %9s\n' "$1" "$2" "$(field 'Nodes searched' "$3")" "$4"; }
row "xqforge NNUE" "$dxq" "$out_nnue" "$nps_nnue"
row "xqforge linear" "$dxq" "$out_lin" "$nps_lin"
row "fairy-stockfish" "$dfsf" "$out_fsf" "$nps_fsf"
ratio() { echo "$1 / $2" | bc -l; }
printf 'NNUE / linear:          %.2fx\n' "$(ratio "$nps_nnue" "$nps_lin")"
printf 'NNUE / fairy-stockfish: %.2fx\n' "$(ratio "$nps_nnue" "$nps_fsf")"
printf 'linear / fairy-stockfish: %.2fx\n' "$(ratio "$nps_lin" "$nps_fsf")"
