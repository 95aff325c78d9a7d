#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Datagen jobs (kind = datagen) end to end, small and shallow, on 3 MPI ranks:
# - the run reaches its target: the file holds exactly `positions` records, every block's
#   checksum and every board good (nnue info), no position twice, result.json and the
#   report agree;
# - the filters: every position seen is kept or counted under one filter (result.json and the
#   report), no kept position is in check or has a capture for best move (nnue info); with
#   those two off and the early-ply and WDL filters on, the first two count nothing, the
#   others something, and the file holds checks and captures; every game played on 1 process
#   and on 3 ranks keeps the same positions and counts, in the same file byte for byte;
# - nnue export writes one well-formed fen/move/score/ply/result/e block per record, and with
#   --format bin 72-byte records whose score, move and result are the text's;
# - a run killed with SIGKILL part-way and resumed with --resume ends with a whole file of
#   exactly the target (rewritten from the journal), still without a repeated position, and
#   byte for byte the file of an uninterrupted run (units commit in unit order);
# - a damaged file is refused by nnue info (exit 2, the reason named), and a malformed job
#   (two engines, no depth or nodes) is refused with its reason.
set -u
xq=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 -np 3)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
cat >"$work/dg.ini" <<'INI'
[job]
kind = datagen
name = test-datagen
concurrency = 1
[engine e]
option.Hash = 4
[time]
nodes = 400
[adjudication]
maxplies = 160
[datagen]
positions = 300
random_plies = 6
min_ply = 4
INI
# checks DIR COUNT: the file's count, checks and dedup; result.json's count.
checks() {
    "$xq" nnue info "$1/positions.xqp" >"$work/info.log" 2>&1 || fail "nnue info: $(cat "$work/info.log")"
    grep -q "^records:   $2," "$work/info.log" || fail "not $2 records: $(cat "$work/info.log")"
    grep -q "^repeated:  0 " "$work/info.log" || fail "a repeated position: $(cat "$work/info.log")"
    grep -q "\"positions\": $2," "$1/result.json" || fail "result.json: $(cat "$1/result.json")"
    grep -q '"state": "complete"' "$1/result.json" || fail "result.json not complete"
}

"${mpi[@]}" "$xq" run "$work/dg.ini" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "three-rank run failed: $(tail -5 "$work/a.log")"
checks "$work/a" 300
grep -q '"positions_per_s_per_core"' "$work/a/report.json" || fail "no throughput in the report"
# filters DIR: seen = kept + every skip, in result.json and in the report alike.
filters() {
    local sum='.filters | .seen == ([.kept, .opening, .unscored, .in_check, .capture, .early, .wdl, .overflow] | add)'
    [[ $(jq "$sum" "$1/result.json") == true ]] || fail "filters do not add up: $(jq -c .filters "$1/result.json")"
    [[ $(jq -Sc .filters "$1/result.json") == $(jq -Sc .filters "$1/report.json") ]] ||
        fail "result.json and the report's filters differ"
    [[ $(jq '.filters.kept >= .records' "$1/result.json") == true ]] || fail "fewer kept than records"
}
filters "$work/a"
[[ $(jq '.filters | .in_check > 0 and .capture > 0 and .opening > 0 and .early == 0 and .wdl == 0' "$work/a/result.json") == true ]] ||
    fail "default filters' counts: $(jq -c .filters "$work/a/result.json")"
grep -q "^filters:   0 in check, 0 with a capture for best move$" "$work/info.log" ||
    fail "a kept position in check or with a capture: $(grep filters: "$work/info.log")"
grep -q "^Filters: [0-9]* seen, [0-9]* kept; skipped: opening [0-9]*, unscored" "$work/a.log" ||
    fail "no filters' line in the summary: $(tail -4 "$work/a.log")"
# The anchors' filters off, the soft early plies and WDL on: what they let through is in the file.
"${mpi[@]}" "$xq" run "$work/dg.ini" --set output.dir="$work/f" --set datagen.skip_capture=false \
    --set datagen.skip_in_check=false --set datagen.skip_early_plies=30 \
    --set datagen.skip_wdl=100 >"$work/f.log" 2>&1 || fail "filters run failed: $(tail -5 "$work/f.log")"
checks "$work/f" 300
filters "$work/f"
[[ $(jq '.filters | .in_check == 0 and .capture == 0 and .early > 0 and .wdl > 0' "$work/f/result.json") == true ]] ||
    fail "switched filters' counts: $(jq -c .filters "$work/f/result.json")"
grep -q "^filters:   [1-9][0-9]* in check, [1-9][0-9]* with a capture for best move$" "$work/info.log" ||
    fail "no position in check or with a capture with the filters off: $(grep filters: "$work/info.log")"
# Every game played (max_games, a target out of reach): one process and 3 ranks keep the same
# positions and count the same skips, the soft early-ply filter included.
every=(--set datagen.positions=100000 --set datagen.max_games=6 --set datagen.skip_early_plies=30
       --set datagen.skip_wdl=100 --set datagen.skip_capture=false)
"$xq" run "$work/dg.ini" "${every[@]}" --set output.dir="$work/e1" >"$work/e1.log" 2>&1 ||
    fail "one-process run failed: $(tail -3 "$work/e1.log")"
"${mpi[@]}" "$xq" run "$work/dg.ini" "${every[@]}" --set output.dir="$work/e3" >"$work/e3.log" 2>&1 ||
    fail "3-rank run failed: $(tail -3 "$work/e3.log")"
[[ $(jq -c .filters "$work/e1/result.json") == $(jq -c .filters "$work/e3/result.json") ]] ||
    fail "filters differ on 1 and 3 ranks: $(jq -c .filters "$work/e1/result.json" "$work/e3/result.json")"
for r in e1 e3; do "$xq" nnue export "$work/$r/positions.xqp" | paste - - - - - - | sort >"$work/$r.sorted"; done
[[ -s $work/e1.sorted ]] && cmp -s "$work/e1.sorted" "$work/e3.sorted" ||
    fail "1 and 3 ranks kept other positions"
# Units commit in unit order: the files are the same byte for byte, not only as sets.
cmp -s "$work/e1/positions.xqp" "$work/e3/positions.xqp" || fail "1 and 3 ranks wrote different files"
# The plot starts at the session's start (minute 0, no position yet) and ends at the target:
# a run short enough for one report still draws a line.
[[ $(jq -c '[.plots[] | select(.id == "positions") | .series[0] | .x[0], .y[0], .y[-1]]' "$work/a/report.json") == "[0,0,300]" ]] ||
    fail "the positions plot does not run from minute 0: $(jq -c '.plots[0].series' "$work/a/report.json" | head -c 300)"

"$xq" nnue export "$work/a/positions.xqp" -o "$work/a.txt" >/dev/null || fail "nnue export failed"
awk 'BEGIN {want = "fen"}
     {k = $1
      if (k != want) {print "line " NR ": " k " where " want " belongs"; bad = 1; exit 1}
      if (k == "fen" && NF != 7) bad = 1
      if (k == "move" && $2 !~ /^[a-i][0-9][a-i][0-9]$/) bad = 1
      if (k == "score" && $2 !~ /^-?[0-9]+$/) bad = 1
      if (k == "ply" && $2 !~ /^[0-9]+$/) bad = 1
      if (k == "result" && $2 != "1" && $2 != "0" && $2 != "-1") bad = 1
      if (bad) {print "line " NR ": " $0; exit 1}
      want = k == "fen" ? "move" : k == "move" ? "score" : k == "score" ? "ply" : \
             k == "ply" ? "result" : k == "result" ? "e" : "fen"
      n += k == "e"}
     END {if (!bad && want != "fen") {print "truncated block"; exit 1}
          if (!bad && n != 300) {print n " blocks"; exit 1}}' "$work/a.txt" ||
    fail "nnue export's text does not parse"

# --format bin: 72 bytes a record, Fairy-Stockfish's PackedSfenValue; its score, move (on the
# 12-file board, from << 7 | to) and result are the text's, record by record.
"$xq" nnue export "$work/a/positions.xqp" --format bin -o "$work/a.bin" >/dev/null || fail "bin export failed"
[[ $(stat -c %s "$work/a.bin") -eq $((300 * 72)) ]] || fail "bin: $(stat -c %s "$work/a.bin") bytes, not 300 x 72"
awk '$1 == "move" {f = index("abcdefghi", substr($2, 1, 1)) - 1; r = substr($2, 2, 1)
                   t = index("abcdefghi", substr($2, 3, 1)) - 1; u = substr($2, 4, 1)
                   m = (r * 12 + f) * 128 + u * 12 + t}
     $1 == "score" {sc = $2 < 0 ? $2 + 65536 : $2}
     $1 == "result" {print sc, m, $2 < 0 ? $2 + 256 : $2}' "$work/a.txt" >"$work/text.fields"
od -An -v -tu1 -w72 "$work/a.bin" |
    awk '{print $65 + 256 * $66, $67 + 256 * $68, $71; if ($72 != 0) exit 1}' >"$work/bin.fields" ||
    fail "bin: a padding byte is not 0"
[[ $(wc -l <"$work/bin.fields") -eq 300 ]] || fail "bin: not 300 records read back"
cmp -s "$work/text.fields" "$work/bin.fields" ||
    fail "bin and text differ: $(diff "$work/text.fields" "$work/bin.fields" | head -4)"
# Where Fairy-Stockfish is installed: the bin's first 40 moves, read on its 12-file board and
# written in its notation (ranks from 1), are legal in their positions by its own rules (it
# plays a legal move, so the side to move changes; it stops at an illegal one).
fsf=/usr/games/fairy-stockfish
if [[ -x $fsf ]]; then
    grep '^fen ' "$work/a.txt" | head -40 | cut -d' ' -f2- >"$work/fsf.fens"
    head -40 "$work/bin.fields" | awk '{f = int($2 / 128); t = $2 % 128
        printf "%c%d%c%d\n", 97 + f % 12, int(f / 12) + 1, 97 + t % 12, int(t / 12) + 1}' >"$work/fsf.moves"
    { echo "setoption name UCI_Variant value xiangqi"
      paste -d'|' "$work/fsf.fens" "$work/fsf.moves" |
          awk -F'|' '{print "position fen " $1 " moves " $2; print "d"}'
      echo quit; } | timeout 60 "$fsf" 2>/dev/null | grep '^Fen: ' | awk '{print $3}' >"$work/fsf.sides"
    awk '{print $2 == "w" ? "b" : "w"}' "$work/fsf.fens" | cmp -s - "$work/fsf.sides" ||
        fail "Fairy-Stockfish does not play the bin's moves: $(paste "$work/fsf.fens" "$work/fsf.moves" "$work/fsf.sides" | head -3)"
fi
"$xq" nnue export "$work/a/positions.xqp" --format csv -o "$work/x" >"$work/x.log" 2>&1
[[ $? -eq 2 ]] && grep -q "expected text or bin" "$work/x.log" || fail "--format csv: $(cat "$work/x.log")"

# Killed part-way (SIGKILL to every rank) after the file was checkpointed at least once (a
# report every second closes it whole, then appends in place), then resumed: a whole file of
# the target, rewritten from the journal.
# 6000 positions at 1500 nodes a move last several seconds even on an idle machine, so the
# kill (at the first checkpoint, after 1 s) comes well before the end.
kill_run=(--set datagen.positions=6000 --set time.nodes=1500 --set report.interval=1)
setsid "${mpi[@]}" "$xq" run "$work/dg.ini" "${kill_run[@]}" \
    --set output.dir="$work/k" >"$work/k1.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    [[ -f "$work/k/positions.xqp" && $(stat -c %s "$work/k/journal.xqj") -gt 20000 ]] && break
    sleep 0.05
done
kill -9 -- "-$pid" 2>/dev/null
wait "$pid" 2>/dev/null
# mpirun is gone, but a killed rank can outlive it for a moment and still hold the output
# directory's lock ("in use by another xqforge run"): wait until no rank of it is left.
for _ in $(seq 200); do
    pgrep -f "output.dir=$work/k" >/dev/null || break
    sleep 0.05
done
grep -q "^6000/6000 positions" "$work/k1.log" && fail "the run ended before the kill"
[[ -f "$work/k/positions.xqp" ]] || fail "no checkpoint of the file before the kill"
"${mpi[@]}" "$xq" run "$work/dg.ini" "${kill_run[@]}" --set output.dir="$work/k" \
    --resume >"$work/k2.log" 2>&1 ||
    fail "the resumed run failed: $(grep -v "^ *$" "$work/k2.log" | head -8)"
grep -q "^Resuming: [1-9][0-9]* units\? journaled, [1-9][0-9]* positions\? rewritten" "$work/k2.log" ||
    fail "the resume did not rewrite the journal's positions: $(head -5 "$work/k2.log")"
checks "$work/k" 6000
[[ -e "$work/k/positions.xqp.tmp" ]] && fail "a temporary file is left"
# ... and it is the file of an uninterrupted run, byte for byte.
"${mpi[@]}" "$xq" run "$work/dg.ini" "${kill_run[@]}" --set output.dir="$work/u" >"$work/u.log" 2>&1 ||
    fail "the uninterrupted run failed: $(tail -3 "$work/u.log")"
cmp -s "$work/k/positions.xqp" "$work/u/positions.xqp" ||
    fail "the killed and resumed run's file differs from the uninterrupted run's"

# A damaged file is refused with the reason; so are malformed jobs.
cp "$work/a/positions.xqp" "$work/bad.xqp"
printf '\x55' | dd of="$work/bad.xqp" bs=1 seek=100 conv=notrunc status=none
"$xq" nnue info "$work/bad.xqp" >"$work/bad.log" 2>&1
[[ $? -eq 2 ]] || fail "a damaged file was not refused with exit 2: $(cat "$work/bad.log")"
grep -qi "checksum\|block" "$work/bad.log" || fail "no reason for the damage: $(cat "$work/bad.log")"
printf '[engine f]\n' >>"$work/bad.ini"
cat "$work/dg.ini" "$work/bad.ini" >"$work/two.ini"
"$xq" run "$work/two.ini" --set output.dir="$work/t" >"$work/t.log" 2>&1
[[ $? -eq 2 ]] || fail "a job with two engines was not refused"
grep -q "plays itself (found 2 engines)" "$work/t.log" || fail "no reason: $(cat "$work/t.log")"
sed 's/^nodes = 400$/tc = 10+0.1/' "$work/dg.ini" >"$work/clock.ini"
"$xq" run "$work/clock.ini" --set output.dir="$work/t" >"$work/t.log" 2>&1
[[ $? -eq 2 ]] || fail "a job without depth or nodes was not refused"
grep -q "fixed depth or node count" "$work/t.log" || fail "no reason: $(cat "$work/t.log")"
echo "1 passed, 0 failed"
