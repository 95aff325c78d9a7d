#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What an opening book buys an SPRT: self-play of a known small change (option.horse_mg 300
# against the default 270, a 30 cp weight change, as jobs/sprt-weights.ini) at a fixed node
# count, once from each book, the same engines, games (game pairs, colours swapped), node count
# and seed for every book; then a side-by-side table: games, W/L/D, draw rate, pentanomial
# counts and the spread of a pair's score, Elo and normalized Elo with their 95% errors, those
# errors scaled to 1,000 games, and nElo / its standard error (how many standard errors the
# change stands out by: the book with the larger one detects the change in fewer games, about
# (z1 / z2)^2 fewer).
#
# The resolution rows (what an SPRT needs), each with +/- one standard error by the delta
# method from the pentanomial counts of N pairs (pair scores x = 0, 1/4, 1/2, 3/4, 1; no
# bootstrap, so the numbers are exact functions of the counts):
#   pair score variance    v = mean (x - mu)^2, se(v) = sqrt((m4 - v^2) / N), m4 = mean (x - mu)^4
#   games for Elo +/-1     games x (Elo 95% error)^2; Elo error ~ sqrt(v), so se = that x se(v) / v
#   games for nElo +/-1    games x (nElo 95% error)^2 = (1.959964 x 800 / ln 10)^2, about
#                          463,700 for every book: nElo divides by the pair spread, so its error
#                          per game is the same whatever the book (no error bar; shown so no one
#                          hunts for it)
#   games to resolve       games x (nElo error / nElo)^2 = games (1.959964 / z)^2: the games after
#                          which the change's 95% interval excludes 0; an SPRT's expected length
#                          scales the same way (1 / nElo^2). se = 2 x that / |z| (se(nElo) =
#                          nElo / z). The book with the fewest games to resolve measures best.
# An EPD book's runs are then pruned by their games (`xqforge book prune`, Stockfish's
# PR #41 rule) and its summary printed: kept and removed exits.
#
# Usage: scripts/bench-books.sh [GAMES] [NODES] [CONCURRENCY]   (defaults: 1000, 3000, 2)
#        scripts/bench-books.sh --table RUNDIR...   the table of runs already played (OUT=)
#   BOOKS="builtin:balanced builtin:unbalanced book.epd ..." the books (builtin names or EPD
#     files; default: the two builtin sets); each is a column named by it (file name less .epd)
#   TC=10+0.1 plays at that time control instead of NODES (tc = TC in [time]; each game then
#     needs its cores to itself: keep CONCURRENCY at most the idle cores)
#   XQ=path/to/xqforge (default build/xqforge); OUT=dir keeps the runs (default: a temporary one)
#     and resumes them: a run stopped (Ctrl-C drains it) goes on where it stopped when the same
#     command is given again, a finished one is not played again (other GAMES, NODES or TC
#     are refused by the run, naming what changed: use another OUT)
#   PRUNE="--min-games 10 --draw 0.1,0.9": book prune's options for the EPD books
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xq=${XQ:-$here/build/xqforge}
die() { echo "bench-books.sh: $*" >&2; exit 2; }
usage() { sed -n '/^# Usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# The table: one argument per book, NAME=RESULT.json.
table() {
    local arg
    for arg in "$@"; do
        jq -r --arg name "${arg%%=*}" \
            '[$name, .games, .wins, .losses, .draws, .elo, .error, .nelo, .nelo_error] + .ptnml
             | @tsv' "${arg#*=}" || die "${arg#*=}: not a game run's result.json"
    done | awk -F'\t' -v Z=1.959964 '
    NF != 14 {
        print "bench-books.sh: " $1 ": no pentanomial counts" > "/dev/stderr"
        bad = 1
        exit
    }
    {
        c = NR; head[c] = $1; g = $2; pairs = $10 + $11 + $12 + $13 + $14; mean = 0; var = 0; m4 = 0
        # A pair scores 0, 1/4, 1/2, 3/4 or 1 (LL, LD, DD or WL, WD, WW).
        for (k = 0; k < 5; k++) mean += k / 4 * $(10 + k) / pairs
        for (k = 0; k < 5; k++) var += (k / 4 - mean) ^ 2 * $(10 + k) / pairs
        for (k = 0; k < 5; k++) m4 += (k / 4 - mean) ^ 4 * $(10 + k) / pairs
        s = sqrt(g / 1000); se_var = sqrt((m4 - var * var > 0 ? m4 - var * var : 0) / pairs)
        v[1, c] = g; v[2, c] = $3 " / " $4 " / " $5; v[3, c] = sprintf("%.1f%%", 100 * $5 / g)
        v[4, c] = $10 " " $11 " " $12 " " $13 " " $14; v[5, c] = sprintf("%.3f", sqrt(var))
        v[6, c] = sprintf("%+.1f +/- %.1f", $6, $7); v[7, c] = sprintf("%+.1f +/- %.1f", $8, $9)
        v[8, c] = sprintf("%.1f", $7 * s); v[9, c] = sprintf("%.1f", $9 * s)
        z = $9 > 0 ? $8 / ($9 / Z) : 0
        v[10, c] = $9 > 0 ? sprintf("%+.2f", z) : "n/a"
        v[11, c] = sprintf("%.4f +/- %.4f", var, se_var)
        ge = g * $7 * $7
        v[12, c] = var > 0 ? sprintf("%.0f +/- %.0f", ge, ge * se_var / var) : "n/a"
        v[13, c] = sprintf("%.0f", g * $9 * $9)
        gr = z != 0 ? g * (Z / z) ^ 2 : 0
        v[14, c] = z != 0 ? sprintf("%.0f +/- %.0f", gr, 2 * gr / (z < 0 ? -z : z)) : "n/a"
    }
    END {
        if (bad) exit 1
        split("games|W / L / D (new)|draw rate|ptnml LL..WW (pairs)|pair score stdev|Elo (95%)|" \
              "nElo (95%)|Elo error at 1000 games|nElo error at 1000 games|nElo / standard error|" \
              "pair score variance (se)|games for Elo +/-1 (se)|games for nElo +/-1|" \
              "games to resolve (se)", name, "|")
        printf "| %-26s |", ""
        for (j = 1; j <= c; j++) {
            w[j] = length(head[j]) > 22 ? length(head[j]) : 22
            printf " %*s |", w[j], head[j]
        }
        printf "\n|----------------------------|"
        for (j = 1; j <= c; j++) { d = ""; for (k = 0; k < w[j]; k++) d = d "-"; printf "-%s:|", d }
        printf "\n"
        for (i = 1; i <= 14; i++) {
            printf "| %-26s |", name[i]
            for (j = 1; j <= c; j++) printf " %*s |", w[j], v[i, j]
            printf "\n"
        }
    }' || exit $?
}

case ${1:-} in
-h | --help) usage; exit 0 ;;
--table)
    shift
    (($#)) || die "--table: expected RUNDIR..."
    args=()
    for d in "$@"; do
        [[ -f $d/result.json ]] || die "$d: no result.json (not a finished run)"
        args+=("$(basename "$d")=$d/result.json")
    done
    table "${args[@]}"
    exit 0
    ;;
-*) die "'$1': unknown option (try --help)" ;;
esac

games=${1:-1000} nodes=${2:-3000} conc=${3:-2}
for v in "$games" "$nodes" "$conc"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v': expected a positive integer"
done
((games % 2 == 0)) || die "GAMES must be even (game pairs)"
tc=${TC:-}
[[ -z $tc || $tc =~ ^[0-9]+(\.[0-9]+)?(\+[0-9]+(\.[0-9]+)?)?$ ]] ||
    die "TC '$tc': expected SECONDS+INCREMENT (10+0.1)"
limit="nodes = $nodes" limit_text="nodes=$nodes" # the [time] line, and its name in the table
[[ -z $tc ]] || limit="tc = $tc" limit_text="tc=$tc"
# Each book: its openings file (builtin:NAME or an absolute path) and its column/run name.
read -r -a books <<<"${BOOKS:-builtin:balanced builtin:unbalanced}"
((${#books[@]})) || die "BOOKS is empty"
files=() names=() epds=()
for b in "${books[@]}"; do
    if [[ $b == builtin:* ]]; then
        [[ $b =~ ^builtin:[a-z]+$ ]] || die "BOOKS: '$b': not a builtin book name"
        files+=("$b") names+=("${b#builtin:}") epds+=("")
    else
        [[ -f $b && -r $b ]] || die "BOOKS: '$b': no such readable EPD file"
        f=$(cd "$(dirname "$b")" && pwd)/$(basename "$b")
        n=$(basename "$b" .epd)
        n=${n//[^A-Za-z0-9._-]/_}
        files+=("$f") names+=("$n") epds+=("$f")
    fi
done
for ((i = 0; i < ${#names[@]}; i++)); do
    for ((j = 0; j < i; j++)); do
        [[ ${names[i]} != "${names[j]}" ]] || names[i]=${names[i]}-$((i + 1))
    done
done
[[ -x $xq ]] || die "$xq: no xqforge binary (set XQ)"
if [[ -n ${OUT:-} ]]; then
    # Absolute: the job files' relative paths are taken from their own directory.
    mkdir -p "$OUT" || die "OUT '$OUT': cannot make the directory"
    work=$(cd "$OUT" && pwd)
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
for ((i = 0; i < ${#names[@]}; i++)); do
    book=${names[i]}
    cat >"$work/$book.ini" <<INI
[job]
kind = match
name = books-$book
resume = auto
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
$limit
[openings]
file = ${files[i]}
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
    "$xq" run "$work/$book.ini" >>"$work/$book.log" 2>&1 ||
        { echo "bench-books.sh: the $book run failed:" >&2; tail -5 "$work/$book.log" >&2; exit 1; }
done
echo "new (horse_mg 300) vs base (270), $games games per book, $limit_text, game pairs"
args=()
for book in "${names[@]}"; do args+=("$book=$work/$book/result.json"); done
table "${args[@]}"
read -r -a prune <<<"${PRUNE:-}"
for ((i = 0; i < ${#names[@]}; i++)); do
    [[ -n ${epds[i]} ]] || continue
    echo
    echo "book prune ${epds[i]} --from $work/${names[i]}${prune[*]:+ ${prune[*]}}:"
    "$xq" book prune "${epds[i]}" --from "$work/${names[i]}" "${prune[@]}" \
        -o "$work/${names[i]}.pruned.epd" --table "$work/${names[i]}.pruned.tsv" ||
        { echo "bench-books.sh: book prune of ${names[i]} failed" >&2; exit 1; }
done
