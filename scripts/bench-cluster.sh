#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cluster throughput: games per minute at fixed nodes per move (node-limited games are the
# same games wherever they run) for `xqforge play` in one process, then `xqforge run` with
# 1, 2, 4 ... worker ranks (one game at a time per rank), and the efficiency against ideal
# scaling from one rank, and the coordinator's CPU use (its own thread). Ranks beyond the machine's cores
# measure oversubscription, not scaling: run it where cores are free.
# Usage: scripts/bench-cluster.sh [MAX_WORKERS] [PAIRS]   (defaults: cores, 60)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
max=${1:-$(nproc)} pairs=${2:-60}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=$here/jobs/sprt-weights.ini
sets=(--set job.kind=match --set job.rounds="$pairs" --set job.concurrency=1)

rate() { awk -F'[(,]' '/^Results of/ {for (i = 1; i <= NF; i++) if ($i ~ /games\/min/) {sub(/ games\/min.*/, "", $i); gsub(/ /, "", $i); print $i}}' "$1" | tail -n 1; }

"$xq" play -engine builtin name=new option.horse_mg=300 -engine builtin name=base \
    -each nodes=2000 option.UseNNUE=false \
    -rounds "$pairs" -repeat -resign movecount=3 score=600 -maxplies 300 -ratinginterval 100000 \
    >"$work/play.log" 2>&1
printf '%-28s %8s games/min\n' "play (1 process, 1 game)" "$(rate "$work/play.log")"
base=""
for ((w = 1; w <= max; w *= 2)); do
    mpirun --oversubscribe --bind-to none -np $((w + 1)) \
        "$xq" run "$job" "${sets[@]}" --set output.dir="$work/run$w" >"$work/run$w.log" 2>&1 || true
    r=$(rate "$work/run$w.log")
    [[ -z $base ]] && base=$r
    eff=$(echo "100 * $r / ($base * $w)" | bc -l)
    cpu=$(grep -o 'coordinator CPU.*' "$work/run$w.log" || true)
    printf '%-28s %8s games/min  efficiency %5.1f%%  %s\n' "run, $w worker rank(s)" "$r" "$eff" "$cpu"
done
