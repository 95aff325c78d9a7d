"""Group 9: realistic middlegame positions, reached by playing from the start position.

Each ply: with probability P_RANDOM a uniformly random legal move (fairy-stockfish's list),
otherwise fairy-stockfish's own choice at a small depth. Deterministic (fixed seeds).
Result cached in mid.json so the data file is reproducible.
"""
import json
import os
import random
import re

import fsf

START = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
# (seed, plies, probability of a random move)
GAMES = [
    (1, 12, 0.5), (2, 15, 0.3), (3, 18, 0.4), (4, 21, 0.3), (5, 24, 0.5), (6, 27, 0.25),
    (7, 30, 0.35), (8, 33, 0.3), (9, 38, 0.4), (10, 43, 0.3), (11, 50, 0.35), (12, 57, 0.3),
    (13, 20, 1.0), (14, 29, 1.0),
]
CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mid.json")


def bestmove(moves, depth):
    out = fsf.run(["position fen %s moves %s" % (START, " ".join(moves)) if moves
                   else "position fen " + START, "go depth %d" % depth])
    m = re.search(r"^bestmove (\S+)", out, re.M)
    return m.group(1) if m else None


def legal(moves):
    out = fsf.run(["position fen %s moves %s" % (START, " ".join(moves)) if moves
                   else "position fen " + START, "go perft 1"])
    body = out.split("ucciok", 1)[1]
    return re.findall(r"^([a-i]\d[a-i]\d): 1$", body, re.M)


def play(seed, plies, prand):
    rng = random.Random(seed)
    moves = []
    for _ in range(plies):
        lm = legal(moves)
        if not lm:
            break
        if rng.random() < prand:
            m = rng.choice(sorted(lm))
        else:
            m = bestmove(moves, rng.choice([4, 5, 6]))
            assert m in lm, (m, lm)
        moves.append(m)
    fen, checkers = fsf.board_info(START, moves)
    return {"seed": seed, "plies": plies, "prand": prand, "moves": moves, "fen": fen,
            "checkers": checkers}


def games():
    if os.path.exists(CACHE):
        return json.load(open(CACHE))
    res = [play(*g) for g in GAMES]
    json.dump(res, open(CACHE, "w"), indent=1)
    return res


if __name__ == "__main__":
    for g in games():
        print(g["seed"], g["plies"], g["fen"], g["checkers"])
