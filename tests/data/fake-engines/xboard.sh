#!/bin/sh
# SPDX-License-Identifier: MIT
# A scripted xboard engine for tests/test_player_ext.c: features in two lines (done=0 then
# done=1), usermove=1, no setboard. On `go` it claims a draw, prints thinking output and
# then moves h9g7 if the last move it was told was `usermove h2e2`, else garbage.
# $1 = rejects: it answers every move with "Illegal move"; waitq: it moves only after `?`;
# resign: it answers `go` with thinking output and `resign`, and no move; late: it sends
# one feature line with setboard=1, without done=0, 3 s after protover (HoiXiangqi's order,
# slowed down), and after a `setboard` its move is h9g7.
mode=$1
last=none
while read -r cmd rest; do
    case $cmd in
    protover)
        if [ "$mode" = late ]; then
            sleep 3
            echo 'feature myname="Late xboard" setboard=1 ping=1 usermove=1 done=1'
            continue
        fi
        echo 'feature myname="Fake xboard" setboard=0 ping=1 done=0'
        echo 'feature usermove=1 san=0 variants="normal,xiangqi" option="Claim repetitions -check 1" done=1'
        ;;
    ping) echo "pong $rest" ;;
    setboard) last=h2e2 ;; # the test's FEN is the start after h2e2
    usermove)
        last=$rest
        [ "$mode" = rejects ] && echo "Illegal move: $rest"
        ;;
    go)
        if [ "$mode" = waitq ]; then # moves only when told to: `?`
            read -r q
            [ "$q" = "?" ] && echo "move h9g7"
            continue
        fi
        if [ "$mode" = resign ]; then
            echo " 6   -900     10      5000 h9g7"
            echo "resign"
            continue
        fi
        echo "1/2-1/2 {Draw by repetition}"
        echo " 4    -25      3      4000 h9g7 h0g2"
        if [ "$last" = h2e2 ]; then echo "move h9g7"; else echo "move junk"; fi
        ;;
    quit) exit 0 ;;
    esac
done
