#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Book generation throughput: accepted positions per minute for the jobs/book.ini settings
# with 1, 2, 4 ... worker ranks under mpirun (one generator thread per rank, plus rank 0
# coordinating), and the efficiency against ideal scaling from one rank. Every run generates
# the same book (checked), so the ranks share exactly the same work. Ranks beyond the free
# cores measure oversubscription, not scaling: run it where cores are free.
# Usage: scripts/bench-book.sh [MAX_WORKERS] [POSITIONS]   (defaults: cores, 600)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
max=${1:-$(nproc)} positions=${2:-600}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "$(nproc) cores; book of $positions positions with jobs/book.ini's settings"
base=""
for ((w = 1; w <= max; w *= 2)); do
    mpirun --oversubscribe --bind-to none -np $((w + 1)) "$xq" run "$here/jobs/book.ini" \
        --set job.concurrency=1 --set book.positions="$positions" \
        --set output.dir="$work/run$w" >"$work/run$w.log" 2>&1
    r=$(sed -n 's/^[0-9]* positions in [0-9.]* min: \([0-9]*\) positions\/min$/\1/p' \
        "$work/run$w.log" | tail -n 1)
    [[ -z $base ]] && base=$r
    eff=$(echo "100 * $r / ($base * $w)" | bc -l)
    note=""
    ((w + 1 > $(nproc))) && note="  (oversubscribed: $((w + 1)) ranks on $(nproc) cores)"
    cmp -s "$work/run1/book.epd" "$work/run$w/book.epd" || note="$note  BOOK DIFFERS"
    printf 'run, %d worker rank(s) %8s positions/min  efficiency %5.1f%%%s\n' "$w" "$r" "$eff" "$note"
done
