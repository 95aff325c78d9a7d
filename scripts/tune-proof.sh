#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The proof that both tuners gain strength, from a deliberately detuned engine
# (jobs/detuned.txt: horse, cannon and chariot values about 30% off):
#   1. SPSA (jobs/spsa-detuned.ini) tunes the four detuned values; SPRT tuned vs detuned.
#   2. Self-play games (jobs/selfplay.ini) give a Texel dataset; a fit of the evaluation
#      weights (jobs/texel.ini, params = eval) starts from the detuned set; SPRT tuned vs
#      detuned, and the fit's loss before and after.
# Every step is an MPI job of this machine (RANKS ranks: 1 coordinator + workers).
# Usage: scripts/tune-proof.sh [RANKS] [SPSA_PAIRS] [SELFPLAY_GAMES]  (defaults 3, 5000, 14000)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
xq=${XQ:-$here/build/xqforge}
ranks=${1:-3} pairs=${2:-5000} games=${3:-14000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { mpirun --oversubscribe --bind-to none -np "$ranks" "$xq" run "$@"; }
verdict() { grep -E '^(Elo|Games|LLR|SPRT)' "$1" | tail -n 4; }
mkdir -p out

echo "== SPSA: $pairs game pairs from the detuned set"
run jobs/spsa-detuned.ini --set job.rounds="$pairs" | tee out/spsa-detuned.log | grep -A6 '^SPSA:'
run jobs/sprt-tuned.ini --set engine.tuned.params=out/spsa-detuned/spsa-weights.txt \
    --set output.dir=out/sprt-spsa >out/sprt-spsa.log
verdict out/sprt-spsa.log

echo "== Texel: $games self-play games, then a fit from the detuned set"
[[ -f out/openings.epd ]] || python3 scripts/random-openings.py 20000 6 7 >out/openings.epd
run jobs/selfplay.ini --set job.rounds="$games" >out/selfplay.log
"$xq" texel info out/selfplay/texel.xqd
run jobs/texel.ini --set texel.data=out/selfplay/texel.xqd --set texel.start=jobs/detuned.txt \
    --set output.dir=out/texel-detuned | tee out/texel-detuned.log | grep -E '^(Loaded|Fitted|K )'
run jobs/sprt-tuned.ini --set engine.tuned.params=out/texel-detuned/texel-weights.txt \
    --set output.dir=out/sprt-texel >out/sprt-texel.log
verdict out/sprt-texel.log
