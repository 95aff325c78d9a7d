#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/bench-nnue.sh's figures, without a real search: a stand-in xqforge and
# Fairy-Stockfish print the nodes/s of each round from a list, and the script must print each
# speed's median over the rounds, the ratios of those medians and the median of the rounds' own
# ratios (worked out by hand below, so a wrong median or ratio fails); a bad ROUNDS is refused.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "$0")/tally_lib.sh"

# Round r (1..3) prints the r-th value of its list; the call counts are kept in files.
cat >"$dir/xq" <<'XQ'
#!/usr/bin/env bash
d=$(dirname "$0")
next() { local n; n=$(($(cat "$d/$1" 2>/dev/null || echo 0) + 1)); echo $n >"$d/$1"; echo "$2" | cut -d' ' -f$n; }
case "$1 $2" in
"nnue net") printf 'id           : 0123456789ab\nhidden       : 256\ndescription  : stand-in\n' ;;
"bench --fens") printf 'fen 1\nfen 2\n' ;;
bench\ *)
    if [[ " $* " == *" UseNNUE=false "* ]]; then v=$(next lin "500 1500 1000") n=300
    else v=$(next nnue "1000 3000 2000") n=400; fi
    printf 'Nodes searched  : %d\nNodes/second    : %d\n' "$n" "$v" ;;
*) exit 9 ;;
esac
XQ
cat >"$dir/fsf" <<'FSF'
#!/usr/bin/env bash
d=$(dirname "$0")
n=$(($(cat "$d/fsf.n" 2>/dev/null || echo 0) + 1)); echo $n >"$d/fsf.n"
printf 'Nodes searched  : 100\nNodes/second    : %d\n' "$(echo "1000 1000 500" | cut -d' ' -f$n)" >&2
FSF
chmod +x "$dir/xq" "$dir/fsf"

# Medians: NNUE 2000 (1000 3000 2000), linear 1000, Fairy-Stockfish 1000 (1000 1000 500);
# ratios of the medians 2.00, 2.00 and 1.00; the rounds' own NNUE / FSF ratios 1.00, 3.00 and
# 4.00, whose median (3.00) differs from the ratio of the medians.
out=$(XQ=$dir/xq FSF=$dir/fsf ROUNDS=3 "$here/scripts/bench-nnue.sh" 2>&1)
rc=$?
[[ $rc -eq 0 ]] && ok || bad "exit $rc: $out"
line() { grep -E "^$1" <<<"$out" | tr -s ' '; }
[[ $(line 'xqforge NNUE') == "xqforge NNUE depth 11 nodes 400 nodes/s 2000" ]] && ok ||
    bad "NNUE row: $(line 'xqforge NNUE')"
[[ $(line 'xqforge linear') == "xqforge linear depth 11 nodes 300 nodes/s 1000" ]] && ok ||
    bad "linear row: $(line 'xqforge linear')"
[[ $(line 'fairy-stockfish') == "fairy-stockfish depth 10 nodes 100 nodes/s 1000" ]] && ok ||
    bad "FSF row: $(line 'fairy-stockfish')"
[[ $(line 'NNUE / linear:') == "NNUE / linear: 2.00x" &&
    $(line 'NNUE / fairy-stockfish:') == "NNUE / fairy-stockfish: 2.00x" &&
    $(line 'linear / fairy-stockfish:') == "linear / fairy-stockfish: 1.00x" ]] && ok ||
    bad "ratios: $out"
[[ $(line 'NNUE / fairy-stockfish, round') == "NNUE / fairy-stockfish, round by round: median 3.00x (1.00 3.00 4.00)" ]] &&
    ok || bad "round by round: $(line 'NNUE / fairy-stockfish, round')"
[[ $(line 'nodes/s: the median') == "nodes/s: the median of 3 rounds" ]] && ok || bad "rounds line: $out"
[[ $(line '2 positions') == "2 positions; net 0123456789ab, hidden 256 (stand-in)" ]] && ok ||
    bad "net line: $(line '2 positions')"

out=$(XQ=$dir/xq FSF=$dir/fsf ROUNDS=0 "$here/scripts/bench-nnue.sh" 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *"ROUNDS='0': expected a positive integer"* ]] && ok || bad "ROUNDS=0: exit $rc: $out"

tally_end
