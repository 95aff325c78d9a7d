#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [verify] after a Texel fit: a small fit on 2 MPI ranks with verify.* overrides (which ask for
# the section) ends with an SPRT of the fitted weights against the defaults, both engines on
# the linear evaluation the fit tuned; its verdict is on the console and in report.json and
# report.html, its own files in output.dir/verify.
set -u
xq=$(realpath "$1") job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

"$xq" play -engine name=a -engine name=b option.horse_mg=230 -each nodes=300 option.UseNNUE=false \
    -rounds 12 -repeat -openings order=random -maxplies 200 -pgnout file="$work/g.pgn" \
    >"$work/play.log" 2>&1 || fail "play: $(tail -3 "$work/play.log")"
"$xq" texel extract -o "$work/t.xqd" "$work/g.pgn" >/dev/null 2>&1 || fail "extract"
out=$work/t
mpirun --oversubscribe --bind-to none -np 2 "$xq" run "$job" --set texel.data="$work/t.xqd" \
    --set texel.epochs=5 --set output.dir="$out" --set verify.nodes=300 \
    --set verify.max_games=6 >"$work/1.log" 2>&1 || fail "run: $(tail -5 "$work/1.log")"
line=$(grep "^Verify (tuned vs start): " "$work/1.log") || fail "no verdict line: $(tail -3 "$work/1.log")"
grep -Eq ": (H0 accepted|H1 accepted|limit reached): LLR .*, 6 games, Elo .* at 300 nodes \(elo0 0, elo1 2\)$" <<<"$line" ||
    fail "verdict line: $line"
python3 - "$out" <<'PY' || fail "the verdict or the SPRT's engines are wrong"
import json, sys
out = sys.argv[1]
v = json.load(open(out + "/report.json"))["verify"]
sub = json.load(open(out + "/verify/result.json"))
assert v["games"] == sub["games"] == 6 and v["llr"] == sub["llr"], (v, sub)
eng = {e["name"]: e for e in json.load(open(out + "/verify/report.json"))["job"]["engines"]}
assert eng["tuned"]["options"] == {"UseNNUE": "false"} == eng["start"]["options"], eng
PY
grep -q "Verify (tuned vs start)</h2>" "$out/report.html" || fail "the page has no verdict"
echo "$line"
echo "1 passed, 0 failed"
