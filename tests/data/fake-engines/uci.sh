#!/bin/sh
# SPDX-License-Identifier: MIT
# A scripted UCI engine for tests/test_player_ext.c. $1 picks how it answers `go`:
# good, mate, crash, silent, illegal, garbage, none, flood, floodmove; `hang` never finishes
# the handshake, `exit` quits at once.
mode=$1
big=$(printf '%070000d' 0) # longer than PROCESS_LINE_MAX
[ "$mode" = exit ] && exit 1
while read -r cmd rest; do
    case $cmd in
    uci)
        [ "$mode" = hang ] && continue
        echo "id name Fake UCI $mode"
        echo "option name Hash type spin default 16 min 1 max 64"
        echo "uciok"
        ;;
    isready) echo "readyok" ;;
    quit) exit 0 ;;
    go)
        case $mode in
        good)
            echo "info depth 3 score cp -40 nodes 100 pv h2e2"
            echo "info string depth 99 score cp 5000"
            echo "info depth 7 multipv 2 score cp 999 nodes 5"
            echo "info depth 7 seldepth 9 multipv 1 score cp 33 upperbound nodes 1234 pv h2e2"
            echo "bestmove h2e2 ponder h9g7"
            ;;
        mate)
            echo "info depth 5 score mate -3 nodes 10"
            echo "bestmove h2e2"
            ;;
        crash) exit 3 ;;
        silent) ;;
        illegal) echo "bestmove a0a5" ;;
        garbage) echo "bestmove hello" ;;
        none) echo "bestmove (none)" ;;
        flood) while :; do echo "$big"; done ;;
        floodmove)
            i=0
            while [ $i -lt 40 ]; do
                echo "info string $big"
                i=$((i + 1))
            done
            echo "bestmove h2e2"
            ;;
        esac
        ;;
    esac
done
