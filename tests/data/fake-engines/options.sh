#!/bin/sh
# SPDX-License-Identifier: MIT
# A scripted engine that advertises options, for tests/test_player_ext.c and the job check
# in tests/cli_test.sh. $1 = uci, ucci or xboard: the protocol it speaks. It answers the
# handshake and pings only (it never moves); `quit` ends it. With XQ_TEST_STARTS set it
# appends "start" to that file when it starts and "quit" when told to quit.
proto=$1
[ -n "$XQ_TEST_STARTS" ] && echo start >>"$XQ_TEST_STARTS"
while read -r cmd rest; do
    case $cmd in
    uci)
        echo "id name Fake options"
        echo "option name Hash type spin default 16 min 1 max 64"
        echo "option name Skill Level type spin default 20 min 0 max 20"
        echo "option name Ponder type check default false"
        echo "option name Clear Hash type button"
        echo "option name EvalFile type string default nn-1.bin"
        echo "uciok"
        ;;
    ucci)
        echo "id name Fake options"
        echo "option usebook type check default true"
        echo "option hashsize type spin min 0 max 1024 default 0"
        echo "option bookfiles type string default book.dat"
        echo "ucciok"
        ;;
    protover)
        echo 'feature myname="Fake options" ping=1 setboard=1 variants="xiangqi" done=0'
        echo 'feature option="Claim repetitions -check 1" option="Depth Limit -spin 0 0 99"'
        echo 'feature option="Book-File -file book.bin" option="Resign -button" done=1'
        ;;
    isready) echo "readyok" ;;
    ping) echo "pong $rest" ;;
    quit)
        [ -n "$XQ_TEST_STARTS" ] && echo quit >>"$XQ_TEST_STARTS"
        exit 0
        ;;
    esac
done
[ -n "$proto" ]
