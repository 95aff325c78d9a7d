#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Evaluation speed, side by side in one run: xqforge's bench with a net (UseNNUE true), with
# the linear evaluation, and Fairy-Stockfish's bench on the same positions (xqforge's bench
# list), single thread, 16 MB hash, fixed depth (as scripts/bench-search.sh); prints each
# one's nodes per second and the ratios. Different evaluations grow different trees, so only
# the speeds are compared. Without NET, the net embedded in the binary (search/nets/); in a
# build without one, a random net of HIDDEN units (default 256) made for the run: it plays
# badly but costs what a trained net of that size costs.
# The three run in turn ROUNDS times (default 5, about 8 s a round); each speed printed is the
# median of its rounds (a shared machine's noise reaches 20% in one run).
# Usage: scripts/bench-nnue.sh [NET [DEPTH_XQ [DEPTH_FSF]]] (depth defaults 11 and 10)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
fsf=${FSF:-/usr/games/fairy-stockfish}
net=${1:-} dxq=${2:-11} dfsf=${3:-10} hidden=${HIDDEN:-256} rounds=${ROUNDS:-5}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-nnue: ROUNDS='$rounds': expected a positive integer" >&2; exit 2; }
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

field() { awk -F: -v k="$1" '$0 ~ k {sub(/^ +/, "", $2); sub(/ +$/, "", $2); print $2}' <<<"$2"; }
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
# The three in turn, ROUNDS times: on a shared machine a neighbour's burst slows whichever
# runs then, so each speed is the median of its rounds, and so is each round's ratio.
declare -a n_nnue n_lin n_fsf r_nf
for ((r = 1; r <= rounds; r++)); do
    out_nnue=$("$xq" bench "$dxq" 1 16 "${opts[@]}" 2>/dev/null)
    out_lin=$("$xq" bench "$dxq" 1 16 --option UseNNUE=false 2>/dev/null)
    out_fsf=$("$fsf" bench xiangqi 16 1 "$dfsf" "$tmp/fens" depth 2>&1 >/dev/null | tail -n 5)
    n_nnue+=("$(field 'Nodes/second' "$out_nnue")") n_lin+=("$(field 'Nodes/second' "$out_lin")")
    n_fsf+=("$(field 'Nodes/second' "$out_fsf")")
    r_nf+=("$(echo "${n_nnue[-1]} * 1000 / ${n_fsf[-1]}" | bc)")
    ((rounds == 1)) || printf 'round %d: nodes/s NNUE %s, linear %s, fairy-stockfish %s\n' "$r" \
        "${n_nnue[-1]}" "${n_lin[-1]}" "${n_fsf[-1]}" >&2
done
nps_nnue=$(median "${n_nnue[@]}") nps_lin=$(median "${n_lin[@]}") nps_fsf=$(median "${n_fsf[@]}")
printf '%d positions; net %s, hidden %s (%s)\n' "$n" "$(field '^id' "$info")" \
    "$(field '^hidden' "$info")" "$(field '^description' "$info")"
row() { printf '%-22s depth %2d  nodes %10s  nodes/s %9s\n' "$1" "$2" "$(field 'Nodes searched' "$3")" "$4"; }
printf 'nodes/s: the median of %d rounds\n' "$rounds"
row "xqforge NNUE" "$dxq" "$out_nnue" "$nps_nnue"
row "xqforge linear" "$dxq" "$out_lin" "$nps_lin"
row "fairy-stockfish" "$dfsf" "$out_fsf" "$nps_fsf"
ratio() { echo "$1 / $2" | bc -l; }
printf 'NNUE / linear:          %.2fx\n' "$(ratio "$nps_nnue" "$nps_lin")"
printf 'NNUE / fairy-stockfish: %.2fx\n' "$(ratio "$nps_nnue" "$nps_fsf")"
printf 'linear / fairy-stockfish: %.2fx\n' "$(ratio "$nps_lin" "$nps_fsf")"
printf 'NNUE / fairy-stockfish, round by round: median %.2fx (%s)\n' \
    "$(ratio "$(median "${r_nf[@]}")" 1000)" \
    "$(printf '%s\n' "${r_nf[@]}" | awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $1 / 1000}')"
