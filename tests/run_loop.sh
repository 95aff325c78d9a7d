#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Training loop jobs (kind = loop) end to end, tiny, on MPI ranks:
# - 3 ranks, 2 generations whose gates accept (the engine on its linear evaluation, so the
#   nets only ride along, and wide negative bounds): history.json has 2 rows whose figures are
#   the steps' result.json files (positions, the gate's games and verdict, the net's id and
#   sha256), each promoted net is in nets/ under its id with the train step's bytes, the
#   second generation's data and gate used the first's net, and best.nnue is the last
#   promoted net;
# - 3 ranks, 1 generation against the embedded net: the tiny net is rejected, nothing is
#   promoted (no nets/, no best.nnue, best null);
# - a malformed loop job is refused with its reason.
# - 2 ranks (one worker: every step deterministic), the loop killed with SIGKILL (rank 0
#   during the first datagen, the worker during the second gate) and resumed: the same
#   history.json and the same net bytes as an uninterrupted run.
set -u
xq=$1
work=$(mktemp -d)
cleanup() {
    for p in $(pgrep -f "$work/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
cat >"$work/loop.ini" <<'INI'
[job]
kind = loop
name = test-loop
concurrency = 1
[engine e]
option.Hash = 4
option.UseNNUE = false
[time]
nodes = 300
[adjudication]
maxplies = 200
[datagen]
positions = 1500
random_plies = 6
min_ply = 4
[train]
hidden = 32
epochs = 2
batch = 1024
threads = 1
[loop]
generations = 2
gate_nodes = 300
gate_games = 60
elo0 = -400
elo1 = -300
INI

# consistent DIR ROWS: history.json's rows are the steps' results; promotions and best.nnue.
consistent() {
    local d=$1 h=$1/history.json best="" prev=embedded
    [[ $(jq '.rows | length' "$h") == "$2" ]] || fail "$d: not $2 rows: $(cat "$h")"
    [[ $(jq -r .next "$h") == complete ]] || fail "$d: the loop is not complete"
    for g in $(seq "$2"); do
        local gd row
        gd=$d/$(printf 'gen-%03d' "$g")
        row=$(jq -c ".rows[$((g - 1))]" "$h")
        [[ $(jq .generation <<<"$row") == "$g" ]] || fail "row $g: $row"
        [[ $(jq .positions <<<"$row") == $(jq .positions "$gd/data/result.json") ]] ||
            fail "gen $g: positions differ from the datagen's result.json"
        [[ $(jq .positions <<<"$row") == 1500 ]] || fail "gen $g: not 1500 positions"
        [[ $(jq -c .filters <<<"$row") == $(jq -c .filters "$gd/data/result.json") ]] ||
            fail "gen $g: the filters' counts differ from the datagen's"
        [[ $(jq .gate.games <<<"$row") == $(jq .games "$gd/gate/result.json") ]] ||
            fail "gen $g: the gate's games differ from its result.json"
        [[ $(jq .gate.state <<<"$row") == $(jq .state "$gd/gate/result.json") ]] ||
            fail "gen $g: the gate's verdict differs from its result.json"
        local sha net
        sha=$(sha256sum "$gd/train/net.nnue" | cut -d' ' -f1)
        net=$(jq -r .net <<<"$row")
        [[ $(jq -r .sha256 <<<"$row") == "$sha" && $net == "${sha:0:12}" ]] ||
            fail "gen $g: the net's id is not its sha256: $row"
        [[ $(jq -r .best_before <<<"$row") == "$prev" ]] || fail "gen $g: best_before is not $prev"
        [[ $(jq .train.best_epoch <<<"$row") -ge 1 ]] || fail "gen $g: no kept epoch"
        local eval_file
        eval_file=$(jq -r '.job.engines[1].options.EvalFile // "embedded"' "$gd/gate/report.json")
        [[ $prev == embedded && $eval_file == embedded || $eval_file == *"nn-$prev.nnue" ]] ||
            fail "gen $g: the gate's best engine played $eval_file, not $prev"
        if [[ $(jq -r .verdict <<<"$row") == promoted ]]; then
            [[ $(jq -r .gate.state <<<"$row") == "H1 accepted" ]] || fail "gen $g: promoted without H1"
            cmp -s "$d/nets/nn-$net.nnue" "$gd/train/net.nnue" || fail "gen $g: nets/nn-$net.nnue is not its net"
            best=$net prev=$net
        else
            [[ $(jq -r .gate.state <<<"$row") != "H1 accepted" ]] || fail "gen $g: H1 but rejected"
            [[ ! -e $d/nets/nn-$net.nnue ]] || fail "gen $g: a rejected net is in nets/"
        fi
    done
    if [[ -n $best ]]; then
        [[ $(jq -r .best "$h") == "$best" ]] || fail "$d: best is not the last promoted net $best"
        cmp -s "$d/best.nnue" "$d/nets/nn-$best.nnue" || fail "$d: best.nnue is not nn-$best.nnue"
    else
        [[ $(jq .best "$h") == null && ! -e $d/best.nnue && ! -e $d/nets ]] ||
            fail "$d: something promoted without a promotion"
    fi
}

"${mpi[@]}" -np 3 "$xq" run "$work/loop.ini" --set output.dir="$work/a" >"$work/a.log" 2>&1 ||
    fail "three-rank loop failed: $(tail -5 "$work/a.log")"
consistent "$work/a" 2
[[ $(jq '[.rows[] | select(.verdict == "promoted")] | length' "$work/a/history.json") == 2 ]] ||
    fail "the gates at bounds [-400, -300] did not promote both nets: $(jq -c '.rows[].gate' "$work/a/history.json")"
grep -q "^Loop: 2 generations done; best net .*nets/nn-$(jq -r .best "$work/a/history.json").nnue" "$work/a.log" ||
    fail "the end line: $(tail -2 "$work/a.log")"

# Against the embedded net the tiny net loses: rejected, nothing promoted.
"${mpi[@]}" -np 3 "$xq" run "$work/loop.ini" --set output.dir="$work/b" --set loop.generations=1 \
    --set engine.e.option.UseNNUE=true --set loop.elo0=0 --set loop.elo1=10 --set loop.gate_games=20 \
    >"$work/b.log" 2>&1 || fail "the rejecting loop failed: $(tail -5 "$work/b.log")"
consistent "$work/b" 1
[[ $(jq -r '.rows[0].verdict' "$work/b/history.json") == rejected ]] || fail "the tiny net was promoted"

# A malformed loop job names what is wrong.
refused() { # refused WANT ARGS...: exit 2 and WANT in the error
    local want=$1
    shift
    "$xq" run "$work/loop.ini" --set output.dir="$work/bad" "$@" >"$work/bad.log" 2>&1
    local rc=$?
    [[ $rc == 2 ]] && grep -q -- "$want" "$work/bad.log" || fail "not refused ($rc) with '$want': $(cat "$work/bad.log")"
}
refused "\[loop\] elo1: elo0 (5) must be below elo1 (1)" --set loop.elo0=5 --set loop.elo1=1
refused "\[job\] rounds: a loop job runs \[loop\] generations" --set job.rounds=4
refused "\[loop\] gate_tc" --set loop.gate_nodes=0 --set loop.gate_tc=banana
refused "\[train\] data: a loop trains on its own generations' data" --set train.data=x.xqp
[[ ! -e $work/bad ]] || fail "a refused job wrote its output directory"
echo "loop: 2 generations promoted and consistent; a rejection; malformed jobs refused"
echo "1 passed, 0 failed"
