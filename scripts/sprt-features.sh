#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Is each search feature worth having? For every feature, an SPRT of the engine with it
# switched on against the engine with it off (other features at their defaults), at fixed
# nodes per move, asian rules, the embedded openings: H1 accepted = it gains at least elo1.
# Usage: scripts/sprt-features.sh [NODES] [ELO1] [MAX_PAIRS] [CONCURRENCY] [FEATURE...]
#        (defaults 5000, 10, 2000, cores, every feature)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
nodes=${1:-5000} elo1=${2:-10} pairs=${3:-2000} conc=${4:-$(nproc)}
shift $(($# < 4 ? $# : 4))
features=("$@")
# Every feature by default: the engine lists them as UCI check options.
[[ ${#features[@]} -gt 0 ]] || mapfile -t features < <(printf 'uci\nquit\n' | "$xq" uci |
    awk '$1 == "option" && $4 == "type" && $5 == "check" {print $3}')
for f in "${features[@]}"; do
    out=$("$xq" play -engine builtin name=with "option.$f=true" \
        -engine builtin name=without "option.$f=false" \
        -each nodes="$nodes" -rounds "$pairs" -repeat -concurrency "$conc" -rules asian \
        -openings order=random -srand 7 -resign movecount=3 score=1000 -maxplies 400 \
        -sprt elo0=0 elo1="$elo1" -ratinginterval 1000000 2>&1) || true # a stopped match still counts
    # No verdict within MAX_PAIRS is a result too: print it with the last LLR.
    verdict=$(grep -o 'SPRT: [^(]*' <<<"$out" | tail -n 1 || true)
    printf '%-20s %-16s %s | %s | %s\n' "$f" "${verdict:-SPRT: no verdict}" \
        "$(grep -E '^Elo:' <<<"$out" | tail -n 1)" \
        "$(grep -E '^Games:' <<<"$out" | tail -n 1 | cut -d, -f1-4)" "$(grep -E '^LLR:' <<<"$out" | tail -n 1)"
done
