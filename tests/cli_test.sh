#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command line keeps its promises: exit codes (0 ok, 2 bad usage/input), perft's last
# line, --divide's format, and errors that name what was wrong.
set -u
xq=$1
fails=0 passes=0

check() { # description, expected exit code, expected text (regex) in output, command...
    local what=$1 code=$2 pattern=$3
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [[ $rc -ne $code ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
        echo "FAIL: $what: exit $rc (expected $code), output:"
        echo "$out" | head -20
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}

check "help lists perft" 0 "perft" "$xq" help
check "help for a command" 0 "usage: xqforge perft" "$xq" help perft
check "no command" 2 "usage" "$xq"
check "unknown command" 2 "unknown command 'nope'" "$xq" nope
check "perft --help" 0 "--divide" "$xq" perft --help
check "perft 3" 0 "^Nodes searched: 79666$" "$xq" perft 3
check "perft threads" 0 "^Nodes searched: 79666$" "$xq" perft --threads 2 3
check "perft divide lines" 0 "^h2e2: 45$" "$xq" perft --divide 2
check "perft divide total" 0 "^Nodes searched: 1920$" "$xq" perft --divide 2
check "perft bad depth" 2 "DEPTH must be an integer" "$xq" perft x
check "perft depth 0" 2 "DEPTH must be an integer" "$xq" perft 0
check "perft missing depth" 2 "exactly one DEPTH" "$xq" perft
check "perft bad threads" 2 "--threads" "$xq" perft --threads 0 2
check "perft bad FEN" 2 "invalid FEN: rank 1 has 8 points" \
    "$xq" perft --fen "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/8/RNBAKABNR w - - 0 1" 2
check "perft facing generals" 2 "generals face each other" "$xq" perft --fen "4k4/9/9/9/9/9/9/9/9/4K4 w" 1
check "perft stalemate (no moves)" 0 "^Nodes searched: 0$" \
    "$xq" perft --fen "3k5/8R/9/9/9/9/9/9/9/4K4 b" 1
check "perft last line" 0 "Nodes searched: 44$" bash -c "'$xq' perft 1 2>/dev/null | tail -n 1"

stats_json() { # stats --json: one object with every key, parsed by jq
    local out k
    out=$("$xq" stats "$@" --json) || return 1
    [[ $(wc -l <<<"$out") -eq 1 && $out == "{"*"}" ]] || { echo "not one JSON object: $out"; return 1; }
    for k in games wins draws losses ptnml elo elo_error nelo nelo_error los draw_ratio llr \
        lower upper elo0 elo1 model decision; do
        grep -q "\"$k\": " <<<"$out" || { echo "no key $k: $out"; return 1; }
    done
    [[ $(jq '.ptnml[2]' <<<"$out") == 144 ]] || { echo "ptnml[2] is not 144: $out"; return 1; }
    echo "json ok"
}
check "stats ptnml" 0 "^Elo: -9.20 \+/- 20.93, nElo: -11.50 \+/- 26.11$" "$xq" stats --ptnml 43,61,144,55,37
check "stats LLR line" 0 "^LLR: -0.14 \(-4.8%\) \(-2.94, 2.94\) \[0.00, 2.00\]$" \
    "$xq" stats --ptnml 43,61,144,55,37
check "stats decision" 0 "^SPRT \(normalized, alpha 0.05, beta 0.05\): continue$" \
    "$xq" stats --ptnml 43,61,144,55,37
check "stats wdl" 0 "^Games: 680, Wins: 248, Losses: 266, Draws: 166, Points: 331.0 \(48.68 %\)$" \
    "$xq" stats --wdl 248,166,266
check "stats json" 0 "^json ok$" stats_json --ptnml 43,61,144,55,37 --wdl 248,166,266
check "stats lopsided stops" 0 "H0 accepted" "$xq" stats --ptnml 144,3,1,0,0 --elo0 -1500 --elo1 -500
check "stats bad ptnml" 2 "--ptnml must be 5 comma-separated counts.*got '43,61,x,55,37'" \
    "$xq" stats --ptnml 43,61,x,55,37
check "stats bad alpha" 2 "--alpha must be in \(0, 1\), got '1.5'" "$xq" stats --wdl 1,2,3 --alpha 1.5
check "stats wdl against ptnml" 2 "does not describe the pairs" \
    "$xq" stats --wdl 1,2,3 --ptnml 1,1,1,1,1
# At the extremes and on tiny samples the Elo line says what the sample cannot give (issue 34):
# a score of 100 % or 0 % has no finite Elo, only the exact one-sided 95% bound on the games
# (0.05^(1/n): 600 games give +920.23, 1 lost game "below +511.50"); under 10 games, or with
# every pair alike, no error bar. The LLR is still printed.
check "stats all wins: no finite estimate" 0 \
    "^Elo: no finite estimate \(score 100 %; one-sided 95% bound: above \+920.23\), nElo: no finite estimate$" \
    "$xq" stats --ptnml 0,0,0,0,300
check "stats all wins: the LLR stays defined" 0 "^LLR: 2.43 \(82.6%\)" "$xq" stats --ptnml 0,0,0,0,300
check "stats all losses: an upper bound" 0 "^Elo: no finite estimate \(score 0 %; one-sided 95% bound: below -75.49\)" \
    "$xq" stats --ptnml 3,0,0,0,0
check "stats one game" 0 "^Elo: no finite estimate \(score 0 %; one-sided 95% bound: below \+511.50\)" \
    "$xq" stats --wdl 0,0,1
check "stats two drawn pairs: no error bar" 0 \
    "^Elo: 0.00 \(no error bar: 4 games, fewer than 10\), nElo: undefined \(no variance\)$" \
    "$xq" stats --ptnml 0,0,2,0,0
check "stats one pair" 0 "^Elo: 0.00 \(no error bar: 2 games, fewer than 10\)" "$xq" stats --ptnml 0,0,1,0,0
check "stats all draws: no error bar" 0 "^Elo: 0.00 \(no error bar: every game scored the same\)" \
    "$xq" stats --wdl 0,40,0
check "stats --json: estimate and bound" 0 '^bound 920.2' sh -c \
    "'$xq' stats --ptnml 0,0,0,0,300 --json | jq -r '\"\\(.estimate) \\(.elo_bound)\"'"

check "play --help" 0 "-engine" "$xq" play --help
check "play needs two engines" 2 "two -engine groups" "$xq" play -engine builtin -each tc=1+0.1
check "play bad tc" 2 "tc=10[+]: expected" "$xq" play -engine builtin -engine builtin -each tc=10+
check "play no time control" 2 "no time control" "$xq" play -engine builtin -engine builtin
check "play unknown flag" 2 "unknown flag" "$xq" play -engine builtin -engine builtin -each depth=1 -bogus 3
check "play unknown engine key" 2 "unknown engine setting 'colour'" "$xq" play -engine colour=red -engine builtin -each depth=1
check "play missing openings" 2 "openings: /nonexistent" "$xq" play -engine builtin -engine builtin -each depth=1 -openings file=/nonexistent/book.epd
check "play bad sprt" 2 "elo0 < elo1" "$xq" play -engine builtin -engine builtin -each depth=1 -sprt elo0=5 elo1=0
# The NNUE net (the default) never reads evaluation weights: a changed one needs UseNNUE set,
# and the two builtin engines must agree on whether they set it.
check "play eval weight under the net" 2 "option.UseNNUE=false to evaluate with them" "$xq" play \
    -engine builtin option.horse_mg=280 -engine builtin -each depth=1
check "play net against linear unsaid" 2 "engine 'b' evaluates with the NNUE net by default" \
    "$xq" play -engine builtin name=a option.UseNNUE=false -engine builtin name=b -each depth=1
check "play builtin pair" 0 "Games: 2, Wins" "$xq" play -engine builtin name=a -engine builtin name=b -each depth=2 -rounds 1 -repeat -maxplies 40
check "play: one game pair, singular" 0 "^Started a vs b: 1 game pair, " "$xq" play -engine builtin \
    name=a -engine builtin name=b -each depth=2 -rounds 1 -repeat -maxplies 40
check "play: one game, singular" 0 "^Results of a vs b \(1 game, " "$xq" play -engine builtin name=a \
    -engine builtin name=b -each depth=2 -rounds 1 -maxplies 40
# A 6-0 (depth 4 against depth 1 with halved chariot and horse values): no finite Elo, not
# fishtest's clamped "1199.83 +/- 295.16".
check "play 6-0: no finite estimate" 0 \
    "^Elo: no finite estimate \(score 100 %; one-sided 95% bound: above \+75.49\), nElo: no finite estimate$" \
    "$xq" play -engine builtin name=good depth=4 -engine builtin name=weak depth=1 \
    option.chariot_mg=300 option.chariot_eg=300 option.horse_mg=100 option.horse_eg=100 \
    -each option.UseNNUE=false -rounds 3 -repeat

# Depth 4 against depth 1 and halved chariot and horse values: decisive within a few dozen games.
check "play stops when the SPRT decides" 0 "SPRT: H1 accepted" "$xq" play -engine builtin name=good \
    depth=4 -engine builtin name=weak depth=1 option.chariot_mg=300 option.chariot_eg=300 \
    option.horse_mg=100 option.horse_eg=100 -each option.UseNNUE=false -rounds 400 -repeat \
    -sprt elo0=0 elo1=100
# Eight games at once: pairs still in flight finish after the verdict, which is printed once;
# every summary block (one each 3 games) has the finished pairs' pentanomial (or says none has
# finished), never the trinomial of a total that holds half a pair.
c8=$("$xq" play -engine builtin name=good depth=4 -engine builtin name=weak depth=1 \
    option.chariot_mg=300 option.chariot_eg=300 option.horse_mg=100 option.horse_eg=100 \
    -each option.UseNNUE=false -rounds 400 -repeat -concurrency 8 -sprt elo0=0 elo1=100 \
    -ratinginterval 3 2>&1)
verdicts=$(grep -c "^SPRT: " <<<"$c8")
blocks=$(grep -c "^Results of" <<<"$c8")
penta=$(grep -c "^Ptnml(0-2)" <<<"$c8")
nopair=$(grep -c "^No game pair finished yet" <<<"$c8")
if [[ $verdicts == 1 && $penta -ge 2 && $((penta + nopair)) == "$blocks" ]]; then
    passes=$((passes + 1))
else
    echo "FAIL: play -concurrency 8: SPRT verdict printed $verdicts times (expected once)," \
        "$penta of $blocks summaries with a pentanomial (expected all)"
    fails=$((fails + 1))
fi

# xqforge run (one rank, no mpirun): honest exit status and the end state in result.json.
jobs=$(dirname "$0")/../jobs
run_dir=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer, leak checking off for `run` (Open MPI keeps allocations past
# MPI_Finalize by design; a reported leak would change the exit status being checked).
asan_before=${ASAN_OPTIONS-}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
check "run --help names the exit codes" 0 "130 drained by a signal" "$xq" run --help
fakes=$(cd "$(dirname "$0")/data/fake-engines" && pwd)
check "run: an engine that fails while playing exits 1 with its reason" 1 \
    "xqforge run: failed: .*engine crash" "$xq" run "$jobs/sprt-weights.ini" \
    --set job.kind=match --set job.rounds=2 --set engine.new.proto=uci \
    --set engine.new.cmd=/bin/sh --set engine.new.args="$fakes/uci.sh crash" \
    --set engine.new.check_options=false --set output.dir="$run_dir/dead"
check "run: a failed run says so in result.json" 0 '^"failed"$' jq .state "$run_dir/dead/result.json"

# A job is checked whole before anything is written (job/job_check.h): a bad engine setting
# exits 2 with one line naming the engine, the key and the reason, and the output directory
# is not created, so the fixed job then starts with a plain rerun.
refused() { # description, expected text (regex), output dir, run arguments...
    local what=$1 pattern=$2 dir=$3
    shift 3
    local out rc
    out=$("$xq" run "$@" --set output.dir="$dir" 2>&1)
    rc=$?
    if [[ $rc -ne 2 || $(wc -l <<<"$out") -ne 1 || -e $dir ]] || ! grep -Eq -- "$pattern" <<<"$out"; then
        echo "FAIL: $what: exit $rc (expected 2, one line, $dir not created), output:"
        echo "$out" | head -20
        fails=$((fails + 1))
    else
        passes=$((passes + 1))
    fi
}
# A small job for external engines: $1 the engine's settings (lines), against builtin.
ext_job() {
    printf '[job]\nkind = match\nrounds = 1\n[engine ext]\n%s\n' "$1"
    printf '[engine base]\nproto = builtin\noption.Hash = 16\n[time]\ndepth = 1\n'
    printf '[adjudication]\nmaxplies = 40\n'
}
check_dir=$run_dir/check
refused "check: a misspelled builtin option" \
    "^xqforge run: engine 'new': option.hors_mg: the builtin engine has no option 'hors_mg'" \
    "$check_dir" "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds=1 \
    --set engine.new.option.hors_mg=300
check "check: ... the fixed job runs with a plain rerun" 0 "^Results of" "$xq" run \
    "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds=1 \
    --set engine.new.option.horse_mg=300 --set output.dir="$check_dir"
# A FIFO in a file's place (the job file, a net) is refused at once, never waited on.
mkfifo "$run_dir/fifo"
check "a FIFO as the job file is refused, not read" 2 "fifo: cannot open: not a regular file" \
    timeout 20 "$xq" run "$run_dir/fifo"
check "a FIFO as option.EvalFile is refused, not read" 2 \
    "EvalFile: cannot open $run_dir/fifo: not a regular file" timeout 20 "$xq" run \
    "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds=1 \
    --set engine.new.option.EvalFile="$run_dir/fifo" --set output.dir="$run_dir/fifo-out"
refused "check: a missing engine binary" \
    "^xqforge run: engine 'new': cmd: /nonexistent/engine: No such file or directory$" \
    "$run_dir/missing" "$jobs/sprt-weights.ini" --set job.kind=match --set engine.new.proto=uci \
    --set engine.new.cmd=/nonexistent/engine
ext_job "cmd = /bin/sh
args = $fakes/options.sh uci
option.Hsh = 16" >"$run_dir/fake-uci.ini"
refused "check: an option a (fake) UCI engine does not offer" \
    "^xqforge run: engine 'ext': option.Hsh: the engine has no option 'Hsh' \(it offers: Hash, Skill Level, Ponder, Clear Hash, EvalFile\)$" \
    "$run_dir/fake-uci" "$run_dir/fake-uci.ini"
ext_job "cmd = /bin/sh
args = $fakes/options.sh uci
option.Hash = 100" >"$run_dir/fake-spin.ini"
refused "check: a spin value outside the engine's range" \
    "^xqforge run: engine 'ext': option.Hash: '100': the engine takes a whole number from 1 to 64$" \
    "$run_dir/fake-spin" "$run_dir/fake-spin.ini"
ext_job "cmd = /bin/sh
args = $fakes/options.sh xboard
option.Depth Limit = 5
nodes = 1000" >"$run_dir/fake-xboard.ini"
refused "check: nodes= for a (fake) xboard engine" \
    "^xqforge run: engine 'ext': nodes: xboard has no node limit" \
    "$run_dir/fake-xboard" "$run_dir/fake-xboard.ini" --set engine.ext.proto=xboard
# Our own engine as an external UCI engine plays everywhere: refused, then fixed.
ext_job "cmd = $(realpath "$xq")
args = uci
option.Hsh = 16" >"$run_dir/self.ini"
refused "check: an option our UCI engine does not offer" \
    "^xqforge run: engine 'ext': option.Hsh: the engine has no option 'Hsh' \(it offers: Threads, Hash, " \
    "$run_dir/self" "$run_dir/self.ini"
check "check: ... with check_options = false it is sent anyway" 0 "^Results of" "$xq" run \
    "$run_dir/self.ini" --set engine.ext.check_options=false --set output.dir="$run_dir/self-sent"
sed -i 's/^option.Hsh/option.Hash/' "$run_dir/self.ini"
check "check: ... the fixed job runs with a plain rerun" 0 "^Results of" "$xq" run \
    "$run_dir/self.ini" --set output.dir="$run_dir/self"
fsf=$(command -v fairy-stockfish || ls /usr/games/fairy-stockfish 2>/dev/null)
if [[ -n $fsf ]]; then
    ext_job "cmd = $fsf
option.Hsh = 16" >"$run_dir/fsf.ini"
    refused "check: an option Fairy-Stockfish does not offer" \
        "^xqforge run: engine 'ext': option.Hsh: the engine has no option 'Hsh' \(it offers: .*Hash" \
        "$run_dir/fsf" "$run_dir/fsf.ini"
    sed -i 's/^option.Hsh/option.Hash/' "$run_dir/fsf.ini"
    check "check: ... the fixed Fairy-Stockfish job runs with a plain rerun" 0 "^Results of" \
        "$xq" run "$run_dir/fsf.ini" --set output.dir="$run_dir/fsf"
fi
sjaak=$(command -v sjaakii || ls /usr/games/sjaakii 2>/dev/null)
if [[ -n $sjaak ]]; then
    ext_job "cmd = $sjaak
proto = xboard
nodes = 1000" >"$run_dir/sjaak.ini"
    refused "check: nodes= for Sjaak II (xboard)" \
        "^xqforge run: engine 'ext': nodes: xboard has no node limit" "$run_dir/sjaak" \
        "$run_dir/sjaak.ini"
    sed -i '/^nodes = 1000$/d' "$run_dir/sjaak.ini"
    check "check: ... the fixed Sjaak II job runs with a plain rerun" 0 "^Results of" \
        "$xq" run "$run_dir/sjaak.ini" --set output.dir="$run_dir/sjaak"
fi
# The engine log: play -log names each engine's file (the builtin has none); its settings are
# checked; a job's log is per rank and engine in the output dir and holds the protocol lines
# (here a fake engine's whole environment) but never the report token.
check "play -log: each external engine's file" 0 "^Engine log: ext in $run_dir/play\\.ext\\.log$" \
    "$xq" play -engine cmd=/bin/sh args="$fakes/uci.sh good" name=ext -engine builtin name=base \
    -each depth=1 -rounds 1 -maxplies 10 -log file="$run_dir/play.log"
check "play -log: ... its lines" 0 " ext#1 > go depth 1$" cat "$run_dir/play.ext.log"
check "play -log: the builtin engine has none" 0 "^Engine log: base is builtin \\(in-process, no protocol\\): none$" \
    "$xq" play -engine builtin name=base -engine builtin name=b -each depth=1 -rounds 1 -maxplies 4 \
    -log file="$run_dir/builtin.log"
check "play -log: a size below the floor" 2 "size: '100' is not an integer in 4096\\.\\." \
    "$xq" play -engine builtin -engine builtin -each depth=1 -log file=x size=100
check "play -log: no file" 2 "^xqforge play: -log: give the file: -log file=F$" \
    "$xq" play -engine builtin -engine builtin -each depth=1 -log size=5000
check "play -log: an unknown setting" 2 "^xqforge play: -log: unknown setting 'level=3'$" \
    "$xq" play -engine builtin -engine builtin -each depth=1 -log file=x level=3
check "play -log: a file that cannot be made" 2 \
    "^xqforge play: -log: engine log /nonexistent/e\\.ext\\.log: No such file or directory$" \
    "$xq" play -engine cmd=/bin/sh args="$fakes/uci.sh good" name=ext -engine builtin \
    -each depth=1 -rounds 1 -log file=/nonexistent/e.log
ext_job "cmd = /bin/sh
args = $fakes/uci.sh env" >"$run_dir/elog.ini"
printf '[output]\nengine_log = true\n[report]\nurls = http://127.0.0.1:9/jobs\ntoken_env = XQ_ELOG_TOKEN\nattempts = 1\nfinal_wait = 0\n' \
    >>"$run_dir/elog.ini"
XQ_ELOG_TOKEN=tok-5e1f0a93 "$xq" run "$run_dir/elog.ini" --set output.dir="$run_dir/elog" \
    >"$run_dir/elog.out" 2>&1
check "run engine_log: rank 0's log of engine ext" 0 " ext#1 < info string env PATH=" \
    cat "$run_dir/elog/engine.r0.ext.log"
check "run engine_log: ... none for the builtin engine" 0 "^engine\\.r0\\.ext\\.log$" \
    ls "$run_dir/elog" -I '*.pgn' -I '*.json' -I '*.xqj' -I '*.html' -I '*.lock' -I spool
check "run engine_log: ... never the report token" 1 "^$" grep -r tok-5e1f0a93 "$run_dir/elog"
"$xq" run "$jobs/sprt-weights.ini" --set job.rounds=2 --set output.dir="$run_dir/limit" \
    >"$run_dir/limit.log" 2>&1
check "run: an SPRT at its game limit has no verdict" 0 "^SPRT: no verdict" cat "$run_dir/limit.log"
check "run: ... and records it" 0 '^"no verdict"$' jq .state "$run_dir/limit/result.json"
check "run: a log file gets whole lines, no carriage return" 1 "^0$" grep -c $'\r' "$run_dir/limit.log"
check "run: the summary once" 0 "^1$" grep -c "^Results of" "$run_dir/limit.log"
# Two pairs that both scored 1: no error bar (not "0.00 +/- 17.00") on the console, in
# report.json (fields added, the old ones kept) and on the page; rank 0's diagnostics line only
# with --verbose, its figures always in the report.
check "run: no error bar on 4 games" 0 "^Elo: 0.00 \(no error bar: 4 games, fewer than 10\)" \
    cat "$run_dir/limit.log"
check "run: report.json says so" 0 '^point null 0.0 \(no error bar: 4 games, fewer than 10\) true$' \
    jq -r '.elo | "\(.estimate) \(.elo_bound) \(.text) \(has("error"))"' "$run_dir/limit/report.json"
check "run: the page says so" 0 "no error bar: 4 games" cat "$run_dir/limit/report.html"
check "run: the Elo plot's band has no width without an interval" 0 "^true$" jq \
    '[.plots[] | select(.id == "elo") | .series[0] | (.lo == .y and .hi == .y)] == [true]' \
    "$run_dir/limit/report.json"
check "run: no Coordinator: line without --verbose" 1 "^0$" grep -c "^Coordinator: " "$run_dir/limit.log"
check "run: the coordinator's costs in the report" 0 "^2 true$" \
    jq -r '"\(.timings.coordinator.results) \(.timings.coordinator.wall_s > 0)"' "$run_dir/limit/report.json"
check "run --verbose: the Coordinator: line" 0 "^Coordinator: 2 results in " "$xq" run \
    "$jobs/sprt-weights.ini" --verbose --set job.rounds=2 --set output.dir="$run_dir/verbose"
check "run: a rerun over a journal asks for --resume or --fresh" 2 "--resume, or start afresh with --fresh" \
    "$xq" run "$jobs/sprt-weights.ini" --set job.rounds=2 --set output.dir="$run_dir/limit"
# A directory in use by another run (its lock held, as flock(1) holds it here) is left as it
# is: not moved aside by --fresh, no file truncated or rebuilt.
mkdir -p "$run_dir/busy"
echo KEEP >"$run_dir/busy/games.pgn"
cp "$run_dir/limit/journal.xqj" "$run_dir/busy/journal.xqj"
check "run: a directory in use by another run is refused" 1 "in use by another xqforge run" \
    flock "$run_dir/busy/.xqforge.lock" "$xq" run "$jobs/sprt-weights.ini" --set job.rounds=2 \
    --set output.dir="$run_dir/busy" --fresh
check "run: ... and left untouched" 0 "^KEEP$" cat "$run_dir/busy/games.pgn"
check "run: --resume without a journal" 2 "no journal at" "$xq" run "$jobs/sprt-weights.ini" \
    --resume --set output.dir="$run_dir/none"
check "run: --resume and --fresh together" 2 "exclude each other" "$xq" run \
    "$jobs/sprt-weights.ini" --resume --fresh
# A gauntlet of three depths (deterministic games): d2 scores 5/6 against d1 (W 5 L 1) and
# 1.5/6 against d3. The joint rating anchored at d3 (job.anchor), by hand: with the prior's one
# virtual draw per pair, d3 - d2 = 400 log10(5/2) = 159.2 and d2 - d1 = 400 log10(5.5/1.5) =
# 225.7; the gauntlet is a tree, so each difference's variance is the sum of its edges'
# 1 / (7 p (1 - p)): 0.7 (p = 5/7) and 0.8485 (p = 5.5/7), and the error bars are
# 1.96 sqrt(0.7) 400/ln 10 = 284.9 (d2) and 1.96 sqrt(1.5485) 400/ln 10 = 423.7 (d1).
printf '%s\n' '[job]' 'kind = match' 'rounds = 3' 'concurrency = 2' '[engine d2]' 'depth = 2' \
    '[engine d1]' 'depth = 1' '[engine d3]' 'depth = 3' '[time]' 'tc = inf' >"$run_dir/gauntlet.ini"
"$xq" run "$run_dir/gauntlet.ini" --set job.anchor=d3 --set output.dir="$run_dir/gauntlet" \
    >"$run_dir/gauntlet.log" 2>&1
check "run: the rating states its anchor and prior" 0 \
    "^Joint rating \(Bradley-Terry over all games, Elo relative to the anchor d3 = 0; prior: 1 virtual draw added to every pair that met\):$" \
    cat "$run_dir/gauntlet.log"
check "run: the anchor reads 0" 0 "^   1 d3 +6 +4\.5  0 \(anchor\)$" cat "$run_dir/gauntlet.log"
check "run: ratings relative to the anchor" 0 "^   2 d2 +12 +6\.5  -159\.2 \+/- 284\.9$" \
    cat "$run_dir/gauntlet.log"
check "run: ... errors relative to the anchor" 0 "^   3 d1 +6 +1\.0  -384\.9 \+/- 423\.7$" \
    cat "$run_dir/gauntlet.log"
check "run: the cross-table on the console" 0 "^d2 vs d1 +83\.3% +6 +0\.0%$" cat "$run_dir/gauntlet.log"
check "run: the cross-table in result.json" 0 '^d2 d1 6 5 0 1 5 0\.833333[0-9]* d2 d3 6 1 1 4 1\.5 0\.25 $' \
    jq -j '.crosstable[] | "\(.engine) \(.opponent) \(.games) \(.wins) \(.draws) \(.losses) \(.points) \(.score) "' \
    "$run_dir/gauntlet/result.json"
check "run: the cross-table and anchor in report.json" 0 '^2 d3 1 -384.9$' \
    jq -r '"\(.crosstable | length) \(.rating.anchor) \(.rating.prior_draws) \(.ratings[2].elo * 10 | round / 10)"' \
    "$run_dir/gauntlet/report.json"
check "run: the cross-table on the page" 0 "83.3% in 6 games, 0.0% draws" cat "$run_dir/gauntlet/report.html"
check "run: an anchor that is no engine is refused" 2 "\[job\] anchor: 'd4' is not one of the engines \(d2, d1, d3\)" \
    "$xq" run "$run_dir/gauntlet.ini" --set job.anchor=d4 --set output.dir="$run_dir/gauntlet.bad"
rm -rf "$run_dir"
export ASAN_OPTIONS=$asan_before

# Bad input exits 2 (README), also where it is found late: a builtin engine's unknown option,
# a spool path that is no directory.
check "play: an unknown builtin option is bad input" 2 "engine 'engine1': option.nope: the builtin engine has no option 'nope'" \
    "$xq" play -engine builtin option.nope=3 -engine builtin -each depth=1 -rounds 1
check "upload: a spool that does not exist is bad input" 2 "No such file" \
    "$xq" upload --spool /nonexistent/spool --url http://127.0.0.1:9/x

# Texel commands: usage and clear errors.
check "texel without subcommand" 2 "usage: xqforge texel extract" "$xq" texel
check "texel --help" 0 "quiescence search" "$xq" texel --help
check "texel fit --help" 0 "quiescence search" "$xq" texel fit --help
check "texel bad subcommand" 2 "unknown subcommand 'fitt'" "$xq" texel fitt
check "texel info missing file" 2 "No such file" "$xq" texel info /nonexistent.xqd
check "texel fit without data" 2 "--data FILE is required" "$xq" texel fit --epochs 3
check "texel fit bad lr" 2 "bad option or value: --lr -1" "$xq" texel fit --data x --lr -1
check "texel fit bad params" 2 "'horse' is not a weight" "$xq" texel fit --data x --params horse
check "texel extract no files" 2 "usage" "$xq" texel extract -o /tmp/x.xqd
check "texel extract missing PGN" 2 "nonexistent.pgn: No such file" \
    "$xq" texel extract -o /tmp/xq-cli-$$.xqd /nonexistent.pgn
rm -f /tmp/xq-cli-$$.xqd

# texel extract on unusable input: exit 2 naming the file (and line), nothing written; an
# output that cannot be written is a failure while running (1).
tx=$(mktemp -d)
"$xq" play -engine builtin name=a -engine builtin name=b -each depth=1 -rounds 2 -repeat \
    -maxplies 60 -pgnout file="$tx/g.pgn" >"$tx/play.log" 2>&1
# The summary's Terminations line lists "name N" items, comma-separated, that add up to Games.
terms=$(grep -m1 '^Terminations:' "$tx/play.log")
term_sum=$(($(grep -oE '[0-9]+(,|$)' <<<"$terms" | tr -d , | paste -sd+)))
if [[ $terms =~ ^Terminations:(\ [a-z0-9 -]+\ [0-9]+)(,\ [a-z0-9 -]+\ [0-9]+)*$ && $term_sum == 4 ]]; then
    passes=$((passes + 1))
else
    echo "FAIL: play summary: '$terms' (sum ${term_sum:-none}, 4 games expected)"
    fails=$((fails + 1))
fi
: >"$tx/empty.pgn"
head -c 4000 "$xq" >"$tx/garbage.pgn" # an ELF file: not a PGN
printf '[Event "x"]\n[Result "1-0"]\n\n' >"$tx/tags.pgn"
printf '[Result "1-0"]\n\n1. a0a5 1-0\n\n[Result "0-1"]\n\n1. h0h9 0-1\n' >"$tx/illegal.pgn"
mkdir "$tx/dir"
x_out=(-o "$tx/out.xqd")
check "texel extract empty file" 2 "empty.pgn: an empty file, no games" "$xq" texel extract "${x_out[@]}" "$tx/empty.pgn"
check "texel extract binary garbage" 2 "garbage.pgn: none of its [0-9]+ games could be read \(the first: line" \
    "$xq" texel extract "${x_out[@]}" "$tx/garbage.pgn"
check "texel extract tags only" 2 "tags.pgn: none of its 1 games .*line 3: tags without moves" \
    "$xq" texel extract "${x_out[@]}" "$tx/tags.pgn"
check "texel extract all moves illegal" 2 "none of its 2 games could be read \(the first: line 3: move 1 'a0a5'" \
    "$xq" texel extract "${x_out[@]}" "$tx/illegal.pgn"
check "texel extract a directory" 2 "dir: a directory, not a PGN file" "$xq" texel extract "${x_out[@]}" "$tx/dir"
check "texel extract no quiet position" 2 "no quiet position in the 4 games read" \
    "$xq" texel extract --skip 1000 "${x_out[@]}" "$tx/g.pgn"
check "texel extract: one bad file of two" 2 "empty.pgn: an empty file" \
    "$xq" texel extract "${x_out[@]}" "$tx/g.pgn" "$tx/empty.pgn"
check "texel extract: ... writes nothing" 1 "" test -e "$tx/out.xqd"
check "texel extract unwritable output" 1 "nope/out.xqd.tmp: No such file" \
    "$xq" texel extract -o "$tx/nope/out.xqd" "$tx/g.pgn"
check "texel extract skips bad games, keeps good ones" 0 "^4 games \(0 without a result, 2 unreadable\)" \
    bash -c "cat '$tx/illegal.pgn' '$tx/g.pgn' | '$xq' texel extract -o '$tx/a.xqd' /dev/stdin 2>/dev/null"

# nnue extract: the position before each scored quiet move (not in check, not a capture) past
# --min-ply, each position once; a hand-written game of 6 plies whose 5th and 6th are captures.
printf '%s\n' '[Event "t"]' '[Result "1-0"]' '' \
    '1. h2e2 {+0.20/5 0.010s} h9g7 {-0.15/5 0.010s} 2. h0g2 {+0.30/5 0.010s}' \
    'i9h9 {-0.20/6 0.010s} 3. e2e6 {+0.40/6 0.010s} b7b0 {-0.50/6 0.010s} 1-0' >"$tx/n.pgn"
check "nnue extract: quiet scored positions" 0 "n.xqp: 4 positions from 1 games \(4 quiet positions looked at, 0 repeated" \
    "$xq" nnue extract --min-ply 0 -o "$tx/n.xqp" "$tx/n.pgn"
check "nnue extract --min-ply" 0 ": 2 positions from 1 games" "$xq" nnue extract --min-ply 2 -o "$tx/n.xqp" "$tx/n.pgn"
check "nnue extract: each position once" 0 ": 4 positions from 2 games \(8 quiet positions looked at, 4 repeated" \
    "$xq" nnue extract --min-ply 0 -o "$tx/n.xqp" "$tx/n.pgn" "$tx/n.pgn"
check "nnue extract: games of xqforge play" 0 ": [1-9][0-9]* positions from 4 games" \
    "$xq" nnue extract -o "$tx/n.xqp" "$tx/g.pgn"
check "nnue extract: unreadable file, nothing written" 2 "empty.pgn: no game could be read" \
    "$xq" nnue extract -o "$tx/n2.xqp" "$tx/empty.pgn"
check "nnue extract: ... writes nothing" 1 "" test -e "$tx/n2.xqp"
check "nnue extract unwritable output" 1 "nope/n.xqp.tmp: No such file" \
    "$xq" nnue extract -o "$tx/nope/n.xqp" "$tx/n.pgn"
check "nnue extract bad option" 2 "--min-ply 'x': expected 0..1000" "$xq" nnue extract --min-ply x "$tx/n.pgn"

# nnue net: a net's version and feature set (XQ1 version 1, the king-bucketed XQ2 version 2).
check "nnue net --random xq1" 0 "random net, hidden 32" "$xq" nnue net --random 32 -o "$tx/x1.nnue"
check "nnue net: version 1" 0 "format       : XQNNUE version 1 \(XQ1\), 1260 features" "$xq" nnue net "$tx/x1.nnue"
check "nnue net --random xq2" 0 "random XQ2 net, hidden 32" \
    "$xq" nnue net --random 32 --features xq2 -o "$tx/x2.nnue"
check "nnue net: version 2" 0 "format       : XQNNUE version 2 \(XQ2\), 7560 features" "$xq" nnue net "$tx/x2.nnue"
check "nnue net --features bad" 2 "--features xq3: xq1 or xq2" \
    "$xq" nnue net --random 32 --features xq3 -o "$tx/x3.nnue"

# texel fit: unusable inputs exit 2; a checkpoint is resumed only by the fit it was made from
# (a changed dataset or setting is refused, named), and --fresh starts it and its loss file over.
check "texel fit missing dataset" 2 "nonexistent.xqd: No such file" "$xq" texel fit --data /nonexistent.xqd
check "texel fit a PGN as dataset" 2 "not a Texel dataset \(bad magic\)" "$xq" texel fit --data "$tx/g.pgn"
check "texel fit missing start weights" 2 "nonexistent.txt: No such file" \
    "$xq" texel fit --data "$tx/a.xqd" --start /nonexistent.txt
check "texel info a directory" 2 "dir: Is a directory" "$xq" texel info "$tx/dir"
fit=("$(realpath "$xq")" texel fit --data "$tx/a.xqd" --epochs 3 --params eval --threads 1)
check "texel fit" 0 "^Tuned weights" bash -c "cd '$tx' && ${fit[*]}"
check "texel fit again resumes" 0 "^Resuming at epoch 3" bash -c "cd '$tx' && ${fit[*]}"
"$xq" texel extract --skip 20 -o "$tx/a.xqd" "$tx/g.pgn" >/dev/null 2>&1
check "texel fit: changed dataset refused" 2 \
    "checkpoint ./texel.ckpt was made from another dataset \(hash [0-9a-f]{16}, now [0-9a-f]{16}\): start afresh with --fresh" \
    bash -c "cd '$tx' && ${fit[*]}"
check "texel fit --fresh" 0 "^Fitted K" bash -c "cd '$tx' && ${fit[*]} --fresh"
check "texel fit --fresh: the loss file starts over (header, epochs 0..3)" 0 "^5 " wc -l "$tx/texel-loss.csv"
check "texel fit: changed epochs refused" 2 "was made for 3 epochs, now 4" \
    bash -c "cd '$tx' && ${fit[*]} --epochs 4"
rm -rf "$tx"

# judge: the rules' verdict on a move list (result and reason lines, exit 0), an illegal move or
# a move after the end refused by its number (exit 2); on a PGN (ours, cutechess's, fastchess's)
# the disagreeing games and a summary (exit 1 when any disagrees or is illegal, 2 unreadable).
pgns=$(dirname "$0")/data/pgn
mate_fen="4k1b2/R8/9/9/9/9/9/9/1R7/3K5 w - - 0 1"
perp_fen="4k1b2/9/R8/9/9/9/8P/9/9/3K5 w - - 0 1"
horses="b0c2 b9c7 c2b0 c7b9 b0c2 b9c7 c2b0 c7b9"
check "judge --help" 0 "--ranks 0\|1\|auto" "$xq" judge --help
check "judge checkmate: result" 0 "^result: 1-0$" "$xq" judge --fen "$mate_fen" b1b9
check "judge checkmate: reason" 0 "^reason: checkmate$" "$xq" judge --fen "$mate_fen" b1b9
check "judge black mates" 0 "^result: 0-1$" "$xq" judge --fen "3k5/1r7/9/9/9/9/9/9/r8/4K4 b - - 0 1" b8b0
check "judge the game goes on: result" 0 "^result: \*$" "$xq" judge h2e2 h9g7
check "judge the game goes on: reason" 0 "^reason: none$" "$xq" judge h2e2 h9g7
check "judge repetition, seed" 0 "^reason: repetition$" "$xq" judge --rules seed $horses
check "judge repetition, asian" 0 "^reason: repetition$" "$xq" judge --rules asian $horses
check "judge repetition draws" 0 "^result: 1/2-1/2$" "$xq" judge $horses
check "judge asian: perpetual check loses at the third occurrence" 0 "^reason: perpetual check$" \
    "$xq" judge --rules asian --fen "$perp_fen" a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9
check "judge seed: ... the game goes on to the fourth identical check" 0 "^result: \*$" \
    "$xq" judge --rules seed --fen "$perp_fen" a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9
check "judge seed: perpetual check" 0 "^result: 0-1$" "$xq" judge --fen "$perp_fen" \
    a7a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9 e9e8 a9a8 e8e9 a8a9
# Rule C (tests/test_rules.c's protected-chariot cycle): Red's horse chases Black's chariot.
chase_fen="2r1k4/9/9/2r6/1N7/9/9/9/9/3K5 w - - 0 1"
chase="b5d4 c6c7 d4b5 c7c6 b5d4 c6c7 d4b5 c7c6"
check "judge asian: a perpetual chase cycle" 0 "^reason: perpetual chase$" \
    "$xq" judge --rules asian --fen "$chase_fen" $chase
check "judge asian: ... lost by the chaser" 0 "^result: 0-1$" "$xq" judge --rules asian --fen "$chase_fen" $chase
check "judge seed: ... a repetition" 0 "^reason: repetition$" "$xq" judge --rules seed --fen "$chase_fen" $chase
chase_pgn() { # a PGN of the chase cycle under asian recorded with result $1 and termination $2
    printf '[Rules "asian"]\n[FEN "%s"]\n[Result "%s"]\n[Termination "%s"]\n\n%s %s\n' \
        "$chase_fen" "$1" "$2" "$chase" "$1" | "$xq" judge -
}
check "judge PGN: a perpetual chase recorded as such agrees" 0 "^games 1, agree 1" chase_pgn 0-1 "perpetual chase"
check "judge PGN: a perpetual chase recorded as a repetition disagrees" 1 \
    "recorded 1/2-1/2 \(repetition\), judged 0-1 \(perpetual chase at ply 8\) under asian" \
    chase_pgn 1/2-1/2 repetition
check "judge illegal move refused with its number" 2 "move 3 'h0h9' \(ranks 0-9\): illegal" \
    "$xq" judge h2e2 h9g7 h0h9
check "judge not a move" 2 "move 2 'zz'" "$xq" judge h2e2 zz
check "judge moves after the end refused" 2 "move 9 'h2e2': the game is over after move 8 \(1/2-1/2, repetition\)" \
    "$xq" judge $horses h2e2
check "judge ranks 1-10 when a move names rank 10" 0 "^result: \*$" "$xq" judge h3e3 h10g8
check "judge ranks 1-10 when only they are legal" 0 "^result: \*$" "$xq" judge h3e3
check "judge --ranks 1 fixes the ranks" 2 "move 1 'h2e2' \(ranks 1-10\): illegal" \
    "$xq" judge --ranks 1 h2e2
check "judge SAN (cutechess)" 0 "^reason: checkmate$" "$xq" judge --fen "$mate_fen" Rb10#
check "judge bad FEN" 2 "invalid FEN: rank 1 has 8 points" "$xq" judge --fen "4k4/9/9/9/9/9/9/9/8/4K4 w" h2e2
check "judge bad rules" 2 "--rules nope: expected seed or asian" "$xq" judge --rules nope h2e2
check "judge nothing to judge" 2 "give moves, --fen FEN, or a PGN file" "$xq" judge
check "judge PGN: one game agrees, one does not" 1 "^games 2, agree 1, disagree 1, illegal 0$" \
    "$xq" judge "$pgns/ours.pgn"
check "judge PGN: the disagreeing game, recorded vs judged" 1 \
    "^game 2, beta vs alpha \(line 23\): disagrees: recorded 1/2-1/2 \(repetition\), judged 0-1 \(perpetual check at ply 13\) under seed" \
    "$xq" judge "$pgns/ours.pgn"
check "judge PGN asian: moves after the rules' end disagree" 1 \
    "judged 0-1 \(perpetual check at ply 9\) under asian: the moves go on after the rules end the game at ply 9" \
    "$xq" judge --rules asian "$pgns/ours.pgn"
check "judge cutechess PGN (SAN, ranks 1-10)" 0 "^games 3, agree 3, disagree 0, illegal 0$" \
    "$xq" judge "$pgns/cutechess.pgn"
check "judge fastchess PGN (coordinates, ranks 1-10)" 0 "^games 2, agree 2, disagree 0, illegal 0$" \
    "$xq" judge --rules asian "$pgns/fastchess.pgn"
check "judge --all lists agreeing games" 0 "^game 1, fsf-a vs fsf-b \(line 3\): agrees: recorded 1-0 \(White mates\), judged 1-0 \(checkmate at ply 1\)" \
    "$xq" judge --all "$pgns/cutechess.pgn"
check "judge PGN: an illegal game named by game and ply" 1 \
    "^game 2, a vs b \(line 5\): illegal move at ply 3: 'h0h9' \(ranks 0-9\): illegal in this position \(line 8\)$" \
    bash -c "printf '[Result \"*\"]\n\n1. h2e2 *\n\n[White \"a\"]\n[Black \"b\"]\n1. h2e2 h9g7 2.\nh0h9 1-0\n' | '$xq' judge -"
check "judge PGN: a rule named where no rule ends the game" 1 "the record says checkmate, no rule ends the game there" \
    bash -c "printf '[Termination \"checkmate\"]\n\n1. h2e2 h9g7 1-0\n' | '$xq' judge -"
check "judge PGN: a draw adjudication with a decisive result" 1 "draw adjudication with a decisive result" \
    bash -c "printf '[Termination \"draw adjudication\"]\n\n1. h2e2 h9g7 1-0\n' | '$xq' judge -"
check "judge PGN: unreadable game exits 2" 2 "^game 1, \? vs \? \(line 1\): unreadable: line 4: '2-0' is neither" \
    bash -c "printf '[Result \"1-0\"]\n\n1. h2e2\nh9g7 2-0\n' | '$xq' judge -"
check "judge PGN: another variant is unreadable" 2 "variant 'chess' is not xiangqi" \
    bash -c "printf '[Variant \"chess\"]\n\n1. e4 1-0\n' | '$xq' judge -"
check "judge missing PGN" 2 "nonexistent.pgn: No such file" "$xq" judge /nonexistent.pgn
check "judge a directory" 2 "a directory, not a PGN file" "$xq" judge "$pgns/"
check "judge an empty PGN" 2 "no games: not a PGN file" "$xq" judge /dev/null
jd=$(mktemp -d)
"$xq" play -engine builtin name=a -engine builtin name=b -each depth=2 -rounds 2 -repeat -rules asian \
    -maxplies 120 -pgnout file="$jd/games.pgn" >/dev/null 2>&1
check "judge agrees with every game play wrote" 0 "^games 4, agree 4, disagree 0, illegal 0$" \
    "$xq" judge "$jd/games.pgn"
check "PGN Termination: the standard's value" 0 '^\[Termination "(normal|adjudication)"\]$' cat "$jd/games.pgn"
check "PGN TerminationDetails: ours" 0 '^\[TerminationDetails "[a-z]' cat "$jd/games.pgn"
# -pgnout notation: every notation judge reads back, the same games (asian rules, depth 2,
# real games: soldiers and horses in tandem come up).
for nt in "notation=wxf" "notation=iccs" "ranks=1"; do
    "$xq" play -engine builtin name=a -engine builtin name=b -each depth=2 -rounds 2 -repeat -rules asian \
        -maxplies 120 -pgnout file="$jd/$nt.pgn" $nt >/dev/null 2>&1
    check "judge agrees with every game play wrote in $nt" 0 "^games 4, agree 4, disagree 0, illegal 0$" \
        "$xq" judge "$jd/$nt.pgn"
done
check "PGN notation=wxf: WXF moves" 0 '^1\. C2\.5 \{book\} H8\+7 \{book\}' cat "$jd/notation=wxf.pgn"
check "PGN notation=wxf: its Format tag" 0 '^\[Format "WXF"\]$' cat "$jd/notation=wxf.pgn"
check "PGN notation=iccs: ICCS moves" 0 '^1\. H2-E2 \{book\} H9-G7 \{book\}' cat "$jd/notation=iccs.pgn"
check "PGN ranks=1: ranks 1-10" 0 '^1\. h3e3 \{book\} h10g8 \{book\}' cat "$jd/ranks=1.pgn"
check "play -pgnout notation=san refused" 2 "notation=san: expected coordinate, iccs or wxf" \
    "$xq" play -engine name=a -engine name=b -pgnout file="$jd/x.pgn" notation=san
check "play -pgnout without a file refused" 2 "-pgnout: give file=F" \
    "$xq" play -engine name=a -engine name=b -pgnout notation=wxf
check "play -pgnout ranks=1 is for coordinates" 2 "ranks=1 is for notation=coordinate" \
    "$xq" play -engine name=a -engine name=b -pgnout file="$jd/x.pgn" notation=wxf ranks=1
# -openings format=pgn: the first plies of each game of a PGN (XQBase's WXF and ICCS, cutechess's).
check "judge XQBase WXF PGN" 0 "^games 2, agree 2, disagree 0, illegal 0$" "$xq" judge --rules asian "$pgns/xqbase-wxf.pgn"
check "judge [Format \"ICCS\"]: ranks 0-9, never guessed" 1 "'H3-E3' \(ranks 0-9\): illegal" \
    bash -c "printf '[Format \"ICCS\"]\n\n1. H3-E3 *\n' | '$xq' judge -"
check "judge XQBase ICCS PGN" 0 "^games 2, agree 2, disagree 0, illegal 0$" "$xq" judge --rules asian "$pgns/xqbase-iccs.pgn"
"$xq" play -engine name=a depth=1 -engine name=b depth=1 -openings file="$pgns/xqbase-wxf.pgn" format=pgn \
    plies=8 -rounds 1 -maxplies 10 -pgnout file="$jd/book.pgn" >/dev/null 2>&1
check "play -openings format=pgn plies=8: the game's first 8 plies as the book" 0 \
    '^4\. b2b7 \{book\} b9c7 \{book\}' cat "$jd/book.pgn"
check "play -openings format=pgn: cutechess's games" 0 "2 games, 3 openings" \
    "$xq" play -engine name=a depth=1 -engine name=b depth=1 -openings file="$pgns/cutechess.pgn" \
    format=pgn plies=2 -rounds 2 -maxplies 4
check "play -openings format=foo refused" 2 "format=foo: expected epd or pgn" \
    "$xq" play -engine name=a -engine name=b -each depth=1 -openings file="$pgns/ours.pgn" format=foo
check "play -openings: a PGN read as EPD names format=pgn" 2 "a PGN file read as EPD \(give format=pgn\)" \
    "$xq" play -engine name=a -engine name=b -each depth=1 -openings file="$pgns/ours.pgn"
rm -rf "$jd"

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
