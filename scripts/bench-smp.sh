#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lazy SMP: time to reach a fixed depth on the bench positions, and nodes/second, with 1, 2,
# 4 ... threads up to the machine's cores; prints the speed-up against one thread.
# Usage: scripts/bench-smp.sh [DEPTH] [MAX_THREADS]   (defaults: 12, cores)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
depth=${1:-12} max=${2:-$(nproc)}
t1=""
for ((t = 1; t <= max; t *= 2)); do
    out=$("$xq" bench "$depth" "$t" 64 2>/dev/null)
    ms=$(awk -F: '/Total time/ {gsub(/ /, "", $2); print $2}' <<<"$out")
    nps=$(awk -F: '/Nodes\/second/ {gsub(/ /, "", $2); print $2}' <<<"$out")
    [[ -z $t1 ]] && t1=$ms
    printf 'threads %3d  time to depth %2d: %7d ms  speed-up %5.2fx  nodes/s %9d\n' "$t" "$depth" \
        "$ms" "$(echo "$t1 / $ms" | bc -l)" "$nps"
done
