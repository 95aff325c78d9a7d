#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Valgrind memcheck on a short cluster run: 3 MPI ranks (coordinator and two workers, each
# under memcheck) play the default job shortened to 2 game pairs. Any invalid read or
# write, use of uninitialised memory or bad free in xqforge fails the test; Open MPI's own
# runtime is suppressed (tests/valgrind.supp). The binary must be built without
# -march=native (valgrind does not know every instruction): XQ_NATIVE=OFF.
# Usage: valgrind_run.sh XQFORGE JOB
set -u
xq=$1 job=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v valgrind >/dev/null || { echo "valgrind is not installed: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
timeout 900 mpirun --oversubscribe --bind-to none -np 3 valgrind -q --error-exitcode=9 \
    --leak-check=no --suppressions="$here/valgrind.supp" --log-file="$work/vg.%p.log" \
    "$xq" run "$job" --set job.kind=match --set job.rounds=2 --set job.concurrency=1 \
    --set output.dir="$work/out" >"$work/run.log" 2>&1 || rc=$?
errors=$(cat "$work"/vg.*.log 2>/dev/null | grep -cE '^==[0-9]+== [A-Z]')
if [[ $rc != 0 || $errors != 0 ]]; then
    echo "FAIL: rc $rc, $errors valgrind reports:"
    cat "$work"/vg.*.log | head -40
    tail -5 "$work/run.log"
    echo "0 passed, 1 failed"
    exit 1
fi
grep -E '^Games' "$work/run.log"
echo "valgrind memcheck: 3 ranks, 0 errors"
echo "1 passed, 0 failed"
