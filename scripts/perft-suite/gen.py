#!/usr/bin/env python3
"""Generate xqforge tests/data/perft.epd from fairy-stockfish perft counts.

Usage: python3 gen.py [output-path]   (default: perft.epd here; the committed suite is tests/data/perft.epd)

For every position:
  * validate the FEN against the project's rules (xq.validate),
  * check the intended moves are present/absent in fairy-stockfish's depth-1 list,
  * take D1..D4 from fairy-stockfish (UCCI mode, ranks 0-9); keep D4 only if <= 5,000,000,
  * cross-check D1..D3 (and D4 when <= PY_D4_MAX) with an independent Python move generator.
Any disagreement aborts.
"""
import sys

import constructed
import fsf
import mid
import xq

D4_MAX = 5_000_000
PY_D4_MAX = 1_500_000

GROUP_TITLES = {
    1: "horse legs (blocked by either colour, edges/corners, horse checks, blocking the leg)",
    2: "elephant eyes and the river (elephants on c4/g4/c5/g5 cannot cross)",
    3: "palaces (generals and advisors on palace edges/corners, general moves limited by the palace)",
    4: "cannon screens (captures over one screen of either colour, cannon checks answered by "
       "removing/adding a screen, double screens, cannon + chariot batteries)",
    5: "flying general (pieces pinned between the generals, general moves that would face the other general)",
    6: "checks and pins (chariot pins, cannon-screen pins, discovered and double checks, "
       "horse-leg pins, soldier checks)",
    7: "soldiers before/after crossing the river, sideways moves, soldiers on the last rank",
    8: "no legal moves: checkmates and stalemates (D1 = D2 = D3 = 0)",
    9: "realistic middlegame positions reached by play from the start position "
       "(mix of fairy-stockfish choices and random legal moves)",
}


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def collect():
    entries = []  # (group, fen, comment, expect)
    for grp, pieces, side, comment, expect, *hf in constructed.POSITIONS:
        fen = xq.build(pieces, side, *hf)
        entries.append((grp, fen, comment, expect))
    for g in mid.games():
        side = "Red" if g["fen"].split()[1] == "w" else "Black"
        chk = " (in check)" if g["checkers"] else ""
        how = ("random legal moves" if g["prand"] >= 1 else
               "fairy-stockfish moves, %d%% random" % round(100 * g["prand"]))
        comment = "middlegame after %d plies from the start (%s, seed %d), %s to move%s" % (
            g["plies"], how, g["seed"], side, chk)
        entries.append((9, g["fen"], comment, ""))
    return entries


def check_entry(grp, fen, comment, expect):
    errs = xq.validate(fen)
    if errs:
        fail("%s invalid: %s" % (fen, errs))
    b, side = xq.parse_fen(fen)
    red = side == "w"
    fmoves = set(fsf.divide1(fen))
    pmoves = set(xq.mstr(m) for m in xq.legal_moves(b, red))
    if fmoves != pmoves:
        fail("%s: move lists differ fsf-only=%s py-only=%s" % (
            fen, sorted(fmoves - pmoves), sorted(pmoves - fmoves)))
    for tok in expect.split():
        mv = tok[1:]
        if tok[0] == "+" and mv not in fmoves:
            fail("%s: expected legal %s; fsf moves %s" % (fen, mv, sorted(fmoves)))
        if tok[0] == "-" and mv in fmoves:
            fail("%s: expected illegal %s" % (fen, mv))
    counts = fsf.perfts(fen, [1, 2, 3, 4])
    for d in (1, 2, 3):
        p = xq.perft(b, red, d)
        if p != counts[d]:
            fail("%s: depth %d fsf=%d py=%d" % (fen, d, counts[d], p))
    if counts[4] <= PY_D4_MAX:
        p = xq.perft(b, red, 4)
        if p != counts[4]:
            fail("%s: depth 4 fsf=%d py=%d" % (fen, counts[4], p))
    incheck = xq.in_check(b, red)
    if grp == 8:
        if counts[1] != 0:
            fail("%s: group 8 position has moves" % fen)
        kind = "checkmate" if incheck else "stalemate"
        if not comment.lower().startswith(kind):
            fail("%s: comment says otherwise but it is %s" % (fen, kind))
    return counts, incheck


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "perft.epd"
    entries = collect()
    lines = [
        "# xqforge perft suite: xiangqi positions with perft node counts.",
        "# Counts were produced by Debian's fairy-stockfish 11.1 (UCCI mode, `go perft N`) and",
        "# cross-checked at depths 1-3 (and at depth 4 where small) with an independent move generator.",
        "# Format: <FEN> ;D1 <n> ;D2 <n> ;D3 <n> [;D4 <n>] ;c \"<comment>\"",
        "# FEN: Pikafish convention (ranks 9..0, w = Red, b = Black); D4 only where it is <= 5,000,000.",
        "# The start position is tested separately and is not listed here.",
    ]
    stats = {}
    cur = None
    for grp, fen, comment, expect in entries:
        if grp != cur:
            lines.append("# group %d: %s" % (grp, GROUP_TITLES[grp]))
            cur = grp
        counts, incheck = check_entry(grp, fen, comment, expect)
        assert '"' not in comment and ";" not in comment, comment
        s = "%s ;D1 %d ;D2 %d ;D3 %d" % (fen, counts[1], counts[2], counts[3])
        if counts[4] <= D4_MAX:
            s += " ;D4 %d" % counts[4]
        s += ' ;c "%s"' % comment
        lines.append(s)
        st = stats.setdefault(grp, [0, 0, 0, 0])
        st[0] += 1
        st[1 if fen.split()[1] == "w" else 2] += 1
        st[3] += counts[4] <= D4_MAX
        sys.stderr.write("ok g%d %s %s\n" % (grp, fen, counts))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(v[0] for v in stats.values())
    sys.stderr.write("wrote %s: %d positions\n" % (out, total))
    for g in sorted(stats):
        sys.stderr.write("  group %d: %d (w %d, b %d, with D4 %d)\n" % ((g,) + tuple(stats[g])))


if __name__ == "__main__":
    main()
