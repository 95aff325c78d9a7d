#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Training loop jobs (kind = loop) end to end, tiny, on MPI ranks:
# - 3 ranks, 2 generations whose gates accept (the engine on its linear evaluation, so the
#   nets only ride along, and wide negative bounds): history.json has 2 rows whose figures are
#   the steps' result.json files (positions, the gate's games and verdict, the net's id and
#   sha256), each promoted net is in nets/ under its id with the train step's bytes, the
#   second generation's data and gate used the first's net, and best.nnue is the last
#   promoted net; the loop's page (report.json, report.html) says what history.json says;
# - 3 ranks, 1 generation against the embedded net: the tiny net is rejected, nothing is
#   promoted (no nets/, no best.nnue, best null); with [report] urls its page is spooled;
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
[[ -n ${XQ_KEEP:-} ]] || trap cleanup EXIT # XQ_KEEP=1: the files stay, to look into
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
batch = 256
threads = 1
[loop]
generations = 2
gate_nodes = 300
gate_games = 60
elo0 = -400
elo1 = -300
from_scratch = false
INI

# report_agrees DIR ROWS: the loop's page (report.json, report.html) says what history.json
# says: its run, a row per generation with the same verdicts and figures, the quantization
# error of the train step's page, and the Elo against generation 0 summed over the promotions.
# page_matches DIR: the page's run and generations are the record's (at any moment: the page
# is rewritten with the record, so after a kill too).
page_matches() {
    local d=$1 h=$1/history.json r=$1/report.json
    [[ -s $r && -s $d/report.html ]] || fail "$d: no report.json or report.html"
    [[ $(jq -r .run_id "$r") == $(jq -r .run_id "$h") && $(jq -r .run_id "$h") =~ ^[0-9a-f]{16}$ ]] ||
        fail "$d: the page's run is not the record's"
    [[ $(jq -S -c '[.generations[] | del(.elo_vs_gen0, .elo_vs_gen0_error)]' "$r") == "$(jq -S -c .rows "$h")" ]] ||
        fail "$d: the page's generations are not the record's rows"
}
report_agrees() {
    local d=$1 h=$1/history.json r=$1/report.json
    page_matches "$d"
    [[ $(jq .final "$r") == true && $(jq -r .state "$r") == complete ]] || fail "$d: the page is not final"
    [[ $(jq '.tables.generations.rows | length' "$r") == "$2" ]] || fail "$d: not $2 rows in the table"
    [[ $(jq -c '[.tables.generations.rows[][10] | split(" ")[0]]' "$r") == "$(jq -c '[.rows[].verdict]' "$h")" ]] ||
        fail "$d: the table's verdicts: $(jq -c '.tables.generations.rows' "$r")"
    local want got
    want=$(jq '[.rows[] | select(.verdict == "promoted") | .gate.elo] | add // 0' "$h")
    got=$(jq .loop.elo_vs_gen0 "$r")
    awk -v a="$want" -v b="$got" 'BEGIN { exit !(a - b < 1e-9 && b - a < 1e-9) }' ||
        fail "$d: Elo against generation 0 is $got, the promoted gates sum to $want"
    want=$(jq '[.rows[] | select(.verdict == "promoted") | .gate.error * .gate.error] | add // 0 | sqrt' "$h")
    got=$(jq .loop.elo_vs_gen0_error "$r")
    awk -v a="$want" -v b="$got" 'BEGIN { exit !(a - b < 1e-9 && b - a < 1e-9) }' ||
        fail "$d: its error is $got, not sqrt(sum of squares) $want"
    for g in $(seq "$2"); do
        local page q train
        page="$d/$(printf 'gen-%03d' "$g")/train/report.json"
        q=$(jq -c '.quantization | [.mean_cp, .max_cp]' "$page")
        train=$(jq -c ".rows[$((g - 1))].train | [.quant_mean_cp, .quant_max_cp]" "$h")
        [[ $q != "[null,null]" && $q == "$train" ]] ||
            fail "gen $g: the quantization error $train is not the train step's: $q"
        # The page's text is the same figure, rounded.
        jq -r '.facts[] | select(.label == "quantization") | .text' "$page" |
            grep -q "^$(jq -r '.[0] * 1000 | round / 1000 | tostring' <<<"$q")" ||
            fail "gen $g: the page's quantization text is not $q"
    done
    [[ $(grep -o '<svg' "$d/report.html" | wc -l) == 2 ]] || fail "$d: not two plots on the page"
    [[ $(grep -o 'promoted (H1 accepted)' "$d/report.html" | wc -l) == \
        $(jq '[.rows[] | select(.verdict == "promoted")] | length' "$h") ]] || fail "$d: the page's verdicts"
}

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
        [[ $(jq -r .nnue_id <<<"$row") =~ ^[0-9a-f]{12}$ ]] &&
            grep -q "id $(jq -r .nnue_id <<<"$row")" "$gd/train/report.json" ||
            fail "gen $g: nnue_id is not the train step's id of the net: $row"
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
    report_agrees "$d" "$2"
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
# from_scratch = false: generation 1 from fresh weights, generation 2 from generation 1's net,
# whose weights are the start: a train job from it on its own data begins at its validation
# loss (the quantization's difference aside), far below fresh weights' start.
net1=$(jq -r '.rows[0].net' "$work/a/history.json")
[[ $(jq -r '.rows[0].train.init' "$work/a/history.json") == fresh &&
    $(jq -r '.rows[1].train.init' "$work/a/history.json") == *"/nets/nn-$net1.nnue" ]] ||
    fail "the train steps' start nets: $(jq -c '[.rows[].train.init]' "$work/a/history.json")"
printf '[job]\nkind = train\n[train]\ndata = %s\ninit = %s\nhidden = 32\nepochs = 2\nbatch = 64\nthreads = 1\n[output]\ndir = %s\n' \
    "$work/a/gen-001/data/positions.xqp" "$work/a/gen-001/train/net.nnue" "$work/init" >"$work/init.ini"
"${mpi[@]}" -np 3 "$xq" run "$work/init.ini" >"$work/init.log" 2>&1 || fail "train from a net: $(tail -3 "$work/init.log")"
start=$(awk -F, '$1 == 0 {print $3}' "$work/init/train-loss.csv")
fresh=$(awk -F, '$1 == 0 {print $3}' "$work/a/gen-001/train/train-loss.csv")
kept=$(jq '.rows[0].train.val_loss' "$work/a/history.json")
awk -v s="$start" -v k="$kept" -v f="$fresh" 'BEGIN { exit !(s < 1.1 * k && s > 0.9 * k && s < f) }' ||
    fail "from the net, the start's validation loss is $start: not its $kept (fresh weights: $fresh)"

# Against the embedded net the tiny net loses: rejected, nothing promoted.
"${mpi[@]}" -np 3 "$xq" run "$work/loop.ini" --set output.dir="$work/b" --set loop.generations=1 \
    --set engine.e.option.UseNNUE=true --set loop.elo0=0 --set loop.elo1=10 --set loop.gate_games=20 \
    --set report.urls=http://127.0.0.1:9/loop --set report.attempts=1 --set report.final_wait=0 \
    >"$work/b.log" 2>&1 || fail "the rejecting loop failed: $(tail -5 "$work/b.log")"
consistent "$work/b" 1
# [report] urls: the loop's page is spooled for upload as a run's report is (nothing listens on
# port 9, so it stays there): the final version is the page, and the steps spool nothing.
rid=$(jq -r .run_id "$work/b/history.json")
fin=$(ls -d "$work/b/spool/"*"-$rid-"*-f 2>/dev/null | tail -1)
[[ -n $fin ]] && cmp -s "$fin/report.json" "$work/b/report.json" ||
    fail "the loop's final page is not in the spool: $(ls "$work/b/spool" 2>&1)"
[[ -z $(ls "$work/b/spool" | grep -v -- "-$rid-") ]] || fail "a step's report was spooled: $(ls "$work/b/spool")"
[[ $(jq -r '.rows[0].verdict' "$work/b/history.json") == rejected ]] || fail "the tiny net was promoted"
# Run again: refused without --resume (the record is there); --resume finds it complete;
# --fresh moves the record and every generation aside and starts over.
"$xq" run "$work/loop.ini" --set output.dir="$work/b" --set loop.generations=1 >"$work/b2.log" 2>&1
[[ $? == 2 ]] && grep -q "history.json holds the journal of an earlier run" "$work/b2.log" ||
    fail "a second run over a loop's record was not refused: $(cat "$work/b2.log")"
"$xq" run "$work/loop.ini" --set output.dir="$work/b" --set loop.generations=1 --resume \
    >"$work/b2.log" 2>&1 || fail "--resume of a complete loop failed: $(tail -3 "$work/b2.log")"
grep -q "^Loop: generation" "$work/b2.log" && fail "--resume of a complete loop ran a step again"
"$xq" run "$work/loop.ini" --set output.dir="$work/b" --set loop.generations=1 --fresh \
    --set engine.e.option.UseNNUE=true --set loop.elo0=0 --set loop.elo1=10 --set loop.gate_games=2 \
    --set datagen.positions=300 >"$work/b2.log" 2>&1 || fail "--fresh failed: $(tail -3 "$work/b2.log")"
aside=$(sed -n "s/^--fresh: the earlier run's outputs are in //p" "$work/b2.log")
[[ -f $aside/history.json && -f $aside/gen-001/gate/result.json ]] ||
    fail "--fresh did not move the record and generations aside: $(cat "$work/b2.log")"
[[ $(jq '.rows[0].positions' "$work/b/history.json") == 300 ]] || fail "--fresh did not start over"

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

# Kills: 2 ranks (one worker, one game at a time: every step is deterministic, so two
# uninterrupted runs agree byte for byte), gates long enough to be caught.
kill_args=(--set loop.elo0=-40 --set loop.elo1=0 --set loop.gate_games=120)
kloop() { # kloop DIR LOG [ARGS...]
    local d=$1 log=$2
    shift 2
    timeout 300 "${mpi[@]}" -np 2 "$xq" run "$work/loop.ini" --set output.dir="$d" \
        "${kill_args[@]}" "$@" >"$log" 2>&1
}
kloop "$work/u" "$work/u.log" || fail "the uninterrupted two-rank loop failed: $(tail -5 "$work/u.log")"
consistent "$work/u" 2
# kill_rank RANK FILE NOT: SIGKILL to that rank of the loop in $work/k once FILE exists (and
# NOT, the step's result, does not yet).
kill_rank() {
    for _ in $(seq 1200); do
        [[ -s $2 ]] && break
        sleep 0.05
    done
    sleep 0.3
    [[ -s $2 && ! -e $3 ]] || fail "not caught during $(dirname "$3"): $(tail -3 "$work/k.log")"
    for p in $(pgrep -f "output.dir=$work/k"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            kill -KILL "$p" && return 0
        fi
    done
    fail "rank $1 was not found running: $(tail -3 "$work/k.log")"
}
kloop "$work/k" "$work/k.log" &
pid=$!
kill_rank 0 "$work/k/gen-001/data/journal.xqj" "$work/k/gen-001/data/result.json"
wait $pid && fail "the loop whose rank 0 was killed exited 0"
for p in $(pgrep -f "output.dir=$work/k"); do kill -KILL "$p" 2>/dev/null; done
page_matches "$work/k"
[[ $(jq .final "$work/k/report.json") == false ]] || fail "the killed loop's page is final"
cat "$work/k.log" >>"$work/k-all.log"
kloop "$work/k" "$work/k.log" --resume &
pid=$!
kill_rank 1 "$work/k/gen-002/gate/journal.xqj" "$work/k/gen-002/gate/result.json"
wait $pid && fail "the loop whose worker was killed exited 0"
for p in $(pgrep -f "output.dir=$work/k"); do kill -KILL "$p" 2>/dev/null; done
page_matches "$work/k"
cat "$work/k.log" >>"$work/k-all.log"
grep -q "resume = auto: continuing the journal .*gen-001/data/journal.xqj" "$work/k-all.log" ||
    fail "the first datagen did not resume from its journal"
kloop "$work/k" "$work/k.log" --resume || fail "the last resume failed: $(tail -5 "$work/k.log")"
grep -q "resume = auto: continuing the journal .*gen-002/gate/journal.xqj" "$work/k.log" ||
    fail "the second gate did not resume from its journal"
grep -q "generation 1 of 2, \(data\|train\|gate\)" "$work/k.log" &&
    fail "the last resume ran a step of generation 1 again"
consistent "$work/k" 2
strip='del(.best_file, .run_id) | .rows[].train.data_generations |= .'
[[ "$(jq -S "$strip" "$work/k/history.json")" == "$(jq -S "$strip" "$work/u/history.json")" ]] ||
    fail "the killed loop's history differs: $(diff <(jq -S "$strip" "$work/u/history.json") <(jq -S "$strip" "$work/k/history.json"))"
for g in gen-001 gen-002; do
    cmp -s "$work/k/$g/train/net.nnue" "$work/u/$g/train/net.nnue" || fail "$g's net differs"
    cmp -s "$work/k/$g/data/positions.xqp" "$work/u/$g/data/positions.xqp" || fail "$g's data differs"
done
[[ "$(cd "$work/k" && ls nets 2>/dev/null)" == "$(cd "$work/u" && ls nets 2>/dev/null)" ]] ||
    fail "the promoted nets differ"
echo "loop: 2 generations promoted and consistent; a rejection; malformed jobs refused;"
echo "killed (rank 0 in a datagen, the worker in a gate) and resumed to the same history and nets"
echo "1 passed, 0 failed"
