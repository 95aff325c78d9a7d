#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet's queue from the command line (xqforge submit, queue, stop, set): a good job is
# queued with the next id and shown; a bad job (a bad value, a missing file, an engine that
# does not start) exits 2 with the reason and queues nothing; stop and set change what they
# say and refuse an ended or unknown test; a queue others can write, or someone else's, is
# refused; the page and index.json follow every change. `submit --repo` (the one-liner) pins
# its refs; its errors queue nothing.
set -u
xq=$1 jobs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
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
q=$work/q
check "submit a good job" 0 "^0001$" "$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=4
check "the queue is private" 0 "^drwx------" ls -ld "$q"
check "submit a second with a name and priority" 0 "^0002$" \
    "$xq" submit "$q" "$jobs/gauntlet.ini" --name "self play" --priority 3 --throughput 300
check "a bad value is refused, nothing queued" 2 "job.rounds=abc.*not an integer.*nothing queued" \
    "$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=abc
check "a missing job file is refused" 2 "nope.ini.*nothing queued" "$xq" submit "$q" nope.ini
printf '[job]\nkind = match\nrounds = 1\n[each]\nnodes = 1000\n[engine a]\ncmd = /nonexistent/engine\n[engine b]\n' >bad.ini
check "an engine that does not start is refused as run refuses it" 2 "nonexistent/engine.*nothing queued" \
    "$xq" submit "$q" bad.ini
check "a missing openings file is refused as run refuses it" 2 "nope.epd: No such file.*nothing queued" \
    "$xq" submit "$q" "$jobs/sprt-weights.ini" --set openings.file=nope.epd
check "a Texel fit is not a fleet's test" 2 "kind = texel holds every rank .*(a fit on every rank)" \
    "$xq" submit "$q" "$jobs/texel.ini"
check "a training loop is not a fleet's test" 2 "kind = loop holds every rank .*(its steps are jobs of their own)" \
    "$xq" submit "$q" "$jobs/loop.ini"
check "nothing was queued by the refusals" 0 "^2$" bash -c "ls '$q/tests' | wc -l"
check "bad priority" 2 "--priority 'x'" "$xq" submit "$q" "$jobs/gauntlet.ini" --priority x
check "bad throughput" 2 "--throughput '0'" "$xq" submit "$q" "$jobs/gauntlet.ini" --throughput 0
check "queue lists both" 0 "^0002 +self play +match +queued .* 3 +300%" "$xq" queue "$q"
# A long Elo text (as a finished test's result.json may hold) widens its column: the columns
# after it stay under their headers (the share's last character under the header's).
printf '{"games": 1234, "text": "Elo: -12.34 +/- 56.78 (nElo -13.02 +/- 60.11), LOS 33.3%%", "llr": -1.2, "lower": -2.94, "upper": 2.94}\n' \
    >"$q/tests/0001/result.json"
check "queue: columns stay aligned after a long Elo text" 0 "^aligned 3$" bash -c "'$xq' queue '$q' | awk '
    NR == 1 { end = index(\$0, \"share\") + 4; next }
    match(\$0, / [0-9]+% /) && RSTART + RLENGTH - 2 == end { n++ }
    END { print (n == 2 ? \"aligned \" NR : \"misaligned\") }'"
rm "$q/tests/0001/result.json"
check "queue --json" 0 "^2 queued null$" \
    bash -c "'$xq' queue '$q' --json | jq -r '[(.tests|length), .tests[1].state, .tests[1].result] | join(\" \")' | sed 's/ $/ null/'"
check "set changes the share" 0 "test 0001: priority 7, throughput 50%" "$xq" set "$q" 0001 priority=7 throughput=50
check "set: bad value" 2 "expected priority=N" "$xq" set "$q" 0001 priority=high
check "set: unknown test" 2 "no test '0042'" "$xq" set "$q" 0042 priority=1
check "set: an id that leaves the queue" 2 "no test '../x'" "$xq" set "$q" ../x priority=1
check "stop a queued test" 0 "test 0002: stopped" "$xq" stop "$q" 0002
check "stop it again: exit 1, not a usage error" 1 "already ended \(stopped\)" "$xq" stop "$q" 0002
check "set on an ended test: exit 1" 1 "already ended" "$xq" set "$q" 0002 throughput=10
check "queue shows the stop and the new share" 0 "^0001 .* 7 +50%" "$xq" queue "$q"
check "index.json agrees" 0 "^0001 7 queued,0002 3 stopped$" \
    bash -c "jq -r '[.tests[] | \"\\(.id) \\(.priority) \\(.state)\"] | join(\",\")' '$q/index.json'"
# A test's name holding an escape sequence is listed without it (control characters as '?'),
# and a directory named past the id cap (made by hand) leaves later submits their ids.
esc=$(printf 'clear\033[2Jname')
mkdir "$q/tests/99999999"
check "a directory past the id cap leaves the next id" 0 "^0003$" \
    "$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.rounds=4 --name "$esc"
listing=$("$xq" queue "$q")
check "queue prints no control character of a name" 0 "^0003 +clear\?\[2Jname " \
    bash -c '[[ $1 != *$(printf "\033")* ]] && grep "^0003" <<<"$1"' _ "$listing"
rmdir "$q/tests/99999999"

check "the page lists both" 0 "self play" cat "$q/index.html"
# submit --repo (the one-liner): the refs resolved to full ids and recorded, nothing built;
# a job file's engine from source is queued the same way; bad refs, a directory that is not
# a repository, a URL and options missing or given twice are refused, nothing queued.
r=$work/repo
git_c() { git -C "$r" -c user.name=test -c user.email=test@example.org "$@"; }
mkdir "$r" && git_c init -q && echo a >"$r/f" && git_c add f && git_c commit -qm one &&
    echo b >"$r/f" && git_c commit -qam two || exit 1
head=$(git_c rev-parse HEAD) base=$(git_c rev-parse HEAD~1)
q2=$work/q2
check "submit --repo" 0 "^0001$" "$xq" submit "$q2" --repo "$r" --base HEAD~1 --new HEAD \
    --build make --binary engine --tc 5+0.05 --sprt elo0=-1,elo1=3 --bench-new 1234
check "its refs are pinned, its keys are overrides" 0 \
    "^repo: HEAD vs HEAD~1 sprt engine.base.commit=$base engine.new.commit=$head each.build=make each.binary=engine engine.new.bench=1234 time.tc=5\+0.05 sprt.elo0=-1 sprt.elo1=3$" \
    jq -r '"\(.name) \(.kind) " + ([.job.sets[] | select(test("commit=|build=|binary=|bench=1|tc=|sprt"))] | join(" "))' "$q2/tests/0001/test.json"
printf '[job]\nkind = sprt\nrounds = 2\n[each]\nsource = repo\nbuild = make\nbinary = engine\n[engine base]\ncommit = HEAD~1\n[engine new]\ncommit = HEAD\n[time]\nnodes = 1000\n' >src.ini
check "a job file's engines from source: queued, not built or started" 0 "^0002$" "$xq" submit "$q2" src.ini
check "its commits pinned too (new first: the tested engine)" 0 "^engine.new.commit=$head,engine.base.commit=$base$" \
    jq -r '.job.sets | join(",")' "$q2/tests/0002/test.json"
check "--repo without --base" 2 "needs --base REF and --new REF.*nothing queued" \
    "$xq" submit "$q2" --repo "$r" --new HEAD
check "an unknown ref" 2 "engine 'new': commit 'no-such' is not a commit of the git repository $r .nothing queued" \
    "$xq" submit "$q2" --repo "$r" --base HEAD --new no-such
check "not a repository" 2 "source $work is not a git repository" \
    "$xq" submit "$q2" --repo "$work" --base HEAD --new HEAD
check "a URL" 2 "is not a local path: builds never fetch" \
    "$xq" submit "$q2" --repo https://example.org/engine.git --base HEAD --new HEAD
check "--build without --binary" 2 "--build and --binary go together" \
    "$xq" submit "$q2" --repo "$r" --base HEAD --new HEAD --build make
check "--tc and --nodes" 2 "give --tc or --nodes, not both" \
    "$xq" submit "$q2" --repo "$r" --base HEAD --new HEAD --tc 1+0 --nodes 10
check "--sprt not pairs" 2 "--sprt 'elo1': expected KEY=VALUE" \
    "$xq" submit "$q2" --repo "$r" --base HEAD --new HEAD --sprt elo1
check "--base without --repo" 2 "go with --repo PATH" "$xq" submit "$q2" src.ini --base HEAD
check "a job file and --repo" 2 "a JOBFILE or --repo, not both" \
    "$xq" submit "$q2" src.ini --repo "$r" --base HEAD --new HEAD
check "nothing queued by those" 0 "^0001 0002 $" bash -c "ls '$q2/tests' | tr '\n' ' '"
check "queue: not a queue" 2 "is not a queue" "$xq" queue "$work"
check "queue: missing" 2 "No such file" "$xq" queue "$work/none"
chmod o+w "$q"
check "a queue others can write is refused" 2 "refused: owner .*mode 0702" "$xq" queue "$q"
check "submit to it is refused" 2 "refused.*nothing queued" "$xq" submit "$q" "$jobs/gauntlet.ini"
chmod o-w "$q"
if [[ $(id -u) -eq 0 ]]; then
    chown -R nobody "$q"
    check "someone else's queue is refused" 2 "refused: owner nobody" "$xq" stop "$q" 0001
fi
echo "$passes passed, $fails failed"
[[ $fails -eq 0 ]]
