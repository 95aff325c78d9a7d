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

check "play --help" 0 "-engine" "$xq" play --help
check "play needs two engines" 2 "two -engine groups" "$xq" play -engine builtin -each tc=1+0.1
check "play bad tc" 2 "tc=10[+]: expected" "$xq" play -engine builtin -engine builtin -each tc=10+
check "play no time control" 2 "no time control" "$xq" play -engine builtin -engine builtin
check "play unknown flag" 2 "unknown flag" "$xq" play -engine builtin -engine builtin -each depth=1 -bogus 3
check "play unknown engine key" 2 "unknown engine setting 'colour'" "$xq" play -engine colour=red -engine builtin -each depth=1
check "play missing openings" 2 "openings: /nonexistent" "$xq" play -engine builtin -engine builtin -each depth=1 -openings file=/nonexistent/book.epd
check "play bad sprt" 2 "elo0 < elo1" "$xq" play -engine builtin -engine builtin -each depth=1 -sprt elo0=5 elo1=0
check "play builtin pair" 0 "Games: 2, Wins" "$xq" play -engine builtin name=a -engine builtin name=b -each depth=2 -rounds 1 -repeat -maxplies 40

# Depth 4 against depth 1 and halved chariot and horse values: decisive within a few dozen games.
check "play stops when the SPRT decides" 0 "SPRT: H1 accepted" "$xq" play -engine builtin name=good \
    depth=4 -engine builtin name=weak depth=1 option.chariot_mg=300 option.chariot_eg=300 \
    option.horse_mg=100 option.horse_eg=100 -rounds 400 -repeat -sprt elo0=0 elo1=100

# xqforge run (one rank, no mpirun): honest exit status and the end state in result.json.
jobs=$(dirname "$0")/../jobs
run_dir=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer, leak checking off for `run` (Open MPI keeps allocations past
# MPI_Finalize by design; a reported leak would change the exit status being checked).
asan_before=${ASAN_OPTIONS-}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
check "run --help names the exit codes" 0 "130 interrupted" "$xq" run --help
check "run: an engine that cannot start exits 1 with its reason" 1 \
    "xqforge run: failed: .*cannot run /nonexistent/engine" "$xq" run "$jobs/sprt-weights.ini" \
    --set job.kind=match --set job.rounds=2 --set engine.new.proto=uci \
    --set engine.new.cmd=/nonexistent/engine --set output.dir="$run_dir/dead"
check "run: a failed run says so in result.json" 0 '^"failed"$' jq .state "$run_dir/dead/result.json"
"$xq" run "$jobs/sprt-weights.ini" --set job.rounds=2 --set output.dir="$run_dir/limit" \
    >"$run_dir/limit.log" 2>&1
check "run: an SPRT at its game limit has no verdict" 0 "^SPRT: no verdict" cat "$run_dir/limit.log"
check "run: ... and records it" 0 '^"no verdict"$' jq .state "$run_dir/limit/result.json"
check "run: a log file gets whole lines, no carriage return" 1 "^0$" grep -c $'\r' "$run_dir/limit.log"
check "run: the summary once" 0 "^1$" grep -c "^Results of" "$run_dir/limit.log"
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
rm -rf "$run_dir"
export ASAN_OPTIONS=$asan_before

# Bad input exits 2 (README), also where it is found late: a builtin engine's unknown option,
# a spool path that is no directory.
check "play: an unknown builtin option is bad input" 2 "option nope=3: unknown option" \
    "$xq" play -engine builtin option.nope=3 -engine builtin -each depth=1 -rounds 1
check "upload: a spool that does not exist is bad input" 2 "No such file" \
    "$xq" upload --spool /nonexistent/spool --url http://127.0.0.1:9/x

# Texel commands: usage and clear errors.
check "texel without subcommand" 2 "usage: xqforge texel extract" "$xq" texel
check "texel --help" 0 "quiescence search" "$xq" texel --help
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
    -maxplies 60 -pgnout file="$tx/g.pgn" >/dev/null 2>&1
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
check "texel fit --fresh: the loss file starts over" 0 "^4 " wc -l "$tx/texel-loss.csv"
check "texel fit: changed epochs refused" 2 "was made for 3 epochs, now 4" \
    bash -c "cd '$tx' && ${fit[*]} --epochs 4"
rm -rf "$tx"

echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
