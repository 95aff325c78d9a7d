#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The report's plots as a reader sees them, in a real headless Chromium, with 1, 3 and 8
# series per line plot (tests/report_pages.c writes the pages: a gauntlet's Elo with long
# pairing names and two pairings on one curve, an LLR with bounds, a Texel loss whose first
# epochs are its highest points, a datagen plot of one point, bar charts of counts and of
# long names). Chromium measures what it drew (getBBox) and the test fails when a legend
# overlaps the title, the plot area or another legend item or leaves the chart, a drawn point
# lies outside the plot area, two series on one curve share a dash pattern or the legend does
# not say so, a bar label leaves the chart or runs into its bars, x tick labels overlap or a
# count axis has a fractional tick; and, from report.json, when a value of a plot that shows
# every point (y_range "all") lies outside its axis, or an x axis of values >= 0 starts below
# 0. The same checks on a real round robin of 10 pairings, whose Elo plot draws 8 and says
# so. Screenshots of the three pages are kept in WORKDIR (plots-1.png, -3, -8).
# usage: report_plots.sh REPORT_PAGES XQFORGE WORKDIR. Exit 77 (skip) only when chromium is missing.
set -euo pipefail
gen=$1
xq=$2
work=$3
chrome_budget=1000
source "$(dirname "$0")/chromium.sh"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
rm -rf "$work"
mkdir -p "$work"

here=$(cd "$(dirname "$0")" && pwd)
measure=$(cat "$here/report_geometry.js")

broken=0
# check NAME DIR PLOTS SHOT: measures DIR/report.html (which must have PLOTS plots) and, with
# SHOT yes, takes its screenshot, WORKDIR/plots-NAME.png; every problem is listed before the
# test fails.
check() {
    local name=$1 dir=$2 plots=$3 shot=$4
    # The page itself has no script: the measuring copy gets one after it (an HTML parser puts
    # content after </html> into the body, and runs it once the page is laid out).
    { cat "$dir/report.html"; printf '<script>%s</script>\n' "$measure"; } >"$dir/measure.html"
    chrome --dump-dom "file://$dir/measure.html" >"$dir/dom.html" || fail "chromium could not load the $name page"
    tr '\n' '\v' <"$dir/dom.html" | grep -o '<pre id="geometry">[^<]*</pre>' | tr '\v' '\n' |
        sed 's/<[^>]*>//g' >"$dir/geometry.txt" || true
    grep -q "^CHECKED $plots plots" "$dir/geometry.txt" || fail "$name: the page was not measured: $(head -c 300 "$dir/geometry.txt")"
    if grep -q '^BAD' "$dir/geometry.txt"; then
        grep '^BAD' "$dir/geometry.txt" | sed "s/^BAD/FAIL: $name:/" | head -20 >&2
        broken=1
    fi
    # Every value of a plot that shows every point lies inside its axis (the SVG's data-ymin and
    # data-ymax, read from the page): a loss curve is not cut at its first epochs. An x axis of
    # values >= 0 (games, minutes) starts at 0 or later.
    while read -r id lo hi xlo; do
        range=$(grep -o "<figure id=\"plot-$id\"><svg [^>]*>" "$dir/report.html" |
            sed 's/.*data-xmin="\([^"]*\)".*data-ymin="\([^"]*\)" data-ymax="\([^"]*\)".*/\1 \2 \3/')
        read -r xmin ymin ymax <<<"$range"
        if ! awk -v lo="$lo" -v hi="$hi" -v a="$ymin" -v b="$ymax" 'BEGIN { exit !(lo >= a && hi <= b) }'; then
            echo "FAIL: $name: plot $id has values from $lo to $hi on an axis from $ymin to $ymax" >&2
            broken=1
        fi
        if ! awk -v lo="$xlo" -v a="$xmin" 'BEGIN { exit !(lo < 0 || a >= 0) }'; then
            echo "FAIL: $name: plot $id has x values from $xlo on, its axis starts at $xmin" >&2
            broken=1
        fi
    done < <(jq -r '.plots[] | select(.kind == "line" and (.y_range // "all") == "all") |
        [.id, ([.series[] | .y[], (.lo // [])[], (.hi // [])[] | numbers] | min),
              ([.series[] | .y[], (.lo // [])[], (.hi // [])[] | numbers] | max),
              ([.series[] | .x[] | numbers] | min)] | @tsv' "$dir/report.json")
    echo "$name: $(tail -1 "$dir/geometry.txt")"
    [[ $shot == yes ]] || return 0
    chrome --window-size=1000,1400 --screenshot="$work/plots-$name.png" "file://$dir/report.html" >/dev/null ||
        fail "no screenshot of the $name page"
    [[ $(head -c 8 "$work/plots-$name.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
        fail "plots-$name.png is not a PNG"
}

for n in 1 3 8; do
    mkdir -p "$work/$n"
    "$gen" "$n" "$work/$n" || fail "report_pages $n could not write the page"
    check "$n" "$work/$n" 6 yes
done
# A real round robin of five engines: 10 pairings, of which the Elo plot draws the first 8 and
# says so in its title.
cat >"$work/rr.ini" <<'INI'
[job]
kind = match
name = five engines
rounds = 1
tournament = roundrobin
concurrency = 2
[engine base]
[engine horse]
option.horse_mg = 300
[engine chariot]
option.chariot_mg = 400
[engine cannon]
option.cannon_mg = 320
[engine advisor]
option.advisor_mg = 150
[each]
option.UseNNUE = false
[time]
nodes = 300
[adjudication]
maxplies = 120
INI
"$xq" run "$work/rr.ini" --set output.dir="$work/rr" >"$work/rr.log" 2>&1 || fail "the round robin failed: $(tail -3 "$work/rr.log")"
# (A pairing whose two games went one way has no finite Elo, hence no line: up to 8 are drawn.)
[[ $(jq -r '.plots[] | select(.id == "elo") | "\(.series | length <= 8) \(.title)"' "$work/rr/report.json") == \
    "true Elo of each pairing's first engine (the first 8 of 10 pairings)" ]] ||
    fail "the Elo plot of 10 pairings: $(jq -c '.plots[] | select(.id == "elo") | [(.series | length), .title]' "$work/rr/report.json")"
check roundrobin "$work/rr" 2 no
[[ $broken == 0 ]] || fail "the plots above are not readable"
echo "report_plots: screenshots $work/plots-1.png $work/plots-3.png $work/plots-8.png"
