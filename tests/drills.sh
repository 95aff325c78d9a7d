#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault drills (label `drill`): a job on 3 MPI ranks is killed with SIGKILL at random moments
# several times (a worker rank, then the coordinator), each time rerun so that it resumes,
# and must end with exactly the totals of an uninterrupted run of the same job (node-limited
# games are deterministic): no game lost, none counted twice. External engines (xqforge's own
# `uci`, so games stay deterministic) are killed mid-game: each kill is one recorded crash
# loss and the job still plays every game. An unwritable output directory, and a disk that
# fills up (a 64 KiB tmpfs), stop the run with a clear error, the journal whole; engines that flood output, never answer isready or print a 10 MB line
# lose their game with memory bounded, and the next game runs.
# Usage: drills.sh XQFORGE JOB [KILLS]  (KILLS per drill, default 3; XQ_DRILL_SEED fixes the
# random moments)
set -u
xq=$1 job=$2 kills=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RANDOM=${XQ_DRILL_SEED:-$$}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
sets=(--set job.kind=match --set job.rounds=40 --set job.concurrency=1)
failed=0
fail() { echo "FAIL: $*"; failed=1; }
summary() { grep -E '^(Games|Ptnml)' "$1"; }
games_of() { sed -n 's/^Games: \([0-9]*\),.*/\1/p' "$1" | tail -1; }

# The pid of rank R of the run writing to dir ($1), or empty.
rank_pid() {
    for p in $(pgrep -f "output.dir=$1\$"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" &&
            echo "$p" && return
    done
}

# Games in a PGN file: one [Result] tag each; a torn game would lack it or glue on the next.
pgn_games() { grep -c '^\[Result ' "$1"; }

# A random moment: 0.5 to 4.4 s after the start (the uninterrupted job takes about 8 s).
pause() { sleep "$((RANDOM % 4)).$((RANDOM % 10))"; sleep 0.5; }

# drill NAME RANK: kills rank RANK $kills times at random moments, then lets the job finish.
drill() {
    local name=$1 rank=$2 dir=$work/$1 runs=0 done_kills=0
    for ((k = 0; k < kills; k++)); do
        local again=()
        [[ -e $dir/journal.xqj ]] && again=(--resume)
        "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$dir" "${again[@]}" \
            >"$work/$name.$k.log" 2>&1 &
        local mp=$!
        runs=$((runs + 1))
        pause
        local p
        p=$(rank_pid "$dir" "$rank")
        if [[ -n $p ]]; then
            kill -KILL "$p" && done_kills=$((done_kills + 1))
        fi
        wait "$mp" 2>/dev/null
        # Open MPI ends the other ranks; make sure none of this run is left.
        for q in $(pgrep -f "output.dir=$dir\$"); do kill -KILL "$q" 2>/dev/null; done
    done
    local again=()
    [[ -e $dir/journal.xqj ]] && again=(--resume)
    "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$dir" "${again[@]}" \
        >"$work/$name.end.log" 2>&1 ||
        fail "$name: the final run failed: $(tail -3 "$work/$name.end.log")"
    runs=$((runs + 1))
    local got lost
    got=$(summary "$work/$name.end.log")
    lost=$((want_games - $(games_of "$work/$name.end.log")))
    [[ $got == "$want" ]] || fail "$name: totals differ: want '$want' got '$got'"
    # The PGN is rebuilt from the journal: exactly its games, none torn or doubled.
    [[ $(pgn_games "$dir/games.pgn") == "$want_games" ]] ||
        fail "$name: the PGN holds $(pgn_games "$dir/games.pgn") games, want $want_games"
    echo "drill $name: $runs runs, $done_kills kills of rank $rank, games lost $lost," \
        "totals $([[ $got == "$want" ]] && echo equal || echo DIFFERENT)"
}

"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/ref" >"$work/ref.log" 2>&1 ||
    { echo "FAIL: uninterrupted run: $(tail -3 "$work/ref.log")"; exit 1; }
want=$(summary "$work/ref.log")
want_games=$(games_of "$work/ref.log")
drill worker 1
drill coordinator 0

# External engines killed mid-game: every game is still played, each kill is a crash loss.
eng=(--set engine.new.proto=uci --set engine.new.cmd="$xq" --set engine.new.args=uci)
dir=$work/engine
"${mpi[@]}" "$xq" run "$job" "${sets[@]}" "${eng[@]}" --set output.dir="$dir" >"$work/engine.log" 2>&1 &
mp=$!
# Kills start once a pair is journaled: a kill during a rank's start-up engine check (options,
# bench) is a refused engine, which ends the run by design, not a crash in a game.
size0=
for _ in $(seq 1200); do
    [[ -z $size0 && -s $dir/journal.xqj ]] && size0=$(stat -c %s "$dir/journal.xqj")
    [[ -n $size0 ]] && (($(stat -c %s "$dir/journal.xqj") > size0)) && break
    sleep 0.05
done
engine_kills=0
for ((tries = 0; engine_kills < kills && tries < 40 && $(jobs -r | wc -l) > 0; tries++)); do
    pause
    for w in $(rank_pid "$dir" 1) $(rank_pid "$dir" 2); do
        e=$(pgrep -P "$w" | head -1)
        [[ -n $e ]] && kill -KILL "$e" && engine_kills=$((engine_kills + 1)) && break
    done
done
wait "$mp" || fail "engine drill: the run failed: $(tail -3 "$work/engine.log")"
eg=$(games_of "$work/engine.log")
crashes=$(grep -o 'crash [0-9]*' "$work/engine.log" | awk '{s += $2} END {print s + 0}')
[[ $eg == "$want_games" ]] || fail "engine drill: $eg games, want $want_games"
((crashes <= engine_kills)) || fail "engine drill: $crashes crash losses for $engine_kills kills"
echo "drill engine: 1 run, $engine_kills engine kills, $crashes crash losses recorded," \
    "games lost $((want_games - eg))"

# An output directory that cannot be written: a clear error on every rank, no hang.
if timeout 60 "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir=/proc/xqforge-no \
    >"$work/unwritable.log" 2>&1; then
    fail "a run with an unwritable output directory succeeded"
fi
grep -q "cannot create /proc/xqforge-no" "$work/unwritable.log" ||
    fail "unwritable output: no clear error: $(tail -3 "$work/unwritable.log")"
echo "drill unwritable: 1 run, clear error, exit non-zero"

# A full disk: the output directory on a 64 KiB tmpfs fills up during the job. The run
# stops with a clear error; its journal stays whole (every record it holds replays), and
# the job copied to a disk with room resumes to exactly the uninterrupted totals.
full=$work/full
mkdir -p "$full"
if mount -t tmpfs -o size=64k tmpfs "$full" 2>/dev/null; then
    if timeout 300 "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$full/out" \
        >"$work/full.log" 2>&1; then
        fail "disk full: the run succeeded on a 64 KiB disk"
    fi
    grep -qiE "no space|journal" "$work/full.log" ||
        fail "disk full: no clear error: $(tail -3 "$work/full.log")"
    cp -r "$full/out" "$work/roomy"
    umount "$full"
    "${mpi[@]}" "$xq" run "$job" "${sets[@]}" --set output.dir="$work/roomy" --resume \
        >"$work/roomy.log" 2>&1 || fail "disk full: the resumed run failed: $(tail -3 "$work/roomy.log")"
    got=$(summary "$work/roomy.log")
    [[ $got == "$want" ]] || fail "disk full: totals differ after resume: want '$want' got '$got'"
    [[ $(pgn_games "$work/roomy/games.pgn") == "$want_games" ]] ||
        fail "disk full: the PGN holds $(pgn_games "$work/roomy/games.pgn") games, want $want_games"
    echo "drill disk-full: 2 runs, $(grep -m1 -oiE '[^:]*no space[^;]*' "$work/full.log" || echo 'journal error')," \
        "$(grep -m1 -o 'Resuming run [0-9a-f]*: [0-9]* units' "$work/roomy.log"), games lost" \
        "$((want_games - $(games_of "$work/roomy.log")))"
else
    echo "drill disk-full: skipped (cannot mount a tmpfs here)"
fi

# Hostile engines against the builtin one: two games each, the engine's game lost, the
# next game played, and the worker's peak memory bounded (well under 10 MB per line).
for mode in flood noready bigline; do
    log=$work/hostile-$mode.log
    /usr/bin/env time -f 'maxrss_kb %M' timeout 120 "$xq" play \
        -engine cmd="$here/data/fake-engines/hostile.sh" args="$mode" proto=uci name=hostile \
        ping=1000 -engine builtin name=xq -each tc=1+0.1 -rounds 1 -repeat \
        >"$log" 2>&1 || { fail "hostile $mode: play failed: $(tail -3 "$log")"; continue; }
    rss=$(sed -n 's/^maxrss_kb //p' "$log")
    grep -q '^Games: 2,' "$log" || fail "hostile $mode: not 2 games: $(tail -3 "$log")"
    ((rss < 200000)) || fail "hostile $mode: peak memory $rss kB"
    echo "drill hostile-$mode: 1 run, games $(games_of "$log")/2, peak RSS ${rss} kB," \
        "$(grep -m1 -oE 'Terminations: .*' "$log")"
done

((failed)) && { echo "0 passed, 1 failed"; exit 1; }
echo "1 passed, 0 failed"
