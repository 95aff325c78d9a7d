// SPDX-License-Identifier: MIT
#include "see.h"

const int see_piece_value[PIECE_TYPE_NB] = {0, 5000, 120, 120, 280, 600, 285, 60};

typedef struct {
    const Board *b;
    Bitboard gone; // pieces already used in the exchange
    Square target;
} Exchange;

static inline bool present(const Exchange *x, Square s, Piece p)
{
    return board_piece(x->b, s) == p && !bb_test(x->gone, s);
}

static inline bool occupied(const Exchange *x, Square s)
{
    return board_piece(x->b, s) != NO_PIECE && !bb_test(x->gone, s);
}

/// Occupancy word of a rank or file with the used pieces removed.
static unsigned line_occ(const Exchange *x, bool rank, int line)
{
    const Board *b = x->b;
    unsigned occ = rank ? (b->rank_occ[RED][line] | b->rank_occ[BLACK][line])
                        : (b->file_occ[RED][line] | b->file_occ[BLACK][line]);
    Bitboard g = x->gone;
    while (g) {
        Square s = bb_pop(&g);
        if (rank && sq_rank(s) == line)
            occ &= ~(1u << sq_file(s));
        if (!rank && sq_file(s) == line)
            occ &= ~(1u << sq_rank(s));
    }
    return occ;
}

/// Finds c's least valuable piece attacking the target; SQ_NONE if none.
static Square least_attacker(const Exchange *x, Color c)
{
    const Square t = x->target;
    const int f = sq_file(t), r = sq_rank(t);
    Piece p = piece_make(c, SOLDIER);
    Square behind = c == RED ? t - FILE_NB : t + FILE_NB;
    if (behind >= 0 && behind < SQUARE_NB && present(x, behind, p))
        return behind;
    bool crossed_zone = c == RED ? r >= 5 : r <= 4;
    if (crossed_zone && f > 0 && present(x, t - 1, p))
        return t - 1;
    if (crossed_zone && f < FILE_NB - 1 && present(x, t + 1, p))
        return t + 1;
    const StepList *st = &attacks_advisor[t];
    for (int i = 0; i < st->n; i++)
        if (present(x, st->to[i], piece_make(c, ADVISOR)))
            return st->to[i];
    st = &attacks_elephant[t];
    for (int i = 0; i < st->n; i++)
        if (present(x, st->to[i], piece_make(c, ELEPHANT)) && !occupied(x, st->via[i]))
            return st->to[i];
    st = &attacks_horse_from[t];
    for (int i = 0; i < st->n; i++)
        if (present(x, st->to[i], piece_make(c, HORSE)) && !occupied(x, st->via[i]))
            return st->to[i];
    LineEntry er = attacks_rank[f][line_occ(x, true, r)];
    LineEntry ef = attacks_file[r][line_occ(x, false, f)];
    Piece cannon = piece_make(c, CANNON), chariot = piece_make(c, CHARIOT);
    for (unsigned m = LINE_SCREEN(er); m; m &= m - 1)
        if (present(x, r * FILE_NB + __builtin_ctz(m), cannon))
            return r * FILE_NB + __builtin_ctz(m);
    for (unsigned m = LINE_SCREEN(ef); m; m &= m - 1)
        if (present(x, __builtin_ctz(m) * FILE_NB + f, cannon))
            return __builtin_ctz(m) * FILE_NB + f;
    for (unsigned m = LINE_HIT(er); m; m &= m - 1)
        if (present(x, r * FILE_NB + __builtin_ctz(m), chariot))
            return r * FILE_NB + __builtin_ctz(m);
    for (unsigned m = LINE_HIT(ef); m; m &= m - 1)
        if (present(x, __builtin_ctz(m) * FILE_NB + f, chariot))
            return __builtin_ctz(m) * FILE_NB + f;
    st = &attacks_king[t];
    for (int i = 0; i < st->n; i++)
        if (present(x, st->to[i], piece_make(c, KING)))
            return st->to[i];
    return SQ_NONE;
}

bool see_ge(const Board *b, Move m, int threshold)
{
    Square from = move_from(m), to = move_to(m);
    Exchange x = {b, bb_square(from), to};
    // swap: what the side to recapture must win back for the exchange to fall below
    // threshold; res: 1 while the original mover is ahead.
    int swap = see_piece_value[piece_type(board_piece(b, to))] - threshold;
    if (swap < 0)
        return false;
    swap = see_piece_value[piece_type(board_piece(b, from))] - swap;
    if (swap <= 0)
        return true;
    Color stm = piece_color(board_piece(b, from));
    int res = 1;
    for (;;) {
        stm = (Color)(stm ^ 1);
        Square a = least_attacker(&x, stm);
        if (a == SQ_NONE)
            break;
        res ^= 1;
        PieceType t = piece_type(board_piece(b, a));
        x.gone |= bb_square(a);
        if (t == KING) // the general may recapture only if nothing can take it back
            return least_attacker(&x, (Color)(stm ^ 1)) != SQ_NONE ? res ^ 1 : res;
        swap = see_piece_value[t] - swap;
        if (swap < res)
            break;
    }
    return res;
}
