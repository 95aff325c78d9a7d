#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The walls between the rooms, checked with grep so that later changes keep them (issue 45):
# cli/ -> run/ -> coordinator/, worker/, job/ and below, never back up; no job kind named in
# cli/ (kinds are joined to ranks in run/session.c's table alone); coordinator/ and worker/
# never include each other nor run/; search/ includes nothing above it; mpi.h only in
# proto/link.c; no product .c file over 1,000 lines but search/search.c.
set -u
src=${1:-$(dirname "$0")/..}
cd "$src" || exit 1
fails=0
bad() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# The headers of a folder as one grep alternation: "a\.h|b\.h".
headers() { (cd "$1" && ls -- *.h 2>/dev/null) | sed 's/\./\\./' | paste -sd'|'; }
includes() { # includes FOLDER... -- HEADERS: lines of the folders' files including one of them
    local h=$1
    shift
    grep -nE "#include \"($h)\"" "$@" 2>/dev/null
}

out=$(grep -nE '\bJOB_(SPRT|MATCH|SPSA|TEXEL|BOOK|DATAGEN|TRAIN|LOOP|DOE)\b' cli/*.[ch]) &&
    bad "a job kind named in cli/ (ask run/ or the kind table): $out"
run_h=$(headers run) cli_h=$(headers cli) coord_h=$(headers coordinator) worker_h=$(headers worker)
for d in coordinator worker job games search proto tuning; do
    out=$(includes "$run_h" $d/*.[ch]) && bad "$d/ includes a run/ header: $out"
done
for d in run coordinator worker job games search proto tuning; do
    out=$(includes "$cli_h" $d/*.[ch]) && bad "$d/ includes a cli/ header: $out"
done
out=$(includes "$coord_h" worker/*.[ch]) && bad "worker/ includes a coordinator/ header: $out"
out=$(includes "$worker_h" coordinator/*.[ch]) && bad "coordinator/ includes a worker/ header: $out"
for d in proto games job worker coordinator tuning run cli; do
    out=$(includes "$(headers $d)" search/*.[ch]) && bad "search/ includes a $d/ header: $out"
done
out=$(grep -ln '#include <mpi.h>' -- */*.[ch] | grep -v '^proto/link\.c$') &&
    bad "mpi.h outside proto/link.c: $out"
for f in */*.c; do
    case $f in tests/* | fuzz/* | search/search.c) continue ;; esac
    n=$(wc -l <"$f")
    ((n > 1000)) && bad "$f has $n lines (at most 1,000 a product file)"
done
if ((fails)); then
    echo "0 passed, $fails failed"
    exit 1
fi
echo "1 passed, 0 failed"
