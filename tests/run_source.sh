#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Engines built from source (issue 31): a git repository made here holds a tiny UCI engine
# (its `bench` prints a node count made from one constant; it plays through `xqforge uci`) at
# two commits that differ in that constant. Commit against commit on 3 ranks: each commit is
# built exactly once (two cache entries, two builds in the cache's log), a second run builds
# nothing, the report names both commits and the diff stat; a build_env that changes the bench
# on one rank only gets that rank refused with both signatures named; a wrong `bench = N`
# refuses every rank (exit 1, the reason named); a failing build fails the run with its log's
# end; a URL source and a net of another hash are refused; [time] scale = bench takes the
# built engine's bench nps; `submit --repo` (the one-liner) pins the commits and a fleet plays
# them as `run` plays the same job file.
set -u
xq=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
git_c() { git -C "$work/repo" -c user.name=test -c user.email=test@example.org "$@"; }
mpi() { mpirun --oversubscribe --bind-to none "$@"; }

mkdir "$work/repo"
git_c init -q
cat >"$work/repo/engine.c" <<'C'
/* A tiny UCI engine: `bench` prints a node count made from NODES and EXTRA (a build setting);
   anything else plays as xqforge's own engine. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifndef EXTRA
#define EXTRA 0
#endif
#define NODES 1000
int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "bench")) {
        printf("Total time (ms) : 1\nNodes searched  : %d\nNodes/second    : 1000000\n",
               NODES + EXTRA);
        return 0;
    }
    execl(XQ, XQ, "uci", (char *)NULL);
    return 127;
}
C
printf 'engine: engine.c\n\t$(CC) -O1 -DXQ='"'"'"$(XQ)"'"'"' -DEXTRA=$${EXTRA:-0} -o engine engine.c\n' \
    >"$work/repo/Makefile"
git_c add engine.c Makefile
git_c commit -qm "base: 1000 nodes"
sed -i 's/#define NODES 1000/#define NODES 1234/' "$work/repo/engine.c"
git_c commit -qam "new: 1234 nodes"
head=$(git_c rev-parse HEAD) base=$(git_c rev-parse HEAD~1)

cat >"$work/job.ini" <<INI
[job]
kind = match
rounds = 2
concurrency = 1
[each]
source = repo
build = make XQ=$xq
binary = engine
bench = auto
[engine base]
commit = HEAD~1
[engine new]
commit = HEAD
[time]
depth = 1
[build]
diff_url = https://example.org/{repo}/compare/{base}...{new}
[output]
dir = out
INI

cd "$work" || fail "no work directory"
cache=$work/build-cache
entries() { find "$cache" -mindepth 1 -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{16}' | wc -l; }
builds() { grep -c '^built ' "$cache/builds.log"; }

# 1. Commit against commit on 3 ranks: two builds, one per commit, whichever rank builds.
mpi -np 3 "$xq" run job.ini >run1.log 2>&1 || fail "run 1: $(tail -5 run1.log)"
[[ $(entries) == 2 && $(builds) == 2 ]] || fail "run 1: $(entries) cache entries, $(builds) builds (want 2, 2): $(cat "$cache/builds.log")"
grep -q "commit $base" "$cache/builds.log" && grep -q "commit $head" "$cache/builds.log" ||
    fail "the cache's log does not name both commits: $(cat "$cache/builds.log")"
# new first: the engine tested (its section is second in the file)
[[ $(jq -r '.code.engines | map(.commit) | join(" ")' out/report.json) == "$head $base" ]] ||
    fail "report.json's code.engines: $(jq -c .code out/report.json)"
[[ $(jq -r '.code.engines[0].subject' out/report.json) == "new: 1234 nodes" ]] || fail "no subject in report.json"
jq -r .code.diff_stat out/report.json | grep -q 'engine.c | 2 +-' || fail "no diff stat in report.json"
jq -r .code.log out/report.json | grep -q "^${head:0:7} new: 1234 nodes" || fail "no commit list in report.json"
grep -q "href=\"https://example.org/repo/compare/$base...$head\"" out/report.html || fail "no diff link on the page"
grep -q "<code>${base:0:12}</code> base: 1000 nodes" out/report.html && grep -q 'engine.c | 2 +-' out/report.html ||
    fail "the page does not name both commits and the diff stat"
grep -aq "engine.new.commit=$head" out/journal.xqj && grep -aq "engine.base.commit=$base" out/journal.xqj ||
    fail "the journal's identity does not record both commit ids"
echo "run 1: 2 builds in the cache (one per commit), report names $base..$head and the diff stat"

# 2. A second run builds nothing. With [time] scale = bench a rank's speed is the built
# engine's own bench nps (1000000, printed by the tiny engine), not the builtin engine's.
mpi -np 3 "$xq" run job.ini --fresh --set time.scale=bench --set time.reference_nps=2000000 \
    >run2.log 2>&1 || fail "run 2: $(tail -5 run2.log)"
[[ $(entries) == 2 && $(builds) == 2 ]] || fail "run 2 built again: $(cat "$cache/builds.log")"
[[ $(grep -c 'from the cache' run2.log) == 2 ]] || fail "run 2 does not say it took both from the cache"
[[ $(grep -c 'joined: .*bench 1000000 nodes/s, time x2.000' run2.log) == 2 ]] ||
    fail "run 2: the ranks' scale is not the built engine's bench: $(grep joined run2.log)"
echo "run 2: nothing built; scale = bench from the built engine's bench"

# 2b. A binary swapped inside the cache (another program in its place) is never run: its
# sha256 differs from the one its build recorded, so the entry is moved aside and built again.
victim=$(grep -l "commit $head" "$cache"/*/.xqforge-build | head -1)
victim=${victim%/.xqforge-build}
[[ -n $victim ]] || fail "no cache entry of $head"
printf '#!/bin/sh\ntouch %s/swapped-ran\nexit 1\n' "$work" >"$victim/engine"
chmod +x "$victim/engine"
mpi -np 3 "$xq" run job.ini --fresh >run2b.log 2>&1 || fail "run 2b: $(tail -5 run2b.log)"
[[ -e $work/swapped-ran ]] && fail "the swapped binary ran"
grep -q "build: engine new: the cached binary $victim/engine changed after its build (its sha256 is .*, its build recorded .*): moved aside, built again" run2b.log ||
    fail "the swapped binary is not named: $(grep build: run2b.log)"
[[ $(builds) == 3 && $(entries) == 2 ]] || fail "run 2b: $(builds) builds, $(entries) entries (want 3, 2)"
grep -q "binary_sha256 [0-9a-f]\{64\}" "$victim/.xqforge-build" || fail "the new entry records no sha256"
echo "run 2b: a swapped cached binary moved aside and built again, never run"
# 2c. Relative paths given with --set are the current directory's, not the checkout's.
"$xq" run job.ini --set output.dir=relout --set build.cache=relcache >run2c.log 2>&1 ||
    fail "run 2c (relative --set paths): $(tail -5 run2c.log)"
[[ -s relout/result.json && $(ls -d relcache/*/ | wc -l) == 2 ]] || fail "run 2c: $(ls relout relcache)"
echo "run 2c: relative output.dir and build.cache from --set taken from the current directory"

# 3. One rank's build differs (its build_env changes the constant): that rank is refused.
mpi -np 2 "$xq" run job.ini --fresh : -np 1 "$xq" run job.ini --fresh \
    --set engine.new.build_env.EXTRA=1 >run3.log 2>&1 || fail "run 3: $(tail -5 run3.log)"
grep -q "rank 2 (.*) refused: engine 'new': bench signature 1235 differs from 1234 (rank 0's, bench = auto)" run3.log ||
    fail "rank 2 was not refused with both signatures: $(grep -i refus run3.log)"
grep -q "rank 1 (.*) refused" run3.log && fail "rank 1 was refused"
echo "run 3: the rank with another build refused, both signatures named"

# 4. bench = N wrong: every rank refused, exit 1 with the reason.
mpi -np 3 "$xq" run job.ini --fresh --set engine.new.bench=999 >run4.log 2>&1 && fail "run 4 succeeded"
grep -q "xqforge run: failed: no worker could play: rank .: engine 'new': bench signature 1234 differs from 999 (the job's bench)" run4.log ||
    fail "run 4 does not say why: $(tail -5 run4.log)"
[[ $(grep -c "refused: engine 'new'" run4.log) -ge 2 ]] || fail "run 4 did not refuse both workers"
echo "run 4: bench = 999 refused every rank, exit 1"

# 5. A build that fails fails the run with its log's end.
mpi -np 3 "$xq" run job.ini --fresh --set "engine.new.build=make XQ=$xq CC=no-such-cc" >run5.log 2>&1
rc=$?
[[ $rc == 1 ]] || fail "run 5: exit $rc, want 1: $(tail -5 run5.log)"
grep -q "^xqforge run: engine 'new': the build of commit ${head:0:12} failed (exit status 2); the end of its log:" run5.log &&
    grep -q "no-such-cc: not found" run5.log || fail "run 5 does not show the failure and its log: $(head -8 run5.log)"
ls "$cache"/*.failed >/dev/null 2>&1 || fail "the failed build is not recorded"
[[ $(grep -c '^FAILED ' "$cache/builds.log") == 1 ]] || fail "the failed build was tried more than once"
echo "run 5: the failed build (tried once) fails the run with its log's end"
# A build that fails on one rank only (its build_env breaks the compile): that rank names it.
mpi -np 2 "$xq" run job.ini --fresh : -np 1 "$xq" run job.ini --fresh \
    --set engine.new.build_env.EXTRA='nonsense' >run5b.log 2>&1
rc=$?
[[ $rc == 1 ]] || fail "run 5b: exit $rc, want 1: $(tail -5 run5b.log)"
grep -q "^xqforge run (rank 2 on .*): engine 'new': the build of commit ${head:0:12} failed" run5b.log &&
    grep -q "nonsense" run5b.log || fail "run 5b: rank 2 does not say why: $(head -5 run5b.log)"
echo "run 5b: a build failing on one rank fails the run, that rank saying why"

# 6. Never a network fetch; a net is kept by hash and refused by another.
"$xq" run job.ini --fresh --set engine.new.source=https://example.org/x.git >run6.log 2>&1 && fail "a URL source ran"
grep -q "is not a local path: builds never fetch" run6.log || fail "a URL source: $(cat run6.log)"
head -c 5000 /dev/urandom >net.bin
sum=$(sha256sum net.bin | cut -c1-64)
"$xq" run job.ini --fresh --set engine.new.net=net.bin --set engine.new.net_sha256=${sum:0:11}x >run7.log 2>&1 && fail "a bad net_sha256 ran"
grep -q "net_sha256" run7.log || fail "net_sha256 of another hex: $(cat run7.log)"
other=$( [[ ${sum:0:1} == 0 ]] && echo 1 || echo 0)
"$xq" run job.ini --fresh --set engine.new.net=net.bin --set engine.new.net_sha256=$other >run7.log 2>&1 && fail "a net of another hash ran"
grep -q "engine 'new': net .*net.bin has sha256 ${sum:0:12}..., not the expected $other (net_sha256)" run7.log ||
    fail "a net of another hash: $(cat run7.log)"
echo "run 6: a URL source and a net of another hash refused"
# 8. The one-liner: submit --repo queues the SPRT of HEAD against HEAD~1 with the refs
# resolved now (a commit made afterwards changes nothing) and builds nothing; a fleet on 3
# ranks builds both commits and plays them with the totals of `xqforge run` of the same job
# written as a file; its report names both commits.
"$xq" submit q --repo repo --base HEAD~1 --new HEAD --build "make XQ=$xq" --binary engine \
    --nodes 1000 --sprt elo0=0,elo1=20 --set job.rounds=3 --set job.concurrency=1 >submit.log 2>&1 ||
    fail "submit --repo: $(cat submit.log)"
pinned=$(jq -r '.job.sets | map(select(test("commit="))) | join(" ")' q/tests/0001/test.json)
[[ $pinned == "engine.base.commit=$base engine.new.commit=$head" ]] || fail "the refs are not pinned: $pinned"
[[ -e q/tests/build-cache ]] && fail "submit built something"
sed -i 's/#define NODES 1234/#define NODES 999/' repo/engine.c
git_c commit -qam "newer: 999 nodes"
timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$xq" fleet q --until-empty >fleet.log 2>&1 ||
    fail "the fleet: $(tail -5 fleet.log)"
[[ $(jq -r .state q/tests/0001/test.json) == finished ]] || fail "the test: $(jq -c . q/tests/0001/test.json)"
[[ $(grep -c '^built ' q/tests/build-cache/builds.log) == 2 ]] || fail "the fleet's builds: $(cat q/tests/build-cache/builds.log)"
cat >sprt.ini <<INI
[job]
kind = sprt
rounds = 3
concurrency = 1
[each]
source = repo
build = make XQ=$xq
binary = engine
bench = auto
[engine base]
commit = $base
[engine new]
commit = $head
[time]
nodes = 1000
[openings]
file = default
order = random
seed = 7
[adjudication]
draw = on
resign = on
resign_twosided = true
[sprt]
elo0 = 0
elo1 = 20
[output]
dir = solo
INI
mpi -np 3 "$xq" run sprt.ini >solo.log 2>&1 || fail "the solo run: $(tail -5 solo.log)"
totals() { jq -c '[.games, .wins, .losses, .draws, .ptnml, .pairs_done]' "$1"; }
[[ $(totals q/tests/0001/result.json) == "$(totals solo/result.json)" ]] ||
    fail "fleet $(totals q/tests/0001/result.json) against solo $(totals solo/result.json)"
[[ $(jq -r '.code.engines | map(.commit) | join(" ")' q/tests/0001/report.json) == "$head $base" ]] ||
    fail "the test's report.json: $(jq -c .code q/tests/0001/report.json)"
grep -q "<code>${base:0:12}</code> base: 1000 nodes" q/tests/0001/report.html &&
    grep -q "<code>${head:0:12}</code> new: 1234 nodes" q/tests/0001/report.html || fail "the test's page does not name both commits"
echo "run 8: submit --repo pinned $base..$head, built nothing; the fleet's totals $(totals solo/result.json) equal the job file's run"
echo "1 passed, 0 failed"
