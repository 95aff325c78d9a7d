#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every figure counts every game: a round robin and a gauntlet of three builtin engines, on
# one rank and on 3 ranks, report in result.json, report.json and the page exactly the games
# the PGN holds (totals, terminations, per-pairing sums), and report.json holds the joint
# Bradley-Terry rating of all three with error bars. With [output] engine_log each worker rank
# writes its own engine log.
set -u
xq=$1 job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

check() { # check NAME DIR LOG
    local name=$1 dir=$2 log=$3 pgn res rep
    pgn=$(grep -c '^\[Result ' "$dir/games.pgn")
    res=$(jq '.games' "$dir/result.json")
    rep=$(jq '.totals.games' "$dir/report.json")
    [[ $pgn -gt 0 && $res == "$pgn" && $rep == "$pgn" ]] ||
        fail "$name: PGN $pgn games, result.json $res, report.json $rep"
    [[ $(jq '[.pairings[].totals.games] | add' "$dir/result.json") == "$pgn" ]] ||
        fail "$name: the pairings' games do not add up to the PGN's $pgn"
    [[ $(jq '[.terminations[]] | add' "$dir/result.json") == "$pgn" ]] ||
        fail "$name: the terminations do not add up to $pgn games"
    [[ $(jq '[.totals.terminations[]] | add' "$dir/report.json") == "$pgn" ]] ||
        fail "$name: the report's terminations do not add up to $pgn games"
    [[ $(jq '.ratings | length' "$dir/report.json") == 3 ]] || fail "$name: no joint rating in report.json"
    [[ $(jq '[.ratings[] | select(.elo_error != null)] | length' "$dir/report.json") == 3 ]] ||
        fail "$name: the joint rating lacks error bars"
    [[ $(jq '[.ratings[].games] | add' "$dir/report.json") == $((2 * pgn)) ]] ||
        fail "$name: the rating counts $(jq '[.ratings[].games] | add' "$dir/report.json") player-games, want $((2 * pgn))"
    grep -q "Joint rating" "$dir/report.html" || fail "$name: the page lacks the joint rating"
    grep -q "^Total: $pgn games" "$log" || fail "$name: the console total is not $pgn games"
    [[ $(jq -r '.state' "$dir/result.json") == finished ]] || fail "$name: state $(jq -r .state "$dir/result.json")"
    echo "$name: $pgn games in the PGN, result.json, report.json and on the console; joint rating of 3"
}

for scheme in roundrobin gauntlet; do
    "$xq" run "$job" --set job.tournament=$scheme --set job.concurrency=2 \
        --set output.dir="$work/$scheme.1" >"$work/$scheme.1.log" 2>&1 ||
        fail "$scheme on 1 rank: $(tail -3 "$work/$scheme.1.log")"
    check "$scheme, 1 rank" "$work/$scheme.1" "$work/$scheme.1.log"
    mpirun --oversubscribe --bind-to none -np 3 "$xq" run "$job" --set job.tournament=$scheme \
        --set output.dir="$work/$scheme.3" >"$work/$scheme.3.log" 2>&1 ||
        fail "$scheme on 3 ranks: $(tail -3 "$work/$scheme.3.log")"
    check "$scheme, 3 ranks" "$work/$scheme.3" "$work/$scheme.3.log"
    # Under mpirun the ranks' stdout is a pseudo terminal whatever the user redirects it to:
    # the log must still get whole lines.
    [[ $(grep -c $'\r' "$work/$scheme.3.log") == 0 ]] || fail "$scheme: carriage returns in a log file"
done
# Node-limited games are deterministic: 1 rank and 3 ranks give the same totals.
for scheme in roundrobin gauntlet; do
    cmp -s <(jq -S '.pairings' "$work/$scheme.1/result.json") <(jq -S '.pairings' "$work/$scheme.3/result.json") ||
        fail "$scheme: 1 rank and 3 ranks differ"
done
# [output] engine_log under mpirun: each worker rank writes its own log of the external engine
# (engine.rRANK.NAME.log in the output dir), none for the builtin one; rank 0 does not play.
fakes=$(cd "$(dirname "$0")/data/fake-engines" && pwd)
printf '[job]\nkind = match\nrounds = 8\nconcurrency = 1\n[engine ext]\ncmd = /bin/sh\nargs = %s/uci.sh good\n[engine base]\nproto = builtin\n[time]\ndepth = 1\n[output]\nengine_log = true\n' \
    "$fakes" >"$work/elog.ini"
mpirun --oversubscribe --bind-to none -np 3 "$xq" run "$work/elog.ini" --set output.dir="$work/elog" \
    >"$work/elog.log" 2>&1 || fail "engine_log on 3 ranks: $(tail -3 "$work/elog.log")"
logs=$(cd "$work/elog" && echo engine*)
[[ $logs == "engine.r1.ext.log engine.r2.ext.log" ]] || fail "engine_log on 3 ranks wrote: $logs"
for r in 1 2; do
    grep -q " ext#1 > go depth 1$" "$work/elog/engine.r$r.ext.log" || fail "engine.r$r.ext.log has no go"
done
echo "engine_log, 3 ranks: $logs"
echo "1 passed, 0 failed"
