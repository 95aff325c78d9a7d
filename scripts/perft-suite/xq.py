"""Independent xiangqi validator + move generator (used only to cross-check fairy-stockfish).

Board: dict-free 10x9 list, b[r][f], r 0..9 (rank 0 = Red back rank), f 0..8 (a..i).
Pieces: 'K','A','B','N','R','C','P' red; lowercase black. None = empty.
"""

FILES = "abcdefghi"


def sq(name):
    return (int(name[1:]), FILES.index(name[0]))


def name(r, f):
    return FILES[f] + str(r)


def parse_fen(fen):
    parts = fen.split()
    if len(parts) != 6:
        raise ValueError("FEN needs 6 fields")
    rows = parts[0].split("/")
    if len(rows) != 10:
        raise ValueError("need 10 ranks")
    b = [[None] * 9 for _ in range(10)]
    for i, row in enumerate(rows):
        r = 9 - i
        f = 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                if ch not in "KABNRCPkabnrcp":
                    raise ValueError("bad piece letter " + ch)
                if f > 8:
                    raise ValueError("rank too long")
                b[r][f] = ch
                f += 1
        if f != 9:
            raise ValueError("rank %d has %d files" % (r, f))
    side = parts[1]
    if side not in ("w", "b"):
        raise ValueError("bad side")
    if parts[2] != "-" or parts[3] != "-":
        raise ValueError("fields 3,4 must be -")
    int(parts[4]); int(parts[5])
    return b, side


def to_fen(b, side, half=0, full=1):
    rows = []
    for r in range(9, -1, -1):
        s = ""
        e = 0
        for f in range(9):
            p = b[r][f]
            if p is None:
                e += 1
            else:
                if e:
                    s += str(e)
                    e = 0
                s += p
        if e:
            s += str(e)
        rows.append(s)
    return "/".join(rows) + " %s - - %d %d" % (side, half, full)


def build(pieces, side, half=0, full=1):
    """pieces: dict square-name -> letter"""
    b = [[None] * 9 for _ in range(10)]
    for k, v in pieces.items():
        r, f = sq(k)
        assert b[r][f] is None, k
        b[r][f] = v
    return to_fen(b, side, half, full)


def is_red(p):
    return p.isupper()


def in_palace(r, f, red):
    return 3 <= f <= 5 and ((0 <= r <= 2) if red else (7 <= r <= 9))


ADVISOR_PTS = {True: {(0, 3), (0, 5), (1, 4), (2, 3), (2, 5)},
               False: {(9, 3), (9, 5), (8, 4), (7, 3), (7, 5)}}
ELEPHANT_PTS = {True: {(0, 2), (0, 6), (2, 0), (2, 4), (2, 8), (4, 2), (4, 6)},
                False: {(9, 2), (9, 6), (7, 0), (7, 4), (7, 8), (5, 2), (5, 6)}}
MAXCOUNT = {'K': 1, 'A': 2, 'B': 2, 'N': 2, 'R': 2, 'C': 2, 'P': 5}


def find_king(b, red):
    k = 'K' if red else 'k'
    for r in range(10):
        for f in range(9):
            if b[r][f] == k:
                return r, f
    return None


def generals_face(b):
    rk = find_king(b, True)
    bk = find_king(b, False)
    if rk[1] != bk[1]:
        return False
    f = rk[1]
    for r in range(rk[0] + 1, bk[0]):
        if b[r][f] is not None:
            return False
    return True


def attacked(b, r, f, by_red):
    """Is square (r,f) attacked by side by_red (not counting general-facing)?"""
    def own(p):
        return p is not None and is_red(p) == by_red
    # orthogonal rays: chariot at first piece, cannon at second piece
    for dr, df in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        rr, ff = r + dr, f + df
        cnt = 0
        while 0 <= rr <= 9 and 0 <= ff <= 8:
            p = b[rr][ff]
            if p is not None:
                if cnt == 0:
                    if own(p) and p.upper() == 'R':
                        return True
                    cnt = 1
                else:
                    if own(p) and p.upper() == 'C':
                        return True
                    break
            rr += dr
            ff += df
    # horses
    for dr, df in ((1, 2), (1, -2), (-1, 2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1)):
        hr, hf = r + dr, f + df
        if not (0 <= hr <= 9 and 0 <= hf <= 8):
            continue
        p = b[hr][hf]
        if p is None or not own(p) or p.upper() != 'N':
            continue
        # horse moves from (hr,hf) by (-dr,-df); leg is one step along the long axis
        if abs(dr) == 2:
            lr, lf = hr - dr // 2, hf
        else:
            lr, lf = hr, hf - df // 2
        if b[lr][lf] is None:
            return True
    # soldiers
    fwd = 1 if by_red else -1
    # soldier directly behind (from its view) moving forward onto (r,f)
    sr = r - fwd
    if 0 <= sr <= 9:
        p = b[sr][f]
        if p is not None and own(p) and p.upper() == 'P':
            return True
    for df in (1, -1):
        ff = f + df
        if 0 <= ff <= 8:
            p = b[r][ff]
            if p is not None and own(p) and p.upper() == 'P':
                crossed = (r >= 5) if by_red else (r <= 4)
                if crossed:
                    return True
    # general adjacent (only matters for palace squares; irrelevant for general safety since
    # generals can never be orthogonally adjacent across palaces) -- skip
    return False


def in_check(b, red):
    kr, kf = find_king(b, red)
    return attacked(b, kr, kf, not red)


def pseudo_moves(b, red):
    mv = []

    def add(r, f, r2, f2):
        if not (0 <= r2 <= 9 and 0 <= f2 <= 8):
            return
        t = b[r2][f2]
        if t is not None and is_red(t) == red:
            return
        mv.append((r, f, r2, f2))

    for r in range(10):
        for f in range(9):
            p = b[r][f]
            if p is None or is_red(p) != red:
                continue
            t = p.upper()
            if t == 'K':
                for dr, df in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    if in_palace(r + dr, f + df, red):
                        add(r, f, r + dr, f + df)
            elif t == 'A':
                for dr, df in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                    if in_palace(r + dr, f + df, red):
                        add(r, f, r + dr, f + df)
            elif t == 'B':
                for dr, df in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                    r2, f2 = r + 2 * dr, f + 2 * df
                    if not (0 <= r2 <= 9 and 0 <= f2 <= 8):
                        continue
                    if red and r2 > 4 or (not red) and r2 < 5:
                        continue
                    if b[r + dr][f + df] is not None:
                        continue
                    add(r, f, r2, f2)
            elif t == 'N':
                for dr, df in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    lr, lf = r + dr, f + df
                    if not (0 <= lr <= 9 and 0 <= lf <= 8) or b[lr][lf] is not None:
                        continue
                    if dr:
                        add(r, f, r + 2 * dr, f + 1)
                        add(r, f, r + 2 * dr, f - 1)
                    else:
                        add(r, f, r + 1, f + 2 * df)
                        add(r, f, r - 1, f + 2 * df)
            elif t == 'R' or t == 'C':
                for dr, df in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    rr, ff = r + dr, f + df
                    screen = False
                    while 0 <= rr <= 9 and 0 <= ff <= 8:
                        q = b[rr][ff]
                        if not screen:
                            if q is None:
                                add(r, f, rr, ff)
                            else:
                                if t == 'R':
                                    add(r, f, rr, ff)
                                    break
                                screen = True
                        else:
                            if q is not None:
                                add(r, f, rr, ff)
                                break
                        rr += dr
                        ff += df
            elif t == 'P':
                fwd = 1 if red else -1
                add(r, f, r + fwd, f)
                crossed = (r >= 5) if red else (r <= 4)
                if crossed:
                    add(r, f, r, f + 1)
                    add(r, f, r, f - 1)
    return mv


def legal_moves(b, red):
    out = []
    for m in pseudo_moves(b, red):
        r, f, r2, f2 = m
        cap = b[r2][f2]
        p = b[r][f]
        b[r2][f2] = p
        b[r][f] = None
        ok = not generals_face(b) and not in_check(b, red)
        b[r][f] = p
        b[r2][f2] = cap
        if ok:
            out.append(m)
    return out


def perft(b, red, depth):
    ms = legal_moves(b, red)
    if depth == 1:
        return len(ms)
    n = 0
    for (r, f, r2, f2) in ms:
        cap = b[r2][f2]
        p = b[r][f]
        b[r2][f2] = p
        b[r][f] = None
        n += perft(b, not red, depth - 1)
        b[r][f] = p
        b[r2][f2] = cap
    return n


def mstr(m):
    r, f, r2, f2 = m
    return name(r, f) + name(r2, f2)


def validate(fen):
    """Return list of problems (empty if valid under project rules)."""
    errs = []
    try:
        b, side = parse_fen(fen)
    except Exception as e:  # noqa
        return ["parse: %s" % e]
    counts = {}
    for r in range(10):
        for f in range(9):
            p = b[r][f]
            if p is None:
                continue
            counts[p] = counts.get(p, 0) + 1
            red = is_red(p)
            t = p.upper()
            if t == 'K' and not in_palace(r, f, red):
                errs.append("general outside palace " + name(r, f))
            if t == 'A' and (r, f) not in ADVISOR_PTS[red]:
                errs.append("advisor off point " + name(r, f))
            if t == 'B' and (r, f) not in ELEPHANT_PTS[red]:
                errs.append("elephant off point " + name(r, f))
            if t == 'P' and ((red and r <= 2) or ((not red) and r >= 7)):
                errs.append("soldier on forbidden rank " + name(r, f))
    for p, n in counts.items():
        if n > MAXCOUNT[p.upper()]:
            errs.append("too many %s" % p)
    if counts.get('K', 0) != 1 or counts.get('k', 0) != 1:
        errs.append("need exactly one K and one k")
        return errs
    if generals_face(b):
        errs.append("generals face each other")
    stm_red = side == 'w'
    if in_check(b, not stm_red):
        errs.append("side not to move is in check")
    return errs
