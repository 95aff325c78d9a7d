#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes N distinct opening positions (EPD/FEN lines) reached from the start position by a
few uniformly random quiet legal moves. Diverse self-play for Texel datasets: games between
fixed-node engines are otherwise replayed identically from a small opening set.

usage: random-openings.py N [PLIES] [SEED] > openings.epd
Uses the independent move generator in scripts/perft-suite/xq.py (no engine needed).
"""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "perft-suite"))
import xq  # noqa: E402

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"


def main():
    n = int(sys.argv[1])
    plies = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    seen = set()
    tries = 0
    while len(seen) < n and tries < 50 * n:
        tries += 1
        b, side = xq.parse_fen(START)
        red = side == "w"
        ok = True
        for _ in range(plies):
            quiet = [m for m in xq.legal_moves(b, red) if b[m[2]][m[3]] is None]
            if not quiet:
                ok = False
                break
            r, f, r2, f2 = rng.choice(quiet)
            b[r2][f2], b[r][f] = b[r][f], None
            red = not red
        if not ok or xq.in_check(b, red):
            continue
        fen = xq.to_fen(b, "w" if red else "b")
        key = fen.rsplit(" ", 2)[0]
        if key in seen:
            continue
        seen.add(key)
        print(fen)


if __name__ == "__main__":
    main()
