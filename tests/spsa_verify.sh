#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [verify] after SPSA: a tiny SPSA job on 3 MPI ranks goes on, once tuned, to an SPRT of the
# tuned weights against the start weights on the same ranks. Killed during that SPRT (SIGKILL
# to worker rank 1) and run again with --resume, it must (1) replay the finished tuning to the
# same tuned weights, (2) resume the SPRT from its own journal (its games kept), and (3) end
# with the verdict on the console and in result.json, report.json and report.html.
set -u
xq=$1 job=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
out=$work/s
sets=(--set output.dir="$out" --set verify.max_games=80)
games() {
    local n
    n=$(grep -c '^\[Result ' "$out/verify/games.pgn" 2>/dev/null)
    echo "${n:-0}"
}

"${mpi[@]}" "$xq" run "$job" "${sets[@]}" >"$work/1.log" 2>&1 &
pid=$!
for _ in $(seq 1200); do
    (($(games) >= 10)) && break
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
grep -Eq "^Verify \(tuned vs start\): (H0|H1|limit)" "$work/1.log" && fail "the SPRT ended before the kill: make it longer"
grep -q "SPSA: 6 of 6 iterations applied" "$work/1.log" || fail "the tuning did not finish: $(tail -3 "$work/1.log")"
before=$(games)
((before >= 10)) || fail "the SPRT had not started before the kill ($before games)"
cp "$out/spsa-weights.txt" "$work/tuned.txt"

"${mpi[@]}" "$xq" run "$job" "${sets[@]}" --resume >"$work/2.log" 2>&1 ||
    fail "resumed run failed: $(tail -5 "$work/2.log")"
cmp -s "$out/spsa-weights.txt" "$work/tuned.txt" || fail "the replayed tuning wrote other weights"
(($(grep -c "^Resuming run" "$work/2.log") == 2)) ||
    fail "the tuning and the SPRT were not both resumed: $(grep Resuming "$work/2.log")"
line=$(grep "^Verify (tuned vs start): " "$work/2.log") || fail "no verdict line: $(tail -3 "$work/2.log")"
grep -Eq ": (H0 accepted|H1 accepted|limit reached): LLR -?[0-9.]+ \(-2\.94, 2\.94\), [0-9]+ games, Elo .* at 300 nodes \(elo0 0, elo1 10\)$" <<<"$line" ||
    fail "verdict line: $line"
python3 - "$out" "$before" <<'PY' || fail "the verdict is not in result.json / report.json"
import json, sys
out, before = sys.argv[1], int(sys.argv[2])
sub = json.load(open(out + "/verify/result.json"))
for name in ("result.json", "report.json"):
    v = json.load(open(out + "/" + name))["verify"]
    assert v["state"] in ("H0 accepted", "H1 accepted", "limit reached"), v
    assert v["games"] == sub["games"] >= before and v["games"] <= 80, (v, before)
    assert v["llr"] == sub["llr"] and v["lower"] < 0 < v["upper"], v
    assert v["elo0"] == 0 and v["elo1"] == 10 and v["max_games"] == 80, v
    assert v["time_control"] == "300 nodes" and "elo" in v and "error" in v, v
assert sub["new"] == "tuned" and sub["base"] == "start", sub
# Both engines are the tuning's without its weight option (option.horse_mg = 200): the files
# hold every weight, the start file SPSA's starts (the param lines' 250 and 500).
eng = {e["name"]: e for e in json.load(open(out + "/verify/report.json"))["job"]["engines"]}
assert eng["tuned"]["options"] == {"UseNNUE": "false"} == eng["start"]["options"], eng
start = dict(l.split() for l in open(out + "/verify/start-weights.txt") if l[0] != "#" and l.strip())
tuned = dict(l.split() for l in open(out + "/spsa-weights.txt") if l[0] != "#" and l.strip())
assert start["horse_mg"] == "250" and start["chariot_mg"] == "500", start
assert {k for k in start if start[k] != tuned[k]} <= {"horse_mg", "chariot_mg"}, (start, tuned)
PY
grep -q "Verify (tuned vs start)</h2>" "$out/report.html" || fail "the page has no verdict"
echo "killed after $before SPRT games; $line"
echo "1 passed, 0 failed"
