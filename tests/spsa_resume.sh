#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SPSA resumes with theta exact: an SPSA job on 3 MPI ranks is killed part-way (SIGKILL to worker rank
# 1), run again, and must (1) apply every game pair's result exactly once (iterations applied
# = rounds), (2) rebuild theta bit for bit: every trajectory row written before the kill is
# written again, identical, by the replay; (3) write a tuned weights file that the engine
# loads, holding the final theta rounded; (4) write each trajectory row once.
set -u
xq=$1 job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
out=$work/s

"${mpi[@]}" "$xq" run "$job" --set output.dir="$out" >"$work/1.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    [[ -f $out/spsa.csv ]] && (($(wc -l <"$out/spsa.csv") > 12)) && break
    sleep 0.05
done
killed=""
for p in $(pgrep -f "output.dir=$out"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
        kill -KILL "$p" && killed=$p
    fi
done
[[ -n $killed ]] || { kill -KILL $pid; pkill -KILL -f "output.dir=$out"; }
wait $pid 2>/dev/null
pkill -KILL -f "output.dir=$out" 2>/dev/null
[[ -n $killed ]] || fail "could not find worker rank 1 to kill"
grep -q "SPSA: 40 of 40" "$work/1.log" && fail "the job finished before the kill: make it longer"
# Complete rows only (a row may have been cut by the kill).
head -n -1 "$out/spsa.csv" >"$work/before.csv"
rows=$(wc -l <"$work/before.csv")

"${mpi[@]}" "$xq" run "$job" --set output.dir="$out" --resume >"$work/2.log" 2>&1 ||
    fail "resumed run failed: $(tail -5 "$work/2.log")"
grep -q "Resuming" "$work/2.log" || fail "the rerun did not replay the journal"
grep -q "SPSA: 40 of 40 iterations applied" "$work/2.log" ||
    fail "not every pair applied once: $(grep 'SPSA:' "$work/2.log")"
head -n "$rows" "$out/spsa.csv" | cmp -s - "$work/before.csv" ||
    fail "replayed trajectory differs from the one before the kill"
# The tuned file holds the last row's theta, rounded, and loads in the engine (UseNNUE false:
# the linear evaluation it was tuned with; under the net a note says the weights are unread).
last=$(tail -n 1 "$out/spsa.csv")
[[ ${last%%,*} == 40 ]] || fail "last trajectory row is not iteration 40: $last"
dups=$(cut -d, -f1 "$out/spsa.csv" | uniq -d | tr '\n' ' ')
[[ -z $dups ]] || fail "spsa.csv repeats the rows of iteration(s) $dups"
horse=$(awk -F, '{printf "%.0f", $2}' <<<"$last")
grep -qx "horse_mg $horse" "$out/spsa-weights.txt" || fail "tuned file lacks horse_mg $horse"
loaded=$(printf 'setoption name UseNNUE value false\nsetoption name WeightsFile value %s\nposition startpos\ngo depth 2\nquit\n' \
    "$out/spsa-weights.txt" | "$xq" uci 2>&1)
grep -q "^bestmove" <<<"$loaded" || fail "engine did not play with the tuned file: $loaded"
grep -q "WeightsFile:" <<<"$loaded" && fail "engine refused the tuned file: $loaded"
# The console has no plus-vs-minus Elo block (plus and minus change every pair), only the
# progress line's step count; report.json and the page carry the parameter table (c and a at
# the last iteration: c_end, and r_end c_end^2).
grep -q "Results of plus vs minus" "$work/2.log" && fail "the console prints plus vs minus's Elo"
grep -q "80/80 games.*iteration 40 of 40" "$work/2.log" || fail "no progress line with the step count"
python3 - "$out/report.json" <<'PY' || fail "report.json's SPSA parameter table is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in r["spsa"]["params"]}["chariot_mg"]
assert p["start"] == 500 and p["min"] == 300 and p["max"] == 1200, p
assert abs(p["c"] - 20) < 1e-9 and abs(p["a"] - 0.01 * 20 * 20) < 1e-9, p
t = r["tables"]["spsa"]
assert t["columns"] == ["parameter", "start", "current", "min", "max", "c", "a"], t
assert [row[0] for row in t["rows"]] == ["horse_mg", "cannon_mg", "chariot_mg"], t
PY
grep -q '<section id="table-spsa">' "$out/report.html" || fail "the page has no SPSA table"
echo "kill after $rows trajectory rows; $(grep Resuming "$work/2.log")"
echo "1 passed, 0 failed"
