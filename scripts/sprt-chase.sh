#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Is rule C worth knowing in the search? An SPRT of the builtin engine with ChaseRule=true
# (a perpetual chase inside the tree scores as a loss for the chaser) against the same engine
# with ChaseRule=false (every repetition without checks is a draw to it), under asian rules,
# where the referee always judges rule C. Fixed nodes per move, the embedded openings in random
# order, game pairs. The match stops at the SPRT's verdict, after MAX_PAIRS, or after SECONDS
# of wall time (SIGINT: the games finished so far are counted and summarised).
# Usage: scripts/sprt-chase.sh [NODES] [ELO1] [MAX_PAIRS] [CONCURRENCY] [SECONDS]
#        (defaults 5000, 10, 20000, cores, 900)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
nodes=${1:-5000} elo1=${2:-10} pairs=${3:-20000} conc=${4:-$(nproc)} secs=${5:-900}
timeout -s INT "$secs" "$xq" play -engine builtin name=chase option.ChaseRule=true \
    -engine builtin name=nochase option.ChaseRule=false \
    -each nodes="$nodes" -rounds "$pairs" -repeat -concurrency "$conc" -rules asian \
    -openings order=random -srand 7 -resign movecount=3 score=1000 -maxplies 400 \
    -sprt elo0=0 elo1="$elo1" -ratinginterval 1000000 2>&1 |
    grep -v '^Finished game' || true # a stopped match still prints its summary
