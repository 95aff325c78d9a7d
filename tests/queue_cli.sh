#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fleet's queue from the command line (xqforge submit, queue, stop, set): a good job is
# queued with the next id and shown; a bad job (a bad value, a missing file, an engine that
# does not start) exits 2 with the reason and queues nothing; stop and set change what they
# say and refuse an ended or unknown test; a queue others can write, or someone else's, is
# refused; the page and index.json follow every change.
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
check "a Texel fit is not a fleet's test" 2 "kind = texel is a fit on every rank" \
    "$xq" submit "$q" "$jobs/texel.ini"
check "nothing was queued by the refusals" 0 "^2$" bash -c "ls '$q/tests' | wc -l"
check "bad priority" 2 "--priority 'x'" "$xq" submit "$q" "$jobs/gauntlet.ini" --priority x
check "bad throughput" 2 "--throughput '0'" "$xq" submit "$q" "$jobs/gauntlet.ini" --throughput 0
check "queue lists both" 0 "^0002 +self play +match +queued .* 3 +300%" "$xq" queue "$q"
check "queue --json" 0 "^2 queued null$" \
    bash -c "'$xq' queue '$q' --json | jq -r '[(.tests|length), .tests[1].state, .tests[1].result] | join(\" \")' | sed 's/ $/ null/'"
check "set changes the share" 0 "test 0001: priority 7, throughput 50%" "$xq" set "$q" 0001 priority=7 throughput=50
check "set: bad value" 2 "expected priority=N" "$xq" set "$q" 0001 priority=high
check "set: unknown test" 2 "no test '0042'" "$xq" set "$q" 0042 priority=1
check "set: an id that leaves the queue" 2 "no test '../x'" "$xq" set "$q" ../x priority=1
check "stop a queued test" 0 "test 0002: stopped" "$xq" stop "$q" 0002
check "stop it again" 2 "already ended \(stopped\)" "$xq" stop "$q" 0002
check "set on an ended test" 2 "already ended" "$xq" set "$q" 0002 throughput=10
check "queue shows the stop and the new share" 0 "^0001 .* 7 +50%" "$xq" queue "$q"
check "index.json agrees" 0 "^0001 7 queued,0002 3 stopped$" \
    bash -c "jq -r '[.tests[] | \"\\(.id) \\(.priority) \\(.state)\"] | join(\",\")' '$q/index.json'"
check "the page lists both" 0 "self play" cat "$q/index.html"
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
