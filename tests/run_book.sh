#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Book jobs (kind = book) end to end, on small books at shallow depths:
# - one rank (a local worker thread) and three ranks under mpirun give byte-identical books
#   (EPD and move book), with no position twice and every score inside the window;
# - a book generated against an existing one shares no position with it;
# - a run whose worker rank is killed part-way, run again, resumes and ends with exactly the
#   book of an uninterrupted run;
# - malformed seed-book lines are reported with their line numbers, and the good ones used;
# - an unbalanced book (side-to-move window, family cap) has no duplicate or mirror pair and
#   figures that agree with its lines; scripts/bench-books.sh's table shows each run's counts.
set -u
xq=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
cat >"$work/book.ini" <<'INI'
[job]
kind = book
name = test-book
concurrency = 1
[book]
positions = 60
plies_min = 3
plies_max = 7
multipv = 5
select_depth = 2
margin = 50
verify_depth = 4
score_min = -50
score_max = 50
unit = 4
INI
pos() { cut -d' ' -f1-2 "$1"; } # board and side: one position

"$xq" run "$work/book.ini" --set job.concurrency=2 --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "one-rank run failed: $(tail -5 "$work/a.log")"
"${mpi[@]}" "$xq" run "$work/book.ini" --set output.dir="$work/b" >"$work/b.log" 2>&1 ||
    fail "three-rank run failed: $(tail -5 "$work/b.log")"
[[ $(wc -l <"$work/a/book.epd") -eq 60 ]] || fail "the book has $(wc -l <"$work/a/book.epd") positions, not 60"
cmp -s "$work/a/book.epd" "$work/b/book.epd" || fail "1 and 3 ranks gave different books"
cmp -s "$work/a/book.xqb" "$work/b/book.xqb" || fail "1 and 3 ranks gave different move books"
[[ -z $(pos "$work/b/book.epd" | sort | uniq -d) ]] || fail "a position appears twice"
# ce is from the side to move; the window is on Red's score.
awk '{ce = $6 + 0; red = $2 == "b" ? -ce : ce; if (red < -50 || red > 50) bad++}
     END {exit bad > 0}' "$work/b/book.epd" || fail "a score outside the window"
grep -q '"accepted": 60' "$work/b/result.json" || fail "result.json lacks the count"
grep -q '<svg' "$work/b/book.html" || fail "no histogram in the HTML report"
"$xq" book probe --book "$work/b/book.xqb" startpos | grep -q 'lines' || fail "probe failed"
"$xq" play -engine builtin name=a -engine builtin name=b -each depth=1 -rounds 2 -repeat \
    -openings file="$work/b/book.epd" order=random >"$work/play.log" 2>&1 ||
    fail "play with the book failed: $(tail -3 "$work/play.log")"
grep -q "Games: 4," "$work/play.log" || fail "play did not use the book: $(tail -3 "$work/play.log")"
grep -q "skipped" "$work/play.log" && fail "play skipped book lines"

# Extending: the existing book's positions are never emitted again.
"$xq" run "$work/book.ini" --set book.existing="$work/a/book.epd" --set book.positions=40 \
    --set output.dir="$work/c" >"$work/c.log" 2>&1 || fail "run with an existing book failed"
grep -q "60 positions of an existing book excluded" "$work/c.log" || fail "existing book not loaded"
[[ -z $(sort <(pos "$work/a/book.epd" | sort -u) <(pos "$work/c/book.epd" | sort -u) | uniq -d) ]] ||
    fail "a position of the existing book came again"

# Kill a worker rank part-way, run again: the same book as uninterrupted.
big=(--set book.positions=400 --set book.verify_depth=5)
"$xq" run "$work/book.ini" "${big[@]}" --set output.dir="$work/d" >"$work/d.log" 2>&1 ||
    fail "uninterrupted run failed"
"${mpi[@]}" "$xq" run "$work/book.ini" "${big[@]}" --set output.dir="$work/e" >"$work/e1.log" 2>&1 &
pid=$!
for _ in $(seq 3000); do
    [[ -s $work/e/journal.xqj ]] && [[ $(stat -c %s "$work/e/journal.xqj") -gt 3000 ]] && break
    sleep 0.02
done
killed=""
for p in $(pgrep -f "output.dir=$work/e"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
        kill -KILL "$p" && killed=$p
    fi
done
wait $pid 2>/dev/null
[[ -n $killed ]] || fail "could not find worker rank 1 to kill"
# Rank 0 may still write its outputs when the launcher ends the job (a partial book,
# result.json "complete": false); a run that beat the kill says true.
grep -q '"complete": true' "$work/e/result.json" 2>/dev/null && fail "the run finished before the kill"
"${mpi[@]}" "$xq" run "$work/book.ini" "${big[@]}" --set output.dir="$work/e" --resume >"$work/e2.log" 2>&1 ||
    fail "resumed run failed: $(tail -5 "$work/e2.log")"
n1=$(sed -n 's/^Resuming: \([0-9]*\) units\? journaled.*/\1/p' "$work/e2.log")
[[ ${n1:-0} -gt 0 ]] || fail "the rerun did not resume: $(head -3 "$work/e2.log")"
cmp -s "$work/d/book.epd" "$work/e/book.epd" || fail "the resumed book differs from the uninterrupted one"
cmp -s "$work/d/book.xqb" "$work/e/book.xqb" || fail "the resumed move book differs"

# Malformed seed-book lines: reported with line numbers, the good lines used.
printf '%s\n' 'startpos moves h2e2' '# a comment' 'not a position at all' \
    'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - ce 3; ply 0;' \
    'startpos moves h2e2 h2e2' >"$work/seeds.epd"
"$xq" run "$work/book.ini" --set book.seed_book="$work/seeds.epd" --set book.positions=10 \
    --set output.dir="$work/f" >"$work/f.log" 2>&1 || fail "seeded run failed: $(tail -3 "$work/f.log")"
grep -q "seeds.epd:3: " "$work/f.log" || fail "bad line 3 not reported: $(head -3 "$work/f.log")"
grep -q "seeds.epd:5: .*illegal" "$work/f.log" || fail "bad line 5 not reported"
grep -q "seeds.epd:[124]:" "$work/f.log" && fail "a good line was reported"
[[ $(wc -l <"$work/f/book.epd") -eq 10 ]] || fail "seeded book incomplete"

# An unbalanced book: the window on the side to move's score, a cap per family (here the
# first ply), no position in check, none twice, no two left-right mirrors; the variety
# figures of result.json and book.html agree with the EPD's own lines.
"$xq" run "$work/book.ini" --set book.score_view=side_to_move --set book.score_min=40 \
    --set book.score_max=200 --set book.family_plies=1 --set book.family_cap=5 \
    --set book.multipv=12 --set book.margin=150 --set output.dir="$work/u" >"$work/u.log" 2>&1 ||
    fail "unbalanced run failed: $(tail -5 "$work/u.log")"
awk '{ce = $6 + 0; if (ce < 40 || ce > 200) bad++} END {exit bad > 0}' "$work/u/book.epd" ||
    fail "a side-to-move score outside 40..200"
first() { sed -n 's/.* c0 "\([a-i0-9]*\).*/\1/p' "$work/u/book.epd"; }
[[ $(first | wc -l) -eq 60 ]] || fail "EPD lines without their moves (c0)"
[[ $(first | sort | uniq -c | sort -rn | awk 'NR == 1 {print $1}') -le 5 ]] ||
    fail "a first move has more than family_cap = 5 lines"
distinct=$(first | sort -u | wc -l)
jq -e ".first_moves_distinct == $distinct and .families == $distinct and .family_capped > 0 and
       .accepted == 60 and .in_check >= 0 and .mirrors >= 0 and .score_view == \"side_to_move\"" \
    "$work/u/result.json" >/dev/null || fail "result.json variety figures disagree ($distinct first moves)"
grep -q "<tr id=\"first_moves\"><th>distinct first moves</th><td>$distinct</td>" "$work/u/book.html" ||
    fail "book.html lacks the first-move count $distinct"
grep -q "verification score (cp, side to move&#39;s view)" "$work/u/book.html" || fail "the histogram's x axis is not labelled with the side to move's view"
mirror() { awk '{n = split($1, r, "/"); b = ""
    for (i = 1; i <= n; i++) {m = ""; for (k = length(r[i]); k > 0; k--) m = m substr(r[i], k, 1)
        b = b (i > 1 ? "/" : "") m}
    print b, $2}' "$1"; }
[[ -z $(cut -d' ' -f1-2 "$work/u/book.epd" | sort | uniq -d) ]] || fail "a position twice"
[[ -z $(comm -12 <(cut -d' ' -f1-2 "$work/u/book.epd" | sort) \
    <(mirror "$work/u/book.epd" | awk '{print $1, $2}' | sort) |
    while read -r b s; do m=$(echo "$b $s" | mirror /dev/stdin); [[ $m != "$b $s" ]] && echo "$b"; done) ]] ||
    fail "a position and its mirror are both in the book"

# scripts/bench-books.sh: its table shows each run's own counts (a few games, both books).
OUT="$work/bb" XQ="$xq" bash "$(dirname "$0")/../scripts/bench-books.sh" 4 300 1 >"$work/bb.txt" 2>&1 ||
    fail "bench-books.sh failed: $(tail -3 "$work/bb.txt")"
for book in balanced unbalanced; do
    col=$([[ $book == balanced ]] && echo 3 || echo 4)
    want=$(jq -r '"\(.wins) / \(.losses) / \(.draws)"' "$work/bb/$book/result.json")
    got=$(awk -F'|' -v c="$col" '$2 ~ /W \/ L \/ D/ {gsub(/^ +| +$/, "", $c); print $c}' "$work/bb.txt")
    [[ $got == "$want" ]] || fail "bench-books.sh shows $got for $book, result.json $want"
    grep -q "builtin:$book" "$work/bb/$book.ini" || fail "the $book run did not use builtin:$book"
done
grep -q "| games  *|  *4 |  *4 |" "$work/bb.txt" || fail "bench-books.sh games row: $(cat "$work/bb.txt")"

echo "books: 1 and 3 ranks identical, existing excluded, resume after SIGKILL ($n1 units journaled) identical"
echo "1 passed, 0 failed"
