#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine's node-count signature: `xqforge bench DEPTH` with one thread must search
# exactly the committed number of nodes. A functional change to search or evaluation changes
# it; update XQ_BENCH_SIGNATURE in tests/CMakeLists.txt and say `Bench: N` in the commit.
set -u
xq=$1 depth=$2 expect=$3
got=$("$xq" bench "$depth" 1 16 2>/dev/null | awk -F: '/Nodes searched/ {gsub(/ /, "", $2); print $2}')
if [[ $got != "$expect" ]]; then
    echo "bench signature: got '$got', expected $expect (bench $depth)"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "bench signature $got"
echo "1 passed, 0 failed"
