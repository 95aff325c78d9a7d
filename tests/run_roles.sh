#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The SPRT measures the new side (issue 43): roles by name, never by the file's order.
# 1. A sprt job that writes [engine base] (200 nodes) before [engine new] (5000 nodes) on 3
#    ranks: new's Elo is positive and H1 is accepted; result.json, report.json, the page and
#    the console name new as the side of every figure.
# 2. The same reversed by [sprt] new = base: the base engine (now tested) loses, H0.
# 3. The journal of a base-first job written before roles (its identity lists base first, as
#    [sprt] new = base writes it) is refused on --resume, naming both engines; it resumes with
#    the roles it was written with.
# 4. submit --repo of a repository made here (a tiny engine at two commits; the new commit
#    searches at the job's node limit, the base one at depth 1) and a fleet on 3 ranks: new's
#    Elo is positive, H1; the fleet's page and `xqforge queue` say "new vs base"; the summary
#    names each commit with its subject.
set -u
xq=$(realpath "$1")
tests_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }
mpi() { mpirun --oversubscribe --bind-to none "$@"; }
cd "$work" || fail "no work directory"
positive() { jq -e '.elo > 0' "$1" >/dev/null; }

cat >inv.ini <<'INI'
; base first on purpose: the order of sections never decides the roles
[job]
kind = sprt
rounds = 40
concurrency = 2
[engine base]
nodes = 200
[engine new]
nodes = 5000
[each]
proto = builtin
option.Threads = 1
[openings]
file = default
order = random
[sprt]
elo0 = 0
elo1 = 100
[output]
dir = out
INI

# 1. Base first in the file: new is tested.
mpi -np 3 "$xq" run inv.ini >run1.log 2>&1 || fail "run 1: $(tail -5 run1.log)"
grep -q "^Results of new vs base (" run1.log || fail "run 1's summary: $(grep Results run1.log)"
grep -q "^Roles: new = new, base = base (chosen by the engines called new and base); every figure is new's.$" run1.log ||
    fail "run 1 does not say whose figures: $(grep -A1 Results run1.log)"
grep -q "^SPRT: H1 accepted" run1.log || fail "run 1's verdict: $(grep SPRT run1.log)"
[[ $(jq -r '[.new, .base, .roles.figures_of, .decision] | join(",")' out/result.json) == "new,base,new,H1 accepted" ]] ||
    fail "run 1's result.json: $(jq -c '{new, base, roles, decision}' out/result.json)"
positive out/result.json || fail "run 1: new's Elo is not positive: $(jq .elo out/result.json)"
jq -e '.wins > .losses' out/result.json >/dev/null || fail "run 1: the wins are not new's"
[[ $(jq -r '.roles.new + "," + .roles.base' out/report.json) == "new,base" ]] ||
    fail "run 1's report.json roles: $(jq -c .roles out/report.json)"
grep -q "every figure is new&#39;s\|every figure is new's" out/report.html || fail "run 1's page does not say whose figures"
echo "run 1: base written first, new tested: Elo $(jq .elo out/result.json), H1"

# 2. [sprt] new = base: the engine called base is tested, and it is the weaker one.
mpi -np 3 "$xq" run inv.ini --fresh --set sprt.new=base >run2.log 2>&1 || fail "run 2: $(tail -5 run2.log)"
grep -q "^Results of base vs new (" run2.log && grep -q "^Roles: new = base, base = new (chosen by \[sprt\] new and base)" run2.log ||
    fail "run 2's summary: $(grep -A1 Results run2.log)"
grep -q "^SPRT: H0 accepted" run2.log || fail "run 2's verdict: $(grep SPRT run2.log)"
[[ $(jq -r '.new' out/result.json) == base ]] && jq -e '.elo < 0' out/result.json >/dev/null ||
    fail "run 2's result.json: $(jq -c '{new, elo}' out/result.json)"
echo "run 2: [sprt] new = base tests the weaker engine: Elo $(jq .elo out/result.json), H0"

# 3. That journal is the one a base-first file wrote before roles: resumed without naming
# the roles it is refused, both engines named; naming them resumes it.
"$xq" run inv.ini --resume --set job.rounds=41 >run3.log 2>&1
rc=$?
[[ $rc == 2 ]] || fail "run 3: exit $rc, want 2: $(tail -3 run3.log)"
grep -q "holds the figures of 'base', and this job tests 'new'.*--set sprt.new=base --set sprt.base=new" run3.log ||
    fail "run 3 does not say why: $(cat run3.log)"
"$xq" run inv.ini --resume --set job.rounds=41 --set sprt.new=base --set sprt.base=new >run3b.log 2>&1 ||
    fail "run 3b: $(tail -3 run3b.log)"
echo "run 3: an old base-first journal refused, naming both engines; resumed with its roles named"

# 4. submit --repo and a fleet: a repository with a weaker base commit.
git_c() { git -C "$work/repo" -c user.name=test -c user.email=test@example.org "$@"; }
mkdir repo && git_c init -q
cp "$tests_dir/relay_engine.c" repo/engine.c
sed -i 's/^#define WEAK 0$/#define WEAK 1/' repo/engine.c
printf 'engine: engine.c\n\t$(CC) -O1 -DXQ='"'"'"$(XQ)"'"'"' -o engine engine.c\n' >repo/Makefile
git_c add engine.c Makefile
git_c commit -qm "weak: depth 1"
sed -i 's/#define WEAK 1/#define WEAK 0/' repo/engine.c
git_c commit -qam "strong: the job's nodes"
head=$(git_c rev-parse HEAD) base=$(git_c rev-parse HEAD~1)
"$xq" submit q --repo repo --base HEAD~1 --new HEAD --build "make XQ=$xq" --binary engine \
    --nodes 3000 --sprt elo0=0,elo1=100 --set job.rounds=40 --set job.concurrency=2 >submit.log 2>&1 ||
    fail "submit --repo: $(cat submit.log)"
timeout 300 mpirun --oversubscribe --bind-to none -np 3 "$xq" fleet q --until-empty >fleet.log 2>&1 || fail "the fleet: $(tail -5 fleet.log)"
r=q/tests/0001/result.json
[[ $(jq -r '[.new, .base, .decision] | join(",")' $r) == "new,base,H1 accepted" ]] && positive $r ||
    fail "the fleet's result.json: $(jq -c '{new, base, elo, decision}' $r)"
grep -q "^Results of new ${head:0:7} (strong: the job's nodes) vs base ${base:0:7} (weak: depth 1) (" fleet.log ||
    fail "the fleet's summary: $(grep Results fleet.log)"
[[ $(jq -r '.code.new + "," + .code.base' q/tests/0001/report.json) == "new,base" ]] ||
    fail "the report's code section: $(jq -c '{new: .code.new, base: .code.base}' q/tests/0001/report.json)"
jq -r .code.log q/tests/0001/report.json | grep -q "^${head:0:7} strong" ||
    fail "the report's commit list is not base..new: $(jq -r .code.log q/tests/0001/report.json)"
"$xq" queue q >queue.log 2>&1 || fail "xqforge queue: $(cat queue.log)"
grep -q "new vs base" queue.log && grep -q "^0001 .* new vs base " queue.log || fail "xqforge queue: $(cat queue.log)"
[[ $("$xq" queue q --json | jq -r '.tests[0].result | .new + "," + .base') == "new,base" ]] ||
    fail "xqforge queue --json: $("$xq" queue q --json | jq -c '.tests[0].result')"
grep -q "<th>New vs base</th>" q/index.html && grep -q "<td>new vs base</td>" q/index.html ||
    fail "the fleet's page does not say whose figures"
echo "run 4: submit --repo, fleet on 3 ranks: new ${head:0:7} tested, Elo $(jq .elo $r), H1"
echo "1 passed, 0 failed"
