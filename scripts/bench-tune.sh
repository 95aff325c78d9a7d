#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tuning throughput.
# Texel: load time and one-epoch time (gradient over every position) of a dataset with 1
# thread, 2 threads, and 2 MPI ranks of 1 thread, as positions/second per core.
# SPSA: iterations (game pairs) per minute of jobs/spsa-detuned.ini at 1000 and 5000 nodes
# per move, on one rank with one game per core.
# Usage: scripts/bench-tune.sh DATASET.xqd [EPOCHS] [SPSA_PAIRS]   (defaults 5, 100)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
data=${1:?usage: bench-tune.sh DATASET.xqd [EPOCHS] [SPSA_PAIRS]}
epochs=${2:-5} pairs=${3:-100}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=$(realpath "$data")
"$xq" texel info "$data"

texel_line() { # label, log
    local load epoch pps
    load=$(grep -o 'in [0-9.]* s$' "$2" | head -1 | awk '{print $2}')
    epoch=$(grep -oE '[0-9.]+ s/epoch' "$2" | tail -1 | awk '{print $1}')
    pps=$(grep -oE '[0-9]+ positions/s per core' "$2" | awk '{print $1}')
    printf '%-26s load %6s s   epoch %7s s   %9s positions/s per core\n' "$1" "$load" "$epoch" "$pps"
}
for t in 1 2; do
    (cd "$work" && "$xq" texel fit --data "$data" --epochs "$epochs" --k 0.5 --threads $t \
        -o "w$t.txt" >"t$t.log" 2>&1)
    texel_line "texel, 1 process x $t thr" "$work/t$t.log"
done
mkdir -p "$work/mpi"
mpirun --oversubscribe --bind-to none -np 2 "$xq" run "$here/jobs/texel.ini" \
    --set texel.data="$data" --set texel.epochs="$epochs" --set texel.k=0.5 \
    --set texel.threads=1 --set output.dir="$work/mpi" >"$work/m.log" 2>&1
texel_line "texel, 2 ranks x 1 thr" "$work/m.log"

spsa_rate() { # label, extra --set
    local log=$work/spsa$RANDOM.log
    (cd "$here" && "$xq" run jobs/spsa-detuned.ini --set job.rounds="$pairs" \
        --set output.dir="$work/s$RANDOM" "$@" >"$log" 2>&1)
    awk -F'[(,]' '/^Results of/ {for (i = 1; i <= NF; i++) if ($i ~ /games\/min/) {
        sub(/ games\/min.*/, "", $i); gsub(/ /, "", $i); r = $i / 2}}
        END {printf "%.1f", r}' "$log"
}
printf '%-26s %8s iterations/min\n' "spsa, nodes=1000" "$(spsa_rate)"
printf '%-26s %8s iterations/min\n' "spsa, nodes=5000" "$(spsa_rate --set time.nodes=5000)"
