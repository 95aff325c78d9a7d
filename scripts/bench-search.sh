#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Search speed, side by side: xqforge's bench and Fairy-Stockfish's bench on the same
# positions (xqforge's bench list), single thread, 16 MB hash, fixed depth; prints each
# one's nodes per second and the ratio. Depths mean different trees in different engines, so
# only the speed (nodes/second) is compared, not the node counts.
# Usage: scripts/bench-search.sh [DEPTH_XQ [DEPTH_FSF]] (defaults 11 and 10)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
fsf=${FSF:-/usr/games/fairy-stockfish}
dxq=${1:-11} dfsf=${2:-10}
[[ -x $xq ]] || { echo "bench-search: $xq not built (run scripts/setup.sh)" >&2; exit 2; }
[[ -x $fsf ]] || { echo "bench-search: $fsf missing (apt-get install fairy-stockfish)" >&2; exit 2; }
fens=$(mktemp)
trap 'rm -f "$fens"' EXIT
"$xq" bench --fens >"$fens"
n=$(wc -l <"$fens")

out_xq=$("$xq" bench "$dxq" 1 16 2>/dev/null)
out_fsf=$("$fsf" bench xiangqi 16 1 "$dfsf" "$fens" depth 2>&1 >/dev/null | tail -n 5)
nps_xq=$(awk -F: '/Nodes\/second/ {gsub(/ /, "", $2); print $2}' <<<"$out_xq")
nps_fsf=$(awk -F: '/Nodes\/second/ {gsub(/ /, "", $2); print $2}' <<<"$out_fsf")
nodes_xq=$(awk -F: '/Nodes searched/ {gsub(/ /, "", $2); print $2}' <<<"$out_xq")
nodes_fsf=$(awk -F: '/Nodes searched/ {gsub(/ /, "", $2); print $2}' <<<"$out_fsf")
printf '%d positions\n' "$n"
printf '%-16s depth %2d  nodes %10s  nodes/s %9s\n' xqforge "$dxq" "$nodes_xq" "$nps_xq"
printf '%-16s depth %2d  nodes %10s  nodes/s %9s\n' fairy-stockfish "$dfsf" "$nodes_fsf" "$nps_fsf"
printf 'speed ratio (xqforge / fairy-stockfish): %.2fx\n' "$(echo "$nps_xq / $nps_fsf" | bc -l)"
