#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A queue trusts only its owner (issue 44, item 1): nobody else's test runs as the fleet's
# user. Each planted test would start ./evil.sh (it leaves a marker file) in the engine check;
# none may: a tests/ directory writable by others refuses the whole queue; a test directory
# another user made is refused and never written to; a symbolic-link job.ini, a FIFO job.ini,
# a test.json another user wrote (its sets adding the evil engine) and a record naming
# another submitter are refused with the path and the reason, the fleet going on with the
# good test. As root a second user (nobody, through setpriv) plants the tests; as root the
# test fails, never skips, when it cannot switch user. Without root those cases are made by
# the owner and the rest still runs.
set -u
xq=$(realpath "$1") jobs=$(realpath "$2")
source "$(dirname "$0")/fleet_lib.sh"
cd "$work" || fail "no work directory"
chmod 0711 "$work" # a second user may reach the queue, not list or write the work directory
mark=$work/evil-ran
printf '#!/bin/sh\ntouch %s\nexec cat >/dev/null\n' "$mark" >"$work/evil.sh"
chmod 0755 "$work/evil.sh"
fleet() { timeout 120 "$xq" fleet "$q" --until-empty >"$1" 2>&1; }
evil_ran() { [[ -e $mark ]]; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
root=false
if [[ $(id -u) == 0 ]]; then
    root=true
    as_nobody true || fail "running as root, but cannot switch to user nobody (setpriv)"
fi

"$xq" submit "$q" "$jobs/sprt-weights.ini" --set job.kind=match --set job.rounds=1 \
    --set job.concurrency=1 --set time.nodes=200 --name good >/dev/null || fail "submit"
# A planted test: a copy of 0001's record naming another id, its sets adding the evil engine.
plant_record() { # plant_record ID UID
    jq --arg id "$1" --argjson uid "$2" --arg cmd "$work/evil.sh" \
        '.id = $id | .uid = $uid | .job.sets += ["engine.evil.cmd=" + $cmd, "engine.evil.proto=uci"]' \
        "$q/tests/0001/test.json"
}

# 1. tests/ writable by everyone: the whole queue is refused, nothing runs.
chmod 0711 "$q"
chmod 0777 "$q/tests"
if $root; then
    nobody_uid=$(id -u nobody)
    as_nobody mkdir "$q/tests/0050" || fail "nobody cannot plant in a world-writable tests/"
    as_nobody ln -s ../0001/job.ini "$q/tests/0050/job.ini" || fail "nobody: ln"
    plant_record 0050 "$nobody_uid" | as_nobody tee "$q/tests/0050/test.json" >/dev/null ||
        fail "nobody: test.json"
fi
fleet f1.log
rc=$?
[[ $rc == 2 ]] || fail "a world-writable tests/: exit $rc, want 2: $(cat f1.log)"
grep -q "queue $q is refused: $q/tests has owner root, mode 0777" f1.log ||
    grep -q "queue $q is refused: $q/tests has owner $(id -un), mode 0777" f1.log ||
    fail "a world-writable tests/ is not named: $(cat f1.log)"
evil_ran && fail "the planted test ran with tests/ world-writable"
chmod 0700 "$q/tests"
echo "1: a world-writable tests/ refuses the queue, nothing started"

# 2. A directory made by another user (root), a symbolic-link job.ini, a FIFO job.ini, a
# test.json another user wrote, a record naming another submitter: each refused, the good
# test played.
mk() { mkdir "$q/tests/$1" && chmod 0700 "$q/tests/$1"; }
mk 0060 && ln -s ../0001/job.ini "$q/tests/0060/job.ini" && plant_record 0060 "$(id -u)" >"$q/tests/0060/test.json"
mk 0061 && mkfifo "$q/tests/0061/job.ini" && plant_record 0061 "$(id -u)" >"$q/tests/0061/test.json"
mk 0062 && cp "$q/tests/0001/job.ini" "$q/tests/0062/" && plant_record 0062 12345 >"$q/tests/0062/test.json"
if $root; then
    mk 0063 && cp "$q/tests/0001/job.ini" "$q/tests/0063/" &&
        plant_record 0063 0 >"$q/tests/0063/test.json" && chown nobody "$q/tests/0063/test.json"
fi
before50=$($root && sha256sum "$q/tests/0050/test.json")
fleet f2.log || fail "the fleet with planted tests: $(tail -5 f2.log)"
evil_ran && fail "a planted test ran: $(cat f2.log)"
[[ $(jq -r .state "$q/tests/0001/test.json") == finished ]] || fail "the good test: $(jq -c . "$q/tests/0001/test.json")"
expect() { # expect ID TEXT: the fleet said it, and the test is failed with that reason
    grep -qF -- "$2" f2.log || fail "test $1: the fleet did not say '$2': $(grep "$1" f2.log)"
    [[ $(jq -r .state "$q/tests/$1/test.json") == failed ]] || fail "test $1 is not failed"
    jq -r .reason "$q/tests/$1/test.json" | grep -qF -- "$2" || fail "test $1's reason: $(jq -r .reason "$q/tests/$1/test.json")"
}
expect 0060 "$q/tests/0060/job.ini: a symbolic link (refused)"
expect 0061 "$q/tests/0061/job.ini: not a regular file (refused)"
expect 0062 "its record says uid 12345 submitted it, its job.ini is uid $(id -u)'s"
if $root; then
    expect 0063 "$q/tests/0063/test.json: written by nobody, not by the test's submitter root (refused)"
    grep -q "test 0050 is refused: $q/tests/0050 is not the queue's (owner nobody" f2.log ||
        fail "the planted directory is not refused: $(grep 0050 f2.log)"
    [[ $(sha256sum "$q/tests/0050/test.json") == "$before50" ]] || fail "the fleet wrote into nobody's directory"
    [[ $(grep -c "test 0050 is refused" f2.log) == 1 ]] || fail "the refusal of 0050 is repeated every tick"
fi
echo "2: planted tests refused before any engine started (root: $root); the good test finished"
echo "1 passed, 0 failed"
