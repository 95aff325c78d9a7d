#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks an EPD opening book against a referee nobody here wrote (Fairy-Stockfish) and for
# repeats: prints the count of positions, duplicates (the same board and side to move twice),
# mirror pairs (a position and its left-right mirror, files a and i swapped, both in the book),
# positions with the side to move in check, illegal positions and lines whose c0 moves do not
# reach the position; exits 1 when any count but the first is not 0.
# Illegal: Fairy-Stockfish (UCCI, variant xiangqi) reads the FEN back differently (it refused a
# field), finds no legal move (`go perft 1` = 0), or sees the side not to move in check (its
# `Checkers:` with the side flipped); or the generals face each other on an open file (it
# accepts that, ../shared/ENGINES.md). The c0 line, where an EPD line has one, is played from
# the start position (`position startpos moves ...`, ranks 0-9) and must reach the same board
# and side: Fairy-Stockfish ignores a move it does not accept, so an illegal move shows there.
# Usage: scripts/check-book.sh BOOK.epd   (FSF=path/to/fairy-stockfish; default: PATH, /usr/games)
#   Lines: EPD or FEN (board side [fields...] [opcodes; c0 "m1 m2 ...";]); blank lines skipped.
set -euo pipefail
die() { echo "check-book.sh: $*" >&2; exit 2; }
case ${1:-} in
-h | --help) sed -n '/^# Usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
"") die "usage: check-book.sh BOOK.epd (--help)" ;;
esac
book=$1
[[ -f $book && -r $book ]] || die "$book: no such readable file"
fsf=${FSF:-$(command -v fairy-stockfish || echo /usr/games/fairy-stockfish)}
[[ -x $fsf ]] || die "$fsf: no Fairy-Stockfish binary (apt-get install fairy-stockfish, or set FSF)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One row per position: line number, board, side (w or b), c0 moves ("-" when none).
awk '
NF {
    side = $2 == "b" ? "b" : ($2 == "w" || $2 == "r") ? "w" : "?"
    c0 = "-"
    if (match($0, /c0 "[^"]*"/)) c0 = substr($0, RSTART + 4, RLENGTH - 5)
    if (c0 == "") c0 = "-"
    print NR "\t" $1 "\t" side "\t" c0
}' "$book" >"$tmp/rows.tsv"
[[ -s $tmp/rows.tsv ]] || die "$book: no positions"

# Repeats and open-file generals, from the board text alone.
awk -F'\t' '
function expand(b,    out, i, ch) {
    out = ""
    for (i = 1; i <= length(b); i++) {
        ch = substr(b, i, 1)
        if (ch ~ /[1-9]/) out = out substr(".........", 1, ch + 0)
        else out = out ch
    }
    return out
}
function mirror(e,    n, r, i, out, row) {
    n = split(e, r, "/"); out = ""
    for (i = 1; i <= n; i++) {
        row = ""
        for (k = length(r[i]); k >= 1; k--) row = row substr(r[i], k, 1)
        out = out (i > 1 ? "/" : "") row
    }
    return out
}
function facing(e,    r, n, f, i, ch, seen) {
    n = split(e, r, "/")
    for (f = 1; f <= 9; f++) {
        seen = ""
        for (i = 1; i <= n; i++) {
            ch = substr(r[i], f, 1)
            if (ch == ".") continue
            if ((ch == "k" || ch == "K") && (seen == "k" || seen == "K") && seen != ch)
                return 1
            seen = ch
        }
    }
    return 0
}
{
    e = expand($2); key = e " " $3; m = mirror(e) " " $3
    if (key in seen) dup++
    else {
        # A mirror pair: the mirror is another position already in the book.
        if (m != key && (m in seen)) mir++
        seen[key] = 1
    }
    if (facing(e)) face = face "|" $1
}
END { print dup + 0, mir + 0, face "|" }' "$tmp/rows.tsv" >"$tmp/repeats"

# Fairy-Stockfish: for each position its FEN read back and checkers, legal moves, the FEN with
# the side flipped and its checkers, and where there is a c0 line the position it reaches.
# `go perft` answers from a search thread, so its "Nodes searched" lines are matched by order.
awk -F'\t' '
BEGIN { print "ucci"; print "setoption UCI_Variant xiangqi" }
{
    other = $3 == "w" ? "b" : "w"
    print "position fen " $2 " " $3 " - - 0 1"; print "d"; print "go perft 1"
    print "position fen " $2 " " other " - - 0 1"; print "d"
    if ($4 != "-") { print "position startpos moves " $4; print "d" }
}
END { print "quit" }' "$tmp/rows.tsv" | "$fsf" >"$tmp/fsf.out" 2>&1 ||
    die "$fsf failed: $(tail -3 "$tmp/fsf.out")"

read -r dups mirrors facing <"$tmp/repeats"
awk -F'\t' -v facing="$facing" '
FNR == NR {
    if (/^Fen: /) { split($0, f, " "); fen[++nf] = f[2] " " f[3] }
    else if (/^Checkers:/) chk[nf] = $0 != "Checkers:" && $0 != "Checkers: "
    else if (/^Nodes searched: /) nodes[++nn] = substr($0, 17) + 0
    next
}
{
    n++; want = $2 " " $3; i = ++at
    bad = 0; why = ""
    if (fen[i] != want) { bad = 1; why = " Fairy-Stockfish reads " fen[i] }
    if (chk[i]) { incheck++ }
    if (index(facing, "|" $1 "|")) { bad = 1; why = why " the generals face each other" }
    if (!(n in nodes) || nodes[n] == 0) { bad = 1; why = why " no legal move" }
    i = ++at
    if (chk[i]) { bad = 1; why = why " the side not to move is in check" }
    if ($4 != "-") {
        i = ++at
        if (fen[i] != want && ++badline <= 5)
            print "  line " $1 ": c0 reaches " fen[i] > "/dev/stderr"
    }
    if (bad) { illegal++; if (illegal <= 5) print "  line " $1 ":" why > "/dev/stderr" }
}
END {
    if (nn != n) {
        print "check-book.sh: Fairy-Stockfish answered " nn " of " n " perfts" > "/dev/stderr"
        exit 2
    }
    printf "positions %d\nduplicates %d\nmirror_pairs %d\n", n, dups, mirrors
    printf "in_check %d\nillegal %d\nc0_mismatch %d\n", incheck, illegal, badline
    exit (dups + mirrors + incheck + illegal + badline) ? 1 : 0
}' dups="$dups" mirrors="$mirrors" "$tmp/fsf.out" "$tmp/rows.tsv"
