#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Datagen throughput at the training loop's settings (jobs/loop.ini: self-play at 2000 nodes a
# move, 8 random plies, positions from ply 16, captures and checks skipped, the same
# adjudication): positions/s and positions/s per core with 1, 2, 4 ... worker ranks under
# mpirun (one game thread per rank, rank 0 coordinating), and the efficiency against ideal
# scaling from one rank. Every run writes the same positions file (checked: the units and
# their order do not depend on the ranks), so the ranks share exactly the same work. Ranks
# beyond the free cores measure oversubscription, not scaling: run it where cores are free
# (a 16-core machine: scripts/bench-datagen.sh 15).
# With NET=FILE, one more row: the same job on 1 worker rank with that net (option.EvalFile)
# instead of the embedded one, and its speed against the embedded net's (a new net's games
# differ, so only the speeds are compared).
# Usage: scripts/bench-datagen.sh [MAX_WORKERS] [POSITIONS]   (defaults: cores - 1, 20000)
#   XQ=path/to/xqforge (default build/xqforge), NET=a net file to compare (optional)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
cores=$(nproc)
max=${1:-$((cores > 1 ? cores - 1 : 1))} positions=${2:-20000}
for v in "$max" "$positions"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-datagen.sh: '$v': expected a positive integer" >&2; exit 2; }
done
[[ -x $xq ]] || { echo "bench-datagen.sh: $xq: no xqforge binary (set XQ)" >&2; exit 2; }
net=${NET:-}
[[ -z $net ]] || "$xq" nnue net "$net" >/dev/null || { echo "bench-datagen.sh: NET=$net: not a net file" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The datagen step of jobs/loop.ini, as its own job.
cat >"$work/datagen.ini" <<INI
[job]
kind = datagen
name = bench-datagen
concurrency = 1
[engine xq]
option.Hash = 16
[time]
nodes = 2000
[adjudication]
maxplies = 300
resign = true
resign_movecount = 4
resign_score = 1500
draw = true
draw_movenumber = 60
draw_movecount = 10
draw_score = 8
[datagen]
positions = $positions
random_plies = 8
min_ply = 16
seed = 1
INI
echo "$cores cores; $positions positions at jobs/loop.ini's datagen settings (2000 nodes a move)"
base=""
for ((w = 1; w <= max; w *= 2)); do
    mpirun --oversubscribe --bind-to none -np $((w + 1)) "$xq" run "$work/datagen.ini" \
        --set output.dir="$work/run$w" >"$work/run$w.log" 2>&1 ||
        { echo "bench-datagen.sh: the run on $w worker ranks failed:" >&2; tail -5 "$work/run$w.log" >&2; exit 1; }
    r=$(jq '.positions_per_s' "$work/run$w/result.json")
    pc=$(jq '.positions_per_s_per_core' "$work/run$w/result.json")
    [[ -z $base ]] && base=$r
    eff=$(echo "100 * $r / ($base * $w)" | bc -l)
    note=""
    ((w + 1 > cores)) && note="  (oversubscribed: $((w + 1)) ranks on $cores cores)"
    cmp -s "$work/run1/positions.xqp" "$work/run$w/positions.xqp" || note="$note  FILE DIFFERS"
    printf '%2d worker rank(s) %9.1f positions/s %8.2f per core  efficiency %5.1f%%%s\n' \
        "$w" "$r" "$pc" "$eff" "$note"
done
if [[ -n $net ]]; then
    sed "s|^option.Hash = 16$|&\noption.EvalFile = $(realpath "$net")|" "$work/datagen.ini" >"$work/net.ini"
    mpirun --oversubscribe --bind-to none -np 2 "$xq" run "$work/net.ini" \
        --set output.dir="$work/net" >"$work/net.log" 2>&1 ||
        { echo "bench-datagen.sh: the run with $net failed:" >&2; tail -5 "$work/net.log" >&2; exit 1; }
    r=$(jq '.positions_per_s' "$work/net/result.json")
    pc=$(jq '.positions_per_s_per_core' "$work/net/result.json")
    printf ' 1 worker rank(s) %9.1f positions/s %8.2f per core  with %s: %.2fx the embedded net\n' \
        "$r" "$pc" "$(basename "$net")" "$(echo "$r / $base" | bc -l)"
fi
