#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The book scripts' arithmetic and counts, playing two games at most. bench-books.sh --table on two
# hand-made result.json files: the pair-score variance and its standard error, the games for
# Elo and nElo errors of +/-1 and the games to resolve the change are the values worked out by
# hand below (so a wrong formula fails); its usage and bad input. check-book.sh on a small EPD
# file with two duplicates, one mirror pair, one position in check, three illegal positions
# and one c0 line that reaches another position: each counted once, exit 1; a clean file
# passes with exit 0. With the xqforge binary as argument: bench-books.sh with a relative OUT
# plays its runs there (job files take relative paths from their own directory, which once put
# them in OUT/OUT), and a second call finds that finished run there and prints its table.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/tally_lib.sh"
cd "$dir" || exit 1

# Book a: 100 pairs LL..WW = 5 15 40 25 15, so mu = 57.5 / 100 = 0.575,
# v = (5 x 0.575^2 + 15 x 0.325^2 + 40 x 0.075^2 + 25 x 0.175^2 + 15 x 0.425^2) / 100 = 0.069375,
# m4 = (the same with 4th powers) / 100 = 0.012280078125,
# se(v) = sqrt((m4 - v^2) / 100) = sqrt(0.0074671875 / 100) = 0.0086413;
# games for Elo +/-1 = 200 x 35^2 = 245000, se 245000 x 0.0086413 / 0.069375 = 30517;
# games for nElo +/-1 = 200 x 48^2 = 460800; z = 80 / (48 / 1.959964) = 3.2666,
# games to resolve = 200 x (48 / 80)^2 = 72, se = 2 x 72 / 3.2666 = 44.
# Book b: 10 20 40 20 10, mu = 0.5, v = 0.075, m4 = 0.0140625, se(v) = sqrt(0.0084375 / 100) =
# 0.0091856; 200 x 40^2 = 320000, se 320000 x 0.0091856 / 0.075 = 39192; nElo 0: n/a.
mkdir -p a b-book-with-a-long-name empty
echo '{"games":200,"wins":75,"losses":45,"draws":80,"elo":52.5,"error":35,"nelo":80,
  "nelo_error":48,"ptnml":[5,15,40,25,15]}' >a/result.json
echo '{"games":200,"wins":60,"losses":60,"draws":80,"elo":0,"error":40,"nelo":0,
  "nelo_error":48,"ptnml":[10,20,40,20,10]}' >b-book-with-a-long-name/result.json
out=$("$here/scripts/bench-books.sh" --table a b-book-with-a-long-name 2>&1)
rc=$?
row() { grep -F "| $1" <<<"$out" | tr -s ' ' | sed 's/^| //; s/ |$//'; }
[[ $rc -eq 0 ]] && ok || bad "--table exit $rc: $out"
want="pair score variance (se) | 0.0694 +/- 0.0086 | 0.0750 +/- 0.0092"
[[ $(row 'pair score variance') == "$want" ]] &&
    ok || bad "variance row: $(row 'pair score variance')"
[[ $(row 'games for Elo') == "games for Elo +/-1 (se) | 245000 +/- 30517 | 320000 +/- 39192" ]] &&
    ok || bad "Elo games row: $(row 'games for Elo')"
[[ $(row 'games for nElo') == "games for nElo +/-1 | 460800 | 460800" ]] &&
    ok || bad "nElo games row: $(row 'games for nElo')"
[[ $(row 'games to resolve') == "games to resolve (se) | 72 +/- 44 | n/a" ]] &&
    ok || bad "resolve row: $(row 'games to resolve')"
[[ $(row 'pair score stdev') == "pair score stdev | 0.263 | 0.274" &&
    $(row 'nElo / standard error') == "nElo / standard error | +3.27 | +0.00" &&
    $(row 'Elo error at 1000') == "Elo error at 1000 games | 15.7 | 17.9" ]] &&
    ok || bad "old rows: $out"
# The columns are as wide as the longest book name.
want="|                            |                      a | b-book-with-a-long-name |"
[[ $(sed -n 1p <<<"$out") == "$want" ]] &&
    ok || bad "header: $(sed -n 1p <<<"$out")"

out=$("$here/scripts/bench-books.sh" --help 2>&1)
rc=$?
want="Usage: scripts/bench-books.sh [GAMES] [NODES] [CONCURRENCY]"
[[ $rc -eq 0 && $out == "$want"* && $out == *BOOKS=* ]] &&
    ok || bad "--help: $out"
out=$("$here/scripts/bench-books.sh" --table empty 2>&1)
[[ $? -eq 2 && $out == "bench-books.sh: empty: no result.json (not a finished run)" ]] && ok ||
    bad "--table of a directory without result.json: $out"
out=$(BOOKS="builtin:balanced nowhere.epd" "$here/scripts/bench-books.sh" 2 2>&1)
[[ $? -eq 2 && $out == "bench-books.sh: BOOKS: 'nowhere.epd': no such readable EPD file" ]] && ok ||
    bad "missing book: $out"
out=$("$here/scripts/bench-books.sh" 3 2>&1)
[[ $? -eq 2 && $out == "bench-books.sh: GAMES must be even (game pairs)" ]] && ok ||
    bad "odd games: $out"
out=$(TC=10s "$here/scripts/bench-books.sh" 2 2>&1)
[[ $? -eq 2 && $out == "bench-books.sh: TC '10s': expected SECONDS+INCREMENT (10+0.1)" ]] && ok ||
    bad "bad TC: $out"

if [[ -n ${1:-} ]]; then
    # Open MPI's own modules leak at MPI_Init (strdup), which LeakSanitizer would report.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    for pass in first again; do
        out=$(OUT=rel XQ=$1 BOOKS=builtin:balanced "$here/scripts/bench-books.sh" 2 200 1 2>&1)
        rc=$?
        games=$(jq -r .games rel/balanced/result.json 2>/dev/null)
        [[ $rc -eq 0 && $games == 2 && $out == *"| games                      |                      2 |"* ]] &&
            ok || bad "bench-books.sh into a relative OUT ($pass, exit $rc, games ${games:-none}): $out"
    done
    [[ ! -e rel/rel ]] && ok || bad "bench-books.sh nested a run in rel/rel"
fi

# check-book.sh: 1 start position, 2 its duplicate, 3 and 4 after h2e2 and its mirror b2e2 (a
# mirror pair, c0 lines right), 5 Red to move in check by a chariot on its rank, 6 the same with
# Black to move (Red, not to move, in check: illegal), 7 generals facing on the e file
# (illegal), 8 a board Fairy-Stockfish reads back empty (illegal), 9 the h2e2 position whose c0
# says h2d2.
after='rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P'
cat >book.epd <<EPD
rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - ce 0;
rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - ce 0;

$after/1C2C4/9/RNBAKABNR b - - ce 10; c0 "h2e2";
$after/4C2C1/9/RNBAKABNR b - - ce 10; c0 "b2e2";
3k5/9/9/9/9/9/9/9/9/4K3r w - - ce 0;
3k5/9/9/9/9/9/9/9/9/4K3r b - - ce 0;
4k4/9/9/9/9/9/9/9/9/4K4 w - - ce 0;
xyz w - - ce 0;
$after/1C2C4/9/RNBAKABNR b - - ce 10; c0 "h2d2";
EPD
out=$("$here/scripts/check-book.sh" book.epd 2>/dev/null)
rc=$?
want=$'positions 9\nduplicates 2\nmirror_pairs 1\nin_check 1\nillegal 3\nc0_mismatch 1'
[[ $rc -eq 1 && $out == "$want" ]] && ok || bad "check-book.sh on a bad book (exit $rc): $out"
grep -v -e '^$' -e ' b - - ce 0;' -e 'xyz' -e '4k4' -e 'h2d2' book.epd | sed 1d >clean.epd
out=$("$here/scripts/check-book.sh" clean.epd 2>&1)
rc=$?
want=$'positions 4\nduplicates 0\nmirror_pairs 1\nin_check 1\nillegal 0\nc0_mismatch 0'
[[ $rc -eq 1 && $out == "$want" ]] && ok || bad "check-book.sh on the mirror pair (exit $rc): $out"
grep -v -e 'b2e2' -e 'K3r' clean.epd >clean2.epd
out=$("$here/scripts/check-book.sh" clean2.epd 2>&1)
rc=$?
want=$'positions 2\nduplicates 0\nmirror_pairs 0\nin_check 0\nillegal 0\nc0_mismatch 0'
[[ $rc -eq 0 && $out == "$want" ]] && ok || bad "check-book.sh on a clean book (exit $rc): $out"

tally_end
