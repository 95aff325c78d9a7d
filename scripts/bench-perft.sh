#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Perft speed, side by side: xqforge and Fairy-Stockfish count the same trees in one run
# (start position to depth 5, five middlegames to depth 4), single-threaded, and the script
# prints each one's leaf nodes per second and the ratio. Both bulk-count the last ply.
# Usage: scripts/bench-perft.sh [path/to/xqforge] [path/to/fairy-stockfish]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${1:-$here/build/xqforge}
fsf=${2:-/usr/games/fairy-stockfish}
[[ -x $xq ]] || { echo "bench-perft: $xq not built (run scripts/setup.sh)" >&2; exit 2; }
[[ -x $fsf ]] || { echo "bench-perft: $fsf missing (apt-get install fairy-stockfish)" >&2; exit 2; }

positions=(
    "5|rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    "4|r1bakab1r/9/1cn3nc1/p1p1p3p/6p2/2P6/P3P1P1P/1CN3NC1/9/R1BAKAB1R w - - 6 4"
    "4|1r1akab1r/9/2n1b2cn/p1p1p2Rp/6p2/2P3P2/Pc2P3P/1CN1C1N2/9/R1BAKAB2 b - - 13 7"
    "4|2bak4/4a4/2R1b1n2/3rp3p/p1P3p2/9/Pc2P1P1c/1CN3C2/4Nr3/2BAKABR1 w - - 1 16"
    "4|4ka3/4a4/2n1b1n1b/p3pR2p/6p2/2C6/P1c1P1P1P/2N1B2rC/5Nc2/2BAKA3 w - - 12 21"
    "4|1rbak1br1/4a4/2n5n/p1p1p1p1R/9/9/P1P1PcP1P/3Ac3N/N5C2/1RBAK1B2 w - - 0 13"
)

# Best of three CPU times (user + system) of a command, in seconds: CPU time is far less
# disturbed than wall time when the machine is busy.
best_time() {
    local best="" t
    for _ in 1 2 3; do
        t=$( { TIMEFORMAT='%3U %3S'; time "$@" >/dev/null; } 2>&1 | tail -n 1 | awk '{print $1 + $2}')
        if [[ -z $best ]] || (($(echo "$t < $best" | bc -l))); then best=$t; fi
    done
    echo "$best"
}

run_fsf() { # depth fen -> node count
    printf 'ucci\nsetoption UCI_Variant xiangqi\nposition fen %s\ngo perft %s\nquit\n' "$2" "$1" |
        "$fsf" | awk '/^Nodes searched/ {print $3}'
}

run_xq() {
    "$xq" perft --fen "$2" "$1" 2>/dev/null | awk '/^Nodes searched/ {print $3}'
}

# Process start-up (Fairy-Stockfish builds tables for all its variants) is measured with a
# depth-1 run and subtracted, so that only counting is compared.
base_xq=$(best_time run_xq 1 "${positions[0]#*|}")
base_fsf=$(best_time run_fsf 1 "${positions[0]#*|}")
printf 'start-up: xqforge %.3f s, fairy-stockfish %.3f s (subtracted)\n' "$base_xq" "$base_fsf"
printf '%-6s %14s %12s %12s %7s\n' depth nodes "xqforge n/s" "fsf n/s" ratio
total_nodes=0 total_xq=0 total_fsf=0 status=0
for entry in "${positions[@]}"; do
    depth=${entry%%|*} fen=${entry#*|}
    n_xq=$(run_xq "$depth" "$fen") n_fsf=$(run_fsf "$depth" "$fen")
    if [[ $n_xq != "$n_fsf" ]]; then
        echo "MISMATCH on $fen depth $depth: xqforge $n_xq, fairy-stockfish $n_fsf" >&2
        status=1
    fi
    s_xq=$(echo "$(best_time run_xq "$depth" "$fen") - $base_xq" | bc -l)
    s_fsf=$(echo "$(best_time run_fsf "$depth" "$fen") - $base_fsf" | bc -l)
    printf '%-6s %14s %12.0f %12.0f %6.2fx  %s\n' "$depth" "$n_xq" "$(echo "$n_xq / $s_xq" | bc -l)" \
        "$(echo "$n_fsf / $s_fsf" | bc -l)" "$(echo "$s_fsf / $s_xq" | bc -l)" "${fen%% *}"
    total_nodes=$((total_nodes + n_xq))
    total_xq=$(echo "$total_xq + $s_xq" | bc -l) total_fsf=$(echo "$total_fsf + $s_fsf" | bc -l)
done
printf 'total  %14s %12.0f %12.0f %6.2fx\n' "$total_nodes" "$(echo "$total_nodes / $total_xq" | bc -l)" \
    "$(echo "$total_nodes / $total_fsf" | bc -l)" "$(echo "$total_fsf / $total_xq" | bc -l)"
exit $status
