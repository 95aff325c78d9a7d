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
python3 - "$work/balanced/result.json" "$work/unbalanced/result.json" <<'PY'
import json, math, sys

def row(path):
    r = json.load(open(path))
    g, w, l, d = r["games"], r["wins"], r["losses"], r["draws"]
    p = r["ptnml"]
    pairs = sum(p)
    # A pair's score in 0..1 (0, 1/4, 1/2, 3/4, 1 for LL, LD, DD or WL, WD, WW).
    mean = sum(k / 4 * n for k, n in enumerate(p)) / pairs
    var = sum((k / 4 - mean) ** 2 * n for k, n in enumerate(p)) / pairs
    scale = math.sqrt(g / 1000)
    z = r["nelo"] / (r["nelo_error"] / 1.959964) if r["nelo_error"] > 0 else float("nan")
    return [
        f"{g}", f"{w} / {l} / {d}", f"{100 * d / g:.1f}%",
        " ".join(str(n) for n in p), f"{math.sqrt(var):.3f}",
        f"{r['elo']:+.1f} +/- {r['error']:.1f}", f"{r['nelo']:+.1f} +/- {r['nelo_error']:.1f}",
        f"{r['error'] * scale:.1f}", f"{r['nelo_error'] * scale:.1f}", f"{z:+.2f}",
    ]

labels = ["games", "W / L / D (new)", "draw rate", "ptnml LL..WW (pairs)",
          "pair score stdev", "Elo (95%)", "nElo (95%)", "Elo error at 1000 games",
          "nElo error at 1000 games", "nElo / standard error"]
cols = [row(sys.argv[1]), row(sys.argv[2])]
print(f"| {'':26} | {'balanced':>22} | {'unbalanced':>22} |")
print(f"|{'-' * 28}|{'-' * 24}:|{'-' * 24}:|")
for i, name in enumerate(labels):
    print(f"| {name:26} | {cols[0][i]:>22} | {cols[1][i]:>22} |")
PY
