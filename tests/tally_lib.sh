# SPDX-License-Identifier: MIT
# Sourced by the shell tests that count their checks: a work directory $dir removed at exit,
# `ok` and `bad MESSAGE` to count a check, and `tally_end` last, which prints "N passed, M
# failed" (ctest's PASS_REGULAR_EXPRESSION looks for " 0 failed") and returns the status.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
tally_end() {
    echo "$passes passed, $fails failed"
    [[ $fails -eq 0 ]]
}
