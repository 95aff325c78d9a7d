#!/bin/sh
# SPDX-License-Identifier: MIT
# A scripted UCI engine for tests/test_player_ext.c. $1 picks how it answers `go`:
# good, mate, crash, silent, illegal, garbage, none, flood, floodmove; `hang` never finishes
# the handshake, `exit` quits at once. inspect: moves h2e2 if it sees no secret (the
# variables XQ_REPORT_TOKEN, AWS_SECRET_ACCESS_KEY; a descriptor above 2 other than the one
# the shell reads this script from) and sees XQ_TEST_SET=yes and XQ_TEST_PASSED=passed, else
# `bestmove leak`. forkexit: starts `sleep` (holding our output open), writes its pid to
# $XQ_TEST_PIDFILE and exits 3. burn: spins (for rlimit_cpu). env: prints its environment
# (`info string env NAME=VALUE` lines, for the engine log's check), then moves h2e2.
mode=$1
big=$(printf '%070000d' 0) # longer than PROCESS_LINE_MAX
[ "$mode" = exit ] && exit 1
# crashrestart COUNTER: the first start crashes on go, the second dies before its handshake,
# later ones play good moves (an engine whose restart crashes once).
if [ "$mode" = crashrestart ]; then
    n=$(($(cat "$2" 2>/dev/null || echo 0) + 1))
    echo "$n" >"$2"
    [ "$n" = 2 ] && exit 3
    [ "$n" = 1 ] && mode=crash || mode=good
fi
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
        inspect)
            # The listing is made by another shell: no descriptor of this one's own work (a
            # glob's directory handle, a pipe, a redirection's saved stdout) gets into it.
            list=$(mktemp)
            sh -c 'ls -l "/proc/$1/fd" >"$2"' sh $$ "$list"
            leak=$(grep -- '->' "$list" | grep -v ' [012] -> \|/uci\.sh$' | tr ' \n' '_+')
            rm -f "$list"
            env | grep -q '^XQ_REPORT_TOKEN=\|^AWS_SECRET_ACCESS_KEY=' && leak="$leak+env"
            [ "$XQ_TEST_SET" = yes ] && [ "$XQ_TEST_PASSED" = passed ] || leak="$leak+missing"
            if [ -z "$leak" ]; then echo "bestmove h2e2"; else echo "bestmove leak$leak"; fi
            ;;
        forkexit)
            sleep 1000 &
            echo $! >"$XQ_TEST_PIDFILE"
            exit 3
            ;;
        burn) while :; do :; done ;;
        env)
            env | while read -r line; do echo "info string env $line"; done
            echo "bestmove h2e2"
            ;;
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
