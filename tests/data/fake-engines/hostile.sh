#!/bin/sh
# SPDX-License-Identifier: MIT
# A hostile UCI engine for tests/drills.sh. $1: `flood` answers go with endless info lines
# and no bestmove, `noready` answers only the first isready (the start-up check), `bigline` prints a 10 MB line before
# each bestmove (a legal first move for either side, then whatever comes).
mode=$1
while read -r cmd rest; do
    case $cmd in
    uci) echo "id name Hostile $mode"; echo "uciok" ;;
    isready)
        [ "$mode" = noready ] && [ -n "$ready" ] && continue
        ready=1
        echo "readyok"
        ;;
    position) pos=$rest ;;
    quit) exit 0 ;;
    go)
        case $mode in
        flood) yes "info depth 1 score cp 0 nodes 1 pv h2e2" ;;
        bigline)
            head -c 10000000 /dev/zero | tr '\0' x
            echo
            # Red to move after an even number of moves.
            n=$(echo "$pos" | sed -n 's/.*moves//p' | wc -w)
            if [ $((n % 2)) -eq 0 ]; then echo "bestmove h2e2"; else echo "bestmove h7e7"; fi
            ;;
        esac
        ;;
    esac
done
