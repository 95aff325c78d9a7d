#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The engine's node-count signature: `xqforge bench` with no arguments (depth
# BENCH_DEPTH_SIGNATURE of search/bench.h, one thread, 16 MB) must search exactly the
# committed number of nodes. A functional change to search or evaluation changes it; update
# XQ_BENCH_SIGNATURE in tests/CMakeLists.txt and say `Bench: N` in the commit.
# Usage: bench_signature.sh XQFORGE EXPECTED_NODES
set -u
xq=$1 expect=$2
got=$("$xq" bench 2>/dev/null | awk -F: '/Nodes searched/ {gsub(/ /, "", $2); print $2}')
if [[ $got != "$expect" ]]; then
    echo "bench signature: got '$got', expected $expect (xqforge bench)"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "bench signature $got"
echo "1 passed, 0 failed"
