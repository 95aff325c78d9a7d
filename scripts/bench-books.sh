#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What an opening book buys an SPRT: self-play of a known small change (option.horse_mg 300
# against the default 270, a 30 cp weight change, as jobs/sprt-weights.ini) at a fixed node
# count, once from the embedded balanced set and once from the unbalanced one, the same games
# (game pairs, colours swapped) and the same seed; then a side-by-side table: games, W/L/D,
# draw rate, pentanomial counts and the spread of a pair's score, Elo and normalized Elo with
# their 95% errors, those errors scaled to 1,000 games, and nElo / its standard error (how
# many standard errors the change stands out by: the book with the larger one detects the
# change in fewer games, about (z1 / z2)^2 fewer).
# Usage: scripts/bench-books.sh [GAMES] [NODES] [CONCURRENCY]   (defaults: 1000, 3000, 2)
#   XQ=path/to/xqforge (default build/xqforge); OUT=dir keeps the runs (default: a temporary one)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
games=${1:-1000} nodes=${2:-3000} conc=${3:-2}
for v in "$games" "$nodes" "$conc"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-books.sh: '$v': expected a positive integer" >&2; exit 2; }
done
((games % 2 == 0)) || { echo "bench-books.sh: GAMES must be even (game pairs)" >&2; exit 2; }
[[ -x $xq ]] || { echo "bench-books.sh: $xq: no xqforge binary (set XQ)" >&2; exit 2; }
if [[ -n ${OUT:-} ]]; then
    work=$OUT
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
for book in balanced unbalanced; do
    cat >"$work/$book.ini" <<INI
[job]
kind = match
name = books-$book
rounds = $((games / 2))
concurrency = $conc
[engine new]
option.horse_mg = 300
[engine base]
[each]
proto = builtin
option.UseNNUE = false
option.Threads = 1
option.Hash = 16
[time]
nodes = $nodes
[openings]
file = builtin:$book
order = random
seed = 1
[adjudication]
resign = on
resign_movecount = 3
resign_score = 600
maxplies = 300
[output]
dir = $work/$book
INI
    rm -rf "${work:?}/$book"
    "$xq" run "$work/$book.ini" >"$work/$book.log" 2>&1 ||
        { echo "bench-books.sh: the $book run failed:" >&2; tail -5 "$work/$book.log" >&2; exit 1; }
done
echo "new (horse_mg 300) vs base (270), $games games per book, nodes=$nodes, game pairs"
# One line per book: games wins losses draws elo error nelo nelo_error ptnml[0..4].
for book in balanced unbalanced; do
    jq -r '[.games, .wins, .losses, .draws, .elo, .error, .nelo, .nelo_error] + .ptnml | @tsv' \
        "$work/$book/result.json"
done | awk -F'\t' '
{
    g = $1; pairs = $9 + $10 + $11 + $12 + $13; mean = 0; var = 0
    # A pair scores 0, 1/4, 1/2, 3/4 or 1 (LL, LD, DD or WL, WD, WW).
    for (k = 0; k < 5; k++) mean += k / 4 * $(9 + k) / pairs
    for (k = 0; k < 5; k++) var += (k / 4 - mean) ^ 2 * $(9 + k) / pairs
    s = sqrt(g / 1000); c = NR
    v[1, c] = g; v[2, c] = $2 " / " $3 " / " $4; v[3, c] = sprintf("%.1f%%", 100 * $4 / g)
    v[4, c] = $9 " " $10 " " $11 " " $12 " " $13; v[5, c] = sprintf("%.3f", sqrt(var))
    v[6, c] = sprintf("%+.1f +/- %.1f", $5, $6); v[7, c] = sprintf("%+.1f +/- %.1f", $7, $8)
    v[8, c] = sprintf("%.1f", $6 * s); v[9, c] = sprintf("%.1f", $8 * s)
    v[10, c] = $8 > 0 ? sprintf("%+.2f", $7 / ($8 / 1.959964)) : "n/a"
}
END {
    split("games|W / L / D (new)|draw rate|ptnml LL..WW (pairs)|pair score stdev|Elo (95%)|" \
          "nElo (95%)|Elo error at 1000 games|nElo error at 1000 games|nElo / standard error", name, "|")
    printf "| %-26s | %22s | %22s |\n", "", "balanced", "unbalanced"
    printf "|----------------------------|-----------------------:|-----------------------:|\n"
    for (i = 1; i <= 10; i++) printf "| %-26s | %22s | %22s |\n", name[i], v[i, 1], v[i, 2]
}'
