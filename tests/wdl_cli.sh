#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# xqforge wdl fit|eval on a real (tiny) game run, their errors named (no journal, a file that
# is not a journal, a damaged journal, too few samples, a run without games, bad arguments),
# and a book job with a draw-rate window: every kept exit's model draw rate (recomputed here
# from its ce and the material of its board) lies in the window, and the window refused some
# candidates that the cp window alone would have kept.
set -u
xq=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
data=$(cd "$(dirname "$0")/data" && pwd)
jobs=$(cd "$(dirname "$0")/../jobs" && pwd)
. "$(dirname "$0")/tally_lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
check() { # description, expected exit code, expected text (regex) in output, command...
    local what=$1 code=$2 pattern=$3
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [[ $rc -ne $code ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
        bad "$what: exit $rc (expected $code), output: $(head -5 <<<"$out")"
    else
        ok
    fi
}
cd "$dir" || exit 1

games() { # output dir, rounds, max plies
    "$xq" run "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds="$2" \
        --set time.nodes=300 --set adjudication.maxplies="$3" --set output.dir="$1" \
        >"$1.log" 2>&1 || bad "run $1 failed: $(tail -3 "$1.log")"
}
games g1 3 120
games few 1 16

check "fit a run" 0 "^[0-9]+ samples from 6 games of 1 run, material" \
    "$xq" wdl fit g1 -o m.json --degree 1
check "the model file: degree, samples, the run and its journal's hash" 0 \
    '^1 true "g1" true$' jq -r '"\(.degree) \(.samples > 200) \(.sources[0].run | tojson) \(.sources[0].journal_hash | test("^[0-9a-f]{16}$"))"' m.json
check "eval: W D L" 0 "^W 0\.[0-9]{4} D 0\.[0-9]{4} L 0\.[0-9]{4} \(score 0 cp, material 94" \
    "$xq" wdl eval m.json 0 94
out=$("$xq" wdl eval m.json 0 60)
[[ $(awk '{ print $2 == $6 }' <<<"$out") == 1 ]] && ok || bad "eval at 0: W != L: $out"

mkdir empty
printf 'not a journal at all, just some bytes\n' >bad.xqj
cp g1/journal.xqj damaged.xqj
size=$(stat -c %s damaged.xqj)
printf '\xff\xff\xff\xff' | dd of=damaged.xqj bs=1 seek=$((size / 2)) conv=notrunc status=none
check "fit: a directory without a journal" 2 "^xqforge wdl fit: empty: no journal \(empty/journal.xqj: No such file" \
    "$xq" wdl fit empty -o x.json
check "fit: a missing run" 2 "^xqforge wdl fit: nope: No such file or directory" \
    "$xq" wdl fit nope -o x.json
check "fit: a file that is not a journal" 2 "^xqforge wdl fit: bad.xqj: not a journal" \
    "$xq" wdl fit bad.xqj -o x.json
check "fit: a damaged journal" 2 "^xqforge wdl fit: damaged.xqj: .*(record|byte)" \
    "$xq" wdl fit damaged.xqj -o x.json
check "fit: too few samples" 2 "^xqforge wdl fit: [0-9]+ samples: a fit needs at least 200" \
    "$xq" wdl fit few -o x.json
check "fit: no -o" 2 "no -o MODEL.json" "$xq" wdl fit g1
check "fit: a bad degree" 2 "--degree 4: give 0..3" "$xq" wdl fit g1 --degree 4 -o x.json
[[ ! -e x.json ]] && ok || bad "a failed fit wrote x.json"
check "eval: a missing model" 2 "^xqforge wdl eval: nope.json: No such file" \
    "$xq" wdl eval nope.json 0 94
check "eval: material out of range" 2 "MATERIAL 95: give 0..94" "$xq" wdl eval m.json 0 95
check "eval: a score that is not a number" 2 "SCORE 1x: not a number" "$xq" wdl eval m.json 1x 94
printf '{"kind": "wdl_model", "schema": 1, "degree": 3, "a": [1, 2]}\n' >short.json
check "eval: a model with a short array" 2 '"a" is not an array of degree\+1 = 4 numbers' \
    "$xq" wdl eval short.json 0 94

# The book job's draw-rate window (model: a(m) = 100 m + 60, b(m) = 20 m + 30).
cat >book.ini <<'INI'
[job]
kind = book
name = draw-window
concurrency = 2
[book]
positions = 30
plies_min = 3
plies_max = 7
multipv = 5
select_depth = 2
margin = 50
verify_depth = 4
score_min = -150
score_max = 150
unit = 4
INI
model=$data/wdl-model.json
"$xq" run book.ini --set book.wdl_model="$model" --set book.draw_min=0.8 \
    --set book.draw_max=0.9 --set output.dir=bk >bk.log 2>&1 || bad "book run: $(tail -3 bk.log)"
grep -q "^Draw-rate window 0.8..0.9 besides the cp window: model $model (degree 1" bk.log && ok ||
    bad "book run: no draw-window line: $(head -3 bk.log)"
[[ $(jq '.accepted == 30 and .draw_window.outside > 0 and .draw_window.outside <= .outside' \
    bk/result.json) == true ]] && ok || bad "result.json: $(jq -c '[.accepted, .outside, .draw_window]' bk/result.json)"
n=0
while read -r board side _ _ _ ce _; do
    ce=${ce%;}
    mat=$(awk -v b="$board" 'BEGIN { w["r"] = 9; w["n"] = 4; w["h"] = 4; w["c"] = 4; w["b"] = 2;
        w["e"] = 2; w["a"] = 2; w["p"] = 1; t = 0
        for (i = 1; i <= length(b); i++) t += w[tolower(substr(b, i, 1))]; print t }')
    d=$("$xq" wdl eval "$model" "$ce" "$mat" | awk '{ print $4 }')
    awk -v d="$d" 'BEGIN { exit !(d >= 0.8 && d <= 0.9) }' && n=$((n + 1)) ||
        bad "exit $board $side (ce $ce, material $mat): draw rate $d outside 0.8..0.9"
done <bk/book.epd
[[ $n -eq 30 ]] && ok || bad "$n of 30 exits checked"
check "the book job's journal has no games" 2 "bk/journal.xqj: no games in the journal" \
    "$xq" wdl fit bk -o x.json
check "a draw window without a model" 2 "draw_min/draw_max need a model" \
    "$xq" run book.ini --set book.draw_min=0.5 --set output.dir=nomodel
check "a draw window upside down" 2 "draw_min \(0.9\) is above draw_max \(0.8\)" \
    "$xq" run book.ini --set book.wdl_model="$model" --set book.draw_min=0.9 \
    --set book.draw_max=0.8 --set output.dir=upside
check "a model that is not one" 1 "book.wdl_model: .*short.json: \"a\" is not an array" \
    "$xq" run book.ini --set book.wdl_model=short.json --set output.dir=badmodel

tally_end
