#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mixed hardware ([time] scale = bench): two worker ranks, one made 3 times slower per node
# (the test knob XQFORGE_SLOWDOWN), get clocks scaled by reference_nps / their bench nps, so
# they search about the same nodes per move (within 35%); without scaling the slow rank
# searches markedly fewer (below 70% of the fast one's), so the check can fail. report.json,
# the page and the console show each rank's bench nps and scale, computed as the worker does;
# a rank below [time] nps_floor is refused with a message naming its nps and the floor.
set -u
xq=$1
work=$(mktemp -d)
[[ ${XQ_KEEP:-} ]] || trap 'rm -rf "$work"' EXIT # XQ_KEEP=1: keep the runs' outputs
[[ ${XQ_KEEP:-} ]] && echo "outputs in $work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
export XQFORGE_BENCH_DEPTH=8 # benches of about a second: a busy machine blurs them less
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

# The reference machine: this one alone, at half speed (its ranks share the cores), so the
# scales stay near 1 and 3 and the games short whatever the machine.
ref=$("$xq" bench "$XQFORGE_BENCH_DEPTH" 2>/dev/null | awk '/^Nodes\/second/ { print int($3 / 2) }')
[[ $ref -gt 0 ]] || fail "xqforge bench printed no nodes/s"
cat >"$work/scale.ini" <<EOF
[job]
kind = match
name = scale
rounds = 4
concurrency = 1
[engine a]
[engine b]
[each]
proto = builtin
option.Threads = 1
option.Hash = 16
[time]
tc = 1+0.01
scale = bench
reference_nps = $ref
[adjudication]
maxplies = 60
EOF
# Rank 2 is the slow machine: XQFORGE_SLOWDOWN=k for it alone.
cat >"$work/slow2.sh" <<'EOF'
#!/usr/bin/env bash
[[ ${OMPI_COMM_WORLD_RANK:-0} == 2 ]] && export XQFORGE_SLOWDOWN=$SLOW
exec "$@"
EOF
chmod +x "$work/slow2.sh"

run() { # run NAME SLOWDOWN [--set ...]: 3 ranks, rank 2 slowed down
    local name=$1 slow=$2
    shift 2
    SLOW=$slow mpirun --bind-to none -np 3 "$work/slow2.sh" "$xq" run "$work/scale.ini" \
        --set output.dir="$work/$name" "$@" >"$work/$name.log" 2>&1 ||
        fail "$name: exit $?: $(grep -E 'joined|refused|xqforge' "$work/$name.log" | head -5; tail -3 "$work/$name.log")"
}
w() { jq -r "$2" "$work/$1/report.json"; } # w NAME FILTER
npm_ratio() { w "$1" '(.workers[] | select(.rank == 2).nodes_per_move) / (.workers[] | select(.rank == 1).nodes_per_move)'; }

# Nodes per move and the benches compare two ranks' wall-clock speeds, which load from outside
# the test shifts (a bench taken while another process had a core): up to 3 tries for the
# ratios, each a fresh run. Broken scaling fails every try (the slow rank then searches a
# third as much); a broken slowdown too (the scales then stay near each other).
scale_ratio() { w "$1" '(.workers[] | select(.rank == 2).scale) / (.workers[] | select(.rank == 1).scale)'; }
for try in 1 2 3; do
    rm -rf "${work:?}/scaled"
    run scaled 3
    ratio=$(npm_ratio scaled) scales=$(scale_ratio scaled)
    awk -v x="$ratio" -v s="$scales" 'BEGIN { exit !(x > 0.65 && x < 1.35 && s > 1.5 && s < 6) }' && break
    echo "try $try: the slow rank searched $ratio times the fast one's nodes per move (want 1 +/- 0.35), its scale $scales times the fast one's (want about 3)"
    [[ $try == 3 ]] && fail "scaled: the slow rank's nodes per move or scale were off in 3 runs (last $ratio and $scales)"
done
for r in 1 2; do
    nps=$(w scaled ".workers[] | select(.rank == $r).bench_nps")
    scale=$(w scaled ".workers[] | select(.rank == $r).scale")
    [[ $nps -gt 0 ]] || fail "scaled: rank $r has no bench nps in report.json"
    # The coordinator's figure is the worker's: reference / its own bench nps.
    awk -v s="$scale" -v n="$nps" -v r="$ref" 'BEGIN { e = s * n / r - 1; exit !(e < 1e-9 && e > -1e-9) }' ||
        fail "scaled: rank $r scale $scale is not $ref / $nps"
    line=$(printf 'rank %d on [^ ]* joined: 1 at once, bench %d nodes/s, time x%.3f' "$r" "$nps" "$scale")
    grep -q "^$line\$" "$work/scaled.log" || fail "scaled: no console line '$line'"
    grep -q "rank $r on [^<]*</th><td>[0-9]* games, $nps nodes/s, time x$(printf %.3f "$scale"), [0-9]* nodes/move" \
        "$work/scaled/report.html" || fail "scaled: the page's workers table lacks rank $r's nps and scale"
    [[ $(w scaled ".workers[] | select(.rank == $r).moves") -gt 0 ]] || fail "scaled: rank $r made no moves"
done
# The ranks' moves are the PGN's moves past the book; nodes per move is nodes / moves.
pgn_moves=$(($(grep -o '^\[PlyCount "[0-9]*' "$work/scaled/games.pgn" | grep -o '[0-9]*$' | paste -sd+) - $(grep -o '{book}' "$work/scaled/games.pgn" | wc -l)))
[[ $(w scaled '[.workers[].moves] | add') == "$pgn_moves" ]] ||
    fail "scaled: the workers' moves add up to $(w scaled '[.workers[].moves] | add'), the PGN has $pgn_moves past the book"
[[ $(w scaled '[.workers[] | (.nodes_per_move * .moves - .nodes) | fabs < 0.001] | all') == true ]] ||
    fail "scaled: a rank's nodes_per_move is not its nodes / moves"
echo "scale = bench: scales x$(w scaled '[.workers[].scale * 1000 | round / 1000] | join(", x")'), slow/fast scale $scales, nodes per move slow/fast $ratio"

run unscaled 3 --set time.scale=none
[[ $(w unscaled '[.workers[].scale] | unique | tojson') == "[1]" ]] ||
    fail "unscaled: scales $(w unscaled '[.workers[].scale]') without scale = bench"
grep -q "time x" "$work/unscaled.log" && fail "unscaled: the console names a scale without scale = bench"
ratio=$(npm_ratio unscaled)
awk -v x="$ratio" 'BEGIN { exit !(x < 0.7) }' ||
    fail "unscaled: the slow rank searched $ratio times the fast one's nodes per move (want < 0.7)"
echo "scale = none: nodes per move slow/fast $ratio"

# A floor far between the two (so a machine busier now than before does not matter): rank 2,
# 60 times slower, is refused; rank 1 plays every game. (A shorter bench: rank 2's takes 60
# times as long; one that ends after the games is refused all the same.)
fast=$(w scaled '.workers[] | select(.rank == 1).bench_nps')
floor=$((fast / 8))
XQFORGE_BENCH_DEPTH=6 run floor 60 --set time.nps_floor=$floor --set job.rounds=2
grep -q "rank 2 (.*) refused: bench [0-9]* nodes/s is below the job's \[time\] nps_floor of $floor nodes/s" \
    "$work/floor.log" || fail "floor: no refusal naming rank 2's nps and the floor $floor"
[[ $(w floor '.workers[] | select(.rank == 2).state') == refused ]] || fail "floor: rank 2 not refused in report.json"
w floor '.workers[] | select(.rank == 2).error' | grep -q "nps_floor of $floor nodes/s" ||
    fail "floor: report.json lacks the refusal's reason"
[[ $(w floor '.workers[] | select(.rank == 1).games') == 4 ]] || fail "floor: rank 1 did not play all 4 games"
echo "nps_floor = $floor: rank 2 refused, rank 1 played the job"
echo "1 passed, 0 failed"
