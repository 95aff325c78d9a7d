#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# xqforge book export and prune on real runs, and the game run's per-opening report section. Export: a small book job's .xqb becomes a
# BOOK.DAT that `book probe` reads back with the .xqb's moves and weights at the start, every
# book move reached; a bad format or file is refused by name. Prune: a 6-pair match on a
# 3-line EPD book (a blank line and a comment in it, so line numbers and exit numbers differ)
# gives every exit its 4 games, the table's tallies agree with the run's PGN, the kept file
# holds exactly the exits the verdicts keep, and a run of another book, a bad --draw and a
# missing run are refused by name.
set -u
xq=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
jobs=$(cd "$(dirname "$0")/../jobs" && pwd)
. "$(dirname "$0")/tally_lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

cd "$dir" || exit 1
printf '# a tiny test book\nstartpos moves h2e2 h9g7\n\nstartpos moves c3c4 b9c7\nstartpos moves b0c2 b9c7 h2e2\n' >book.epd
run() { # output dir, extra --set arguments
    local out=$1
    shift
    "$xq" run "$jobs/sprt-weights.ini" --set job.kind=match --set openings.order=sequential \
        --set time.nodes=300 --set adjudication.maxplies=120 --set output.dir="$out" "$@" \
        >"$out.log" 2>&1 || bad "run $out failed: $(tail -3 "$out.log")"
}
run run1 --set job.rounds=6 --set openings.file=book.epd
run other --set job.rounds=1

"$xq" run "$jobs/book.ini" --set book.positions=30 --set book.verify_depth=3 \
    --set book.select_depth=2 --set job.concurrency=2 --set output.dir=bk >bk.log 2>&1 ||
    bad "book run failed: $(tail -3 bk.log)"
out=$("$xq" book export bk/book.xqb --format elephanteye -o bk/BOOK.DAT 2>&1)
rc=$?
want='^bk/BOOK.DAT: [0-9]+ entries, [0-9]+ bytes: [0-9]+ positions, [0-9]+ of [0-9]+ book moves'
want+=' \(0 not reached from the root\)'
[[ $rc -eq 0 ]] && grep -Eq "$want" <<<"$out" &&
    ok || bad "export (exit $rc): $out"
[[ $(($(stat -c %s bk/BOOK.DAT) % 8)) -eq 0 ]] && ok || bad "BOOK.DAT size not a multiple of 8"
dat=$("$xq" book probe --book bk/BOOK.DAT startpos | awk 'NR > 1 { print $1, $3 }' | sort)
xqb=$("$xq" book probe --book bk/book.xqb startpos | awk 'NR > 1 { print $1, $3 }' | sort)
[[ -n $dat && $dat == "$xqb" ]] && ok || bad "start position: BOOK.DAT '$dat', .xqb '$xqb'"
out=$("$xq" book export bk/book.xqb --format polyglot -o x.bin 2>&1)
[[ $? -eq 2 ]] && grep -q "unknown format 'polyglot' (known: elephanteye)" <<<"$out" && ok ||
    bad "export --format polyglot: $out"
printf '1234567' >odd.dat
out=$("$xq" book probe --book odd.dat startpos 2>&1)
[[ $? -eq 1 ]] && grep -q "odd.dat: 7 bytes is not a whole number of 8-byte entries" <<<"$out" && ok ||
    bad "probe of a 7-byte .dat: $out"

out=$("$xq" book prune book.epd --from run1 --min-games 4 --draw 0.1,0.9 2>&1)
rc=$?
[[ $rc -eq 0 ]] && grep -q '^book.epd: 3 exits, 12 games (6 pairs) from 1 run$' <<<"$out" && ok ||
    bad "prune summary (exit $rc): $out"
[[ $(sed -n 1p book.pruned.tsv) == $'exit\tline\tgames\tred_wins\tdraws\tblack_wins\tscore\tdraw_rate\tverdict\topening' ]] &&
    ok || bad "table header: $(sed -n 1p book.pruned.tsv)"
# Exits 1..3 are lines 2, 4, 5 of the file, 4 games each.
[[ $(awk -F'\t' 'NR > 1 { printf "%s:%s:%s ", $1, $2, $3 }' book.pruned.tsv) == "1:2:4 2:4:4 3:5:4 " ]] &&
    ok || bad "exits, lines, games: $(cat book.pruned.tsv)"
# The PGN's results per opening (its FEN tag is the start, the book moves follow) agree with the
# table's red wins, draws and black wins.
pgn=$(awk '/^\[Result / { r = $2 } /^1\. / { print $2, $4, r }' run1/games.pgn | tr -d '"]' |
    sort | uniq -c | awk '{ printf "%s %s %s %s;", $2, $3, $4, $1 }')
for i in 1 2 3; do
    line=$(awk -F'\t' -v i=$i '$1 == i' book.pruned.tsv)
    first=$(cut -f10 <<<"$line" | awk '{ print $3, $4 }')
    red=$(cut -f4 <<<"$line") draws=$(cut -f5 <<<"$line") black=$(cut -f6 <<<"$line")
    want_red=$(tr ';' '\n' <<<"$pgn" | awk -v f="$first" '$1 " " $2 == f && $3 == "1-0" { print $4 }')
    want_draw=$(tr ';' '\n' <<<"$pgn" | awk -v f="$first" '$1 " " $2 == f && $3 == "1/2-1/2" { print $4 }')
    want_black=$(tr ';' '\n' <<<"$pgn" | awk -v f="$first" '$1 " " $2 == f && $3 == "0-1" { print $4 }')
    [[ $red == "${want_red:-0}" && $draws == "${want_draw:-0}" && $black == "${want_black:-0}" ]] && ok ||
        bad "exit $i ($first): table $red/$draws/$black, PGN ${want_red:-0}/${want_draw:-0}/${want_black:-0}"
done
# The run's report has the same tallies per exit, and its page the table.
rep=$(jq -r '[.openings_played.rows[] | "\(.exit):\(.games):\(.red_wins):\(.draws):\(.black_wins)"] | sort | join(" ")' run1/report.json)
tab=$(awk -F'\t' 'NR > 1 { printf "%s%s:%s:%s:%s:%s", (NR > 2 ? " " : ""), $1, $3, $4, $5, $6 }' book.pruned.tsv)
[[ -n $rep && $rep == "$tab" ]] && ok || bad "report.json openings_played '$rep', prune table '$tab'"
grep -q 'Openings played: 3 of 3' run1/report.html && ok || bad "report.html has no openings table"
# The kept file: exactly the lines whose verdict keeps them, in the book's order.
want=$(awk -F'\t' 'NR > 1 && $9 ~ /^kept/ { print $10 }' book.pruned.tsv)
[[ $(cat book.pruned.epd) == "$want" ]] && ok || bad "kept lines: $(cat book.pruned.epd) (want $want)"
# With --min-games above the games played every exit is kept.
"$xq" book prune book.epd --from run1 --min-games 5 -o all.epd >/dev/null 2>&1
[[ $(wc -l <all.epd) -eq 3 && -f all.tsv ]] && ok || bad "min-games 5 keeps all 3: $(cat all.epd)"

out=$("$xq" book prune book.epd --from run1 other 2>&1)
rc=$?
[[ $rc -eq 1 ]] && grep -q 'other/journal.xqj: played another book (openings default ' <<<"$out" && ok ||
    bad "another book refused (exit $rc): $out"
out=$("$xq" book prune book.epd --from run1 --draw 0.9,0.1 2>&1)
rc=$?
[[ $rc -eq 2 ]] && grep -q -- "--draw wants MIN,MAX" <<<"$out" && ok || bad "bad --draw (exit $rc): $out"
out=$("$xq" book prune book.epd --from nowhere 2>&1)
rc=$?
[[ $rc -eq 1 ]] && grep -q 'nowhere: No such file or directory' <<<"$out" && ok ||
    bad "missing run (exit $rc): $out"

tally_end
