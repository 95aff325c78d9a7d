#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report in a real headless Chromium: a short run of the default job writes
# report.html; Chromium loads it from disk with networking off, and the rendered DOM must
# hold the title, the summary tables and the three SVG plots (LLR with its two bounds,
# Elo with its band, terminations), measured in the page as tests/report_plots.sh does.
# Screenshots at desktop and phone width and a PDF print
# are kept in WORKDIR (a CI artifact, not committed). usage: report_browser.sh XQFORGE
# WORKDIR. Exit 77 (skip) only when chromium is not installed.
set -euo pipefail
xq=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/chromium.sh"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
rm -rf "$work"
mkdir -p "$work"
"$xq" run "$here/../jobs/sprt-weights.ini" --set job.rounds=6 --set job.concurrency=2 \
    --set output.dir="$work/run" >"$work/run.out" 2>&1 || fail "the run failed: $(tail -5 "$work/run.out")"
page="$work/run/report.html"
[[ -s $page ]] || fail "no report.html"

chrome --dump-dom "file://$page" >"$work/dom.html" || fail "chromium could not load the page"
grep -q "<h1>match: horse_mg 300 vs 270</h1>\|<h1>sprt: horse_mg 300 vs 270</h1>" "$work/dom.html" ||
    fail "the title is not in the rendered page"
[[ $(grep -o '<svg class="plot"' "$work/dom.html" | wc -l) == 3 ]] || fail "not three SVG plots"
grep -q 'id="plot-llr"' "$work/dom.html" || fail "no LLR plot"
[[ $(grep -o 'class="bound"' "$work/dom.html" | wc -l) -ge 3 ]] || fail "bounds missing"
grep -q 'class="band"' "$work/dom.html" || fail "no Elo band"
grep -q 'class="bar"' "$work/dom.html" || fail "no termination bars"
grep -q '<th>LLR</th>' "$work/dom.html" || fail "no SPRT table"
# The real run's plots measured where Chromium drew them (tests/report_geometry.js): no legend
# over the title or the plot area, no point outside it, whole-number ticks for games.
{ cat "$page"; printf '<script>%s</script>\n' "$(cat "$here/report_geometry.js")"; } >"$work/measure.html"
chrome --dump-dom "file://$work/measure.html" | tr '\n' '\v' | grep -o '<pre id="geometry">[^<]*</pre>' |
    tr '\v' '\n' | sed 's/<[^>]*>//g' >"$work/geometry.txt" || true
grep -q "^CHECKED 3 plots" "$work/geometry.txt" || fail "the plots were not measured: $(head -c 300 "$work/geometry.txt")"
! grep -q '^BAD' "$work/geometry.txt" || fail "$(grep '^BAD' "$work/geometry.txt" | head -5)"

chrome --window-size=1280,1700 --screenshot="$work/report.png" "file://$page" >/dev/null ||
    fail "no desktop screenshot"
chrome --window-size=390,2400 --screenshot="$work/report-phone.png" "file://$page" >/dev/null ||
    fail "no phone screenshot"
chrome --print-to-pdf="$work/report.pdf" --no-pdf-header-footer "file://$page" >/dev/null ||
    fail "no PDF print"
for f in report.png report-phone.png; do
    [[ $(head -c 8 "$work/$f" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$f is not a PNG"
    [[ $(stat -c %s "$work/$f") -gt 20000 ]] || fail "$f is nearly empty"
done
[[ $(head -c 5 "$work/report.pdf") == "%PDF-" ]] || fail "report.pdf is not a PDF"
echo "report_browser: rendered; screenshots $work/report.png, $work/report-phone.png, print $work/report.pdf"
