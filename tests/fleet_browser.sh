#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet's page in a real headless Chromium: a queue with a finished test, a stopped one
# and a queued one (played by a one-rank fleet without mpirun); Chromium loads
# QUEUE/index.html from disk with networking off, and the rendered DOM must hold both
# sections, a row per test with its state and a link to its report, the finished test's
# Elo text and LLR (as index.json says them), and the page's self-refresh. A screenshot is
# kept in WORKDIR. usage: fleet_browser.sh XQFORGE JOBS WORKDIR; 77 when chromium is missing.
set -euo pipefail
xq=$1 jobs=$2 work=$3
source "$(dirname "$0")/chromium.sh"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
rm -rf "$work"
mkdir -p "$work"
q=$work/q
"$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=3 --name "weights <a&b>" >/dev/null
"$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=2 --name stopped >/dev/null
"$xq" stop "$q" 0002 >/dev/null
"$xq" fleet "$q" --until-empty >"$work/fleet.out" 2>&1 || fail "the fleet failed: $(tail -5 "$work/fleet.out")"
"$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=2 --priority 4 --name waiting >/dev/null
page=$q/index.html
chrome --dump-dom "file://$page" >"$work/dom.html" || fail "chromium could not load the page"
dom=$work/dom.html
grep -q '<h2>Running and queued</h2>' "$dom" || fail "no running/queued section"
grep -q '<h2>Ended</h2>' "$dom" || fail "no ended section"
grep -q '<tr class="queued"><td><a href="tests/0003/report.html">0003</a></td><td>waiting</td>' "$dom" ||
    fail "the queued test's row"
grep -q '<tr class="finished"><td><a href="tests/0001/report.html">0001</a></td><td>weights &lt;a&amp;b&gt;</td>' "$dom" ||
    fail "the finished test's row (its name escaped)"
grep -q '<tr class="stopped"><td><a href="tests/0002/report.html">0002</a></td><td>stopped</td>' "$dom" ||
    fail "the stopped test's row"
elo=$(jq -r '.tests[] | select(.id == "0001") | .result.elo_text' "$q/index.json")
llr=$(jq -r '.tests[] | select(.id == "0001") | .result.llr * 100 | round / 100' "$q/index.json")
grep -qF "<td>$elo</td>" "$dom" || fail "the finished test's Elo '$elo' is not on the page"
printf -v llr2 '%.2f' "$llr"
grep -q "</span></span> $llr2 (" "$dom" || fail "the finished test's LLR $llr2 is not on the page"
grep -q 'http-equiv="refresh"' "$dom" || fail "the page does not refresh itself"
chrome --window-size=1400,700 --screenshot="$work/fleet.png" "file://$page" >/dev/null ||
    fail "no screenshot"
[[ $(head -c 8 "$work/fleet.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "not a PNG"
echo "fleet_browser: rendered; screenshot $work/fleet.png"
