#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A signal to mpirun itself, as a user sends it (Ctrl-C, kill, a batch system's SIGTERM), during
# a three-rank run: the run drains (result.json says interrupted, the journal is whole), and
# quietly: nothing on stderr (no "[warn]" line of the MPI runtime's event library, no notice
# of mpirun's with -q), and the exit status is what README.md says: SIGUSR1 (Open MPI's
# mpirun forwards it to every rank) 130; SIGTERM and SIGINT 130 where the launcher passes the
# ranks' status on, 1 under Open MPI 4's mpirun, whose own abort handler sets its exit status
# to 1 before any rank has exited (orte/mca/ess/hnp: clean_abort; no MCA parameter forwards
# SIGTERM or SIGINT instead).
set -u
xq=$1 job=$2
work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to none -np 3)
sets=(--set job.kind=match --set job.rounds=400 --set job.concurrency=1)
fail() {
    echo "FAIL: $*"
    echo "0 passed, 1 failed"
    exit 1
}
# Open MPI up to 4.x: mpirun's status after SIGTERM or SIGINT is its own (1), not the ranks'.
term_status=130
mpirun --version 2>/dev/null | head -1 | grep -qE 'Open MPI\) [1-4]\.' && term_status=1

# signal_mpirun NAME SIGNAL WANT [MPIRUN OPTION]: a run under mpirun gets SIGNAL once results
# are journaled.
signal_mpirun() {
    local dir=$work/$1
    "${mpi[@]}" ${4:+"$4"} "$xq" run "$job" "${sets[@]}" --set output.dir="$dir" \
        >"$work/$1.out" 2>"$work/$1.err" &
    local pid=$!
    pids+=("$pid")
    for _ in $(seq 2400); do
        [[ -s $dir/journal.xqj && $(stat -c %s "$dir/journal.xqj") -gt 2000 ]] && break
        sleep 0.05
    done
    [[ -s $dir/journal.xqj ]] || fail "$2: nothing journaled: $(tail -3 "$work/$1.err")"
    kill -"$2" "$pid"
    wait "$pid"
    local rc=$?
    [[ $rc == "$3" ]] || fail "SIG$2 to mpirun: exit $rc, $3 expected: $(tail -5 "$work/$1.err")"
    grep -q '"interrupted": true' "$dir/result.json" 2>/dev/null ||
        fail "SIG$2 to mpirun: result.json does not say interrupted"
    grep -q '^Drained: ' "$work/$1.out" || fail "SIG$2 to mpirun: no account of the drain"
    # Open MPI 4.1's own shutdown race: under load (1 run in about 25 here, more often under
    # ctest -j2), libevent in mpirun or a rank's PMIx thread warns that it could not change
    # the events of a descriptor the runtime has already closed (open-mpi/ompi#5520, closed
    # as wontfix; a rank cannot prevent it). That line, and only that one, is noted and let
    # through; any other "[warn]" or stderr line still fails.
    local race='^\[warn\] Epoll (ADD|MOD|DEL)\([0-9]+\) on fd [0-9]+ failed\. .*: Bad file descriptor$'
    if grep -qE "$race" "$work/$1.err"; then
        echo "SIG$2 to mpirun: Open MPI's shutdown race printed: $(grep -hE "$race" "$work/$1.err" | head -1)"
        grep -vE "$race" "$work/$1.err" >"$work/$1.err.rest"
        mv "$work/$1.err.rest" "$work/$1.err"
    fi
    grep -q '\[warn\]' "$work/$1.err" "$work/$1.out" &&
        fail "SIG$2 to mpirun: noise: $(grep -h '\[warn\]' "$work/$1.err" "$work/$1.out" | head -2)"
    [[ -s $work/$1.err ]] && fail "SIG$2 to mpirun: stderr not quiet: $(head -5 "$work/$1.err")"
    echo "SIG$2 to mpirun: exit $rc, $(grep -h '^Drained: ' "$work/$1.out")"
}

signal_mpirun usr1 USR1 130 -q
signal_mpirun term TERM "$term_status"
signal_mpirun int INT "$term_status"
echo "1 passed, 0 failed"
