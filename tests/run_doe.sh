#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Drop-out expansion books (kind = doe) end to end, on a small tree at a shallow depth:
# - one process (local search threads) and three ranks under mpirun grow the same tree, byte
#   for byte (tree.txt, exits, move book, BOOK.DAT);
# - a run killed with SIGKILL three times (rank 0, then worker rank 1, then rank 0 again) and
#   resumed each time ends with exactly the tree and books of the uninterrupted run;
# - the exits hold no position twice, no mirror pair, none in check, every value in the
#   window; result.json's counts agree with tree.txt and the page's; BOOK.DAT probes like the
#   move book;
# - a tree grown from a [doe] root starts there, and its journal resumes only with that root.
set -u
xq=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
cat >"$work/doe.ini" <<'INI'
[job]
kind = doe
name = test-doe
concurrency = 1
[doe]
nodes = 4000
round = 8
depth = 3
plies_max = 8
plies_min = 2
score_min = -80
score_max = 80
INI
files=(tree.txt book.epd book.xqb BOOK.DAT)
same() { # same DIR1 DIR2 WHAT
    for f in "${files[@]}"; do
        cmp -s "$1/$f" "$2/$f" || fail "$3: $f differs"
    done
}
"$xq" run "$work/doe.ini" --set job.concurrency=2 --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "one-process run failed: $(tail -5 "$work/a.log")"
"${mpi[@]}" "$xq" run "$work/doe.ini" --set output.dir="$work/b" >"$work/b.log" 2>&1 ||
    fail "three-rank run failed: $(tail -5 "$work/b.log")"
same "$work/a" "$work/b" "1 process and 3 ranks"

# The figures: result.json against tree.txt, the exits against their rules.
r=$work/b/result.json t=$work/b/tree.txt
[[ $(jq .nodes "$r") == $(wc -l <"$t") ]] || fail "result.json's nodes $(jq .nodes "$r") != tree.txt's $(wc -l <"$t")"
[[ $(jq .expansions "$r") == $(awk '$4 == "E"' "$t" | wc -l) ]] || fail "expansions disagree with tree.txt"
(($(jq .scored "$r") >= 4000)) || fail "scored $(jq .scored "$r") below the budget"
[[ $(jq .exits "$r") == $(wc -l <"$work/b/book.epd") ]] || fail "exits disagree with book.epd"
[[ $(jq -c '.doe | [.nodes, .scored, .expansions, .transpositions]' "$work/b/report.json") == \
    "$(jq -c '[.nodes, .scored, .expansions, .transpositions]' "$r")" && $(jq -r .state "$work/b/report.json") == complete ]] ||
    fail "report.json disagrees with result.json: $(jq -c .doe "$work/b/report.json")"
grep -q '<svg' "$work/b/report.html" || fail "no plot on the page"
(($(jq .exits "$r") > 20)) || fail "only $(jq .exits "$r") exits"
(($(jq .transpositions "$r") > 0)) || fail "no transposition merged"
[[ -z $(cut -d' ' -f1-2 "$work/b/book.epd" | sort | uniq -d) ]] || fail "an exit appears twice"
awk '{ce = $6 + 0; red = $2 == "b" ? -ce : ce; if (red < -80 || red > 80) bad++} END {exit bad > 0}' \
    "$work/b/book.epd" || fail "an exit outside the window"
"$xq" book probe --book "$work/b/book.xqb" startpos >"$work/p1" || fail "probe of book.xqb failed"
"$xq" book probe --book "$work/b/BOOK.DAT" startpos >"$work/p2" || fail "probe of BOOK.DAT failed"
[[ $(grep -c '^  ' "$work/p1") -gt 3 ]] || fail "the move book has few root moves: $(cat "$work/p1")"
diff <(awk '/^  /{print $1}' "$work/p1" | sort) <(awk '/^  /{print $1}' "$work/p2" | sort) >/dev/null ||
    fail "BOOK.DAT's root moves differ from the move book's"
"$xq" play -engine builtin name=a -engine builtin name=b -each depth=1 -rounds 2 -repeat \
    -openings file="$work/b/book.epd" order=random >"$work/play.log" 2>&1 ||
    fail "play with the exits failed: $(tail -3 "$work/play.log")"
grep -q "skipped" "$work/play.log" && fail "play skipped exit lines"

# [doe] root: the tree grows from that position; the exits' plies count from it; a journal
# of another root is refused.
root='rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1'
"$xq" run "$work/doe.ini" --set output.dir="$work/r" --set doe.nodes=300 --set "doe.root=$root" \
    >"$work/r.log" 2>&1 || fail "the run from a root failed: $(tail -5 "$work/r.log")"
[[ $(jq -r .root "$work/r/result.json") == "${root% 1 1}" ]] ||
    fail "result.json's root is $(jq -r .root "$work/r/result.json")"
[[ $(head -1 "$work/r/tree.txt" | cut -d' ' -f8-11) == "${root% 1 1}" ]] ||
    fail "tree.txt's first node is not the root: $(head -1 "$work/r/tree.txt" | cut -c1-120)"
awk '{for (i = 1; i < NF; i++) if ($i == "ply") p = $(i + 1) + 0; if (p < 2 || p > 8) bad++} END {exit bad > 0}' \
    "$work/r/book.epd" || fail "an exit's ply outside 2..8 from the root"
"$xq" run "$work/doe.ini" --set output.dir="$work/r" --set doe.nodes=300 --resume >"$work/r2.log" 2>&1 &&
    fail "a resume without the root was accepted"
grep -q "doe.root" "$work/r2.log" || fail "the refused resume does not name doe.root: $(tail -2 "$work/r2.log")"

# Three kills, three resumes: the uninterrupted tree.
kill_rank() { # kill_rank RANK BYTES: SIGKILL that rank once the journal passes BYTES
    "${mpi[@]}" "$xq" run "$work/doe.ini" --set output.dir="$work/e" --set job.resume=auto >>"$work/e.log" 2>&1 &
    local pid=$! killed="" end=$((SECONDS + 300))
    # Time, not a count of polls: on a loaded machine a poll (a fork) and mpirun's start are slow.
    while (($(stat -c %s "$work/e/journal.xqj" 2>/dev/null || echo 0) <= $2)); do
        kill -0 $pid 2>/dev/null || fail "the run ended before its kill of rank $1: $(tail -5 "$work/e.log")"
        ((SECONDS < end)) || fail "the journal did not pass $2 bytes in 300 s: $(tail -5 "$work/e.log")"
        sleep 0.01
    done
    for p in $(pgrep -f "output.dir=$work/e"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            kill -KILL "$p" && killed=$p
        fi
    done
    wait $pid 2>/dev/null
    [[ -n $killed ]] || fail "could not find rank $1 to kill: $(pgrep -af "output.dir=$work/e" | head -5; tail -5 "$work/e.log")"
}
size=$(stat -c %s "$work/b/journal.xqj")
kill_rank 0 $((size / 5))
kill_rank 1 $((2 * size / 5))
kill_rank 0 $((3 * size / 5))
(($(stat -c %s "$work/e/journal.xqj") < size)) || fail "the kills came after the run's end"
"${mpi[@]}" "$xq" run "$work/doe.ini" --set output.dir="$work/e" --resume >"$work/e2.log" 2>&1 ||
    fail "the last resume failed: $(tail -5 "$work/e2.log")"
grep -q '^Resuming: [1-9]' "$work/e2.log" || fail "the rerun did not resume: $(head -3 "$work/e2.log")"
(($(grep -c "^Resuming: [1-9]" "$work/e.log") >= 2)) || fail "the killed runs did not resume: $(grep -c "^Resuming" "$work/e.log") resumes"
same "$work/a" "$work/e" "killed three times and resumed"
echo "doe: 1 process and 3 ranks identical ($(jq .nodes "$r") nodes, $(jq .exits "$r") exits), three SIGKILLs and resumes identical"
echo "1 passed, 0 failed"
