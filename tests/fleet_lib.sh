# SPDX-License-Identifier: MIT
# Sourced by the fleet's MPI tests: a work directory removed at exit (with any fleet rank
# still running in it), mpirun allowed as root, fail MESSAGE, and journal_size ID (bytes of
# a test's journal in the queue $q, 0 before it starts).
work=$(mktemp -d)
q=$work/q
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cleanup() {
    for p in $(pgrep -f "fleet $work/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "0 passed, 1 failed"
    exit 1
}
journal_size() { stat -c %s "$q/tests/$1/journal.xqj" 2>/dev/null || echo 0; }
