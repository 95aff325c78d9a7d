// SPDX-License-Identifier: MIT
#include "movegen.h"

typedef enum { GEN_ALL, GEN_CAPTURES } GenMode;

static inline void add(MoveList *l, Square from, Square to)
{
    l->moves[l->count++] = move_make(from, to);
}

/// Moves to the points of a 9- or 10-bit line mask, along a rank or along a file.
static inline void add_rank_mask(MoveList *l, Square from, int rank, unsigned mask)
{
    for (; mask; mask &= mask - 1) add(l, from, rank * FILE_NB + __builtin_ctz(mask));
}

static inline void add_file_mask(MoveList *l, Square from, int file, unsigned mask)
{
    for (; mask; mask &= mask - 1) add(l, from, __builtin_ctz(mask) * FILE_NB + file);
}

/// Chariots (screen = false) and cannons (screen = true).
static inline void gen_sliders(const Board *b, MoveList *l, Bitboard set, bool screen, GenMode mode)
{
    const Color them = (Color)(b->side ^ 1);
    while (set) {
        Square s = bb_pop(&set);
        int f = sq_file(s), r = sq_rank(s);
        LineEntry er = attacks_rank[f][b->rank_occ[RED][r] | b->rank_occ[BLACK][r]];
        LineEntry ef = attacks_file[r][b->file_occ[RED][f] | b->file_occ[BLACK][f]];
        unsigned cr = (screen ? LINE_SCREEN(er) : LINE_HIT(er)) & b->rank_occ[them][r];
        unsigned cf = (screen ? LINE_SCREEN(ef) : LINE_HIT(ef)) & b->file_occ[them][f];
        add_rank_mask(l, s, r, cr);
        add_file_mask(l, s, f, cf);
        if (mode == GEN_ALL) {
            add_rank_mask(l, s, r, LINE_QUIET(er));
            add_file_mask(l, s, f, LINE_QUIET(ef));
        }
    }
}

/// Stepping pieces: a target is available when its blocking point is empty and it does not
/// hold a piece of the mover's colour.
static inline void gen_steps(const Board *b, MoveList *l, Bitboard set, const StepList *table,
                             bool blockable, GenMode mode)
{
    const unsigned them = (unsigned)(b->side ^ 1);
    while (set) {
        Square s = bb_pop(&set);
        const StepList *st = &table[s];
        for (int i = 0; i < st->n; i++) {
            unsigned p = b->squares[st->to[i]];
            if (blockable && b->squares[st->via[i]] != NO_PIECE) continue;
            if (p == NO_PIECE ? mode == GEN_ALL : (p >> 3) == them) add(l, s, st->to[i]);
        }
    }
}

static inline void generate(const Board *b, MoveList *l, GenMode mode)
{
    const Color us = b->side;
    const Bitboard *own = b->pieces[us];
    l->count = 0;
    gen_sliders(b, l, own[CHARIOT], false, mode);
    gen_sliders(b, l, own[CANNON], true, mode);
    gen_steps(b, l, own[HORSE], attacks_horse, true, mode);
    gen_steps(b, l, own[SOLDIER], attacks_soldier[us], false, mode);
    gen_steps(b, l, own[ELEPHANT], attacks_elephant, true, mode);
    gen_steps(b, l, own[ADVISOR], attacks_advisor, false, mode);
    gen_steps(b, l, own[KING], attacks_king, false, mode);
}

bool movegen_legal_after(const Board *b, Move m)
{
    Square from = move_from(m), to = move_to(m);
    Square ksq = b->king_sq[b->side];
    return !board_attacked_after(b, b->side, from == ksq ? to : ksq, from, to);
}

/// Keeps the legal moves of a pseudo-legal list. Out of check, only moves that leave or
/// reach the general's lines or leave a horse-leg point beside it can expose the general.
static inline int filter_legal(const Board *b, MoveList *l)
{
    const Color us = b->side;
    const Square ksq = b->king_sq[us];
    const uint8_t *expo = attacks_exposure[ksq];
    const bool check = b->in_check;
    int n = 0;
    for (int i = 0; i < l->count; i++) {
        Move m = l->moves[i];
        Square from = move_from(m), to = move_to(m);
        if ((check || ((expo[from] & 1) | (expo[to] & 2))) &&
            board_attacked_after(b, us, from == ksq ? to : ksq, from, to))
            continue;
        l->moves[n++] = m;
    }
    l->count = n;
    return n;
}

void movegen_pseudo(const Board *b, MoveList *list) { generate(b, list, GEN_ALL); }

int movegen_legal(const Board *b, MoveList *list)
{
    generate(b, list, GEN_ALL);
    return filter_legal(b, list);
}

int movegen_captures(const Board *b, MoveList *list)
{
    generate(b, list, GEN_CAPTURES);
    return filter_legal(b, list);
}

bool movegen_is_legal(const Board *b, Move m)
{
    Square from = move_from(m), to = move_to(m);
    if (from >= SQUARE_NB || to >= SQUARE_NB) return false;
    Piece p = board_piece(b, from);
    if (p == NO_PIECE || piece_color(p) != b->side) return false;
    MoveList l;
    generate(b, &l, GEN_ALL);
    for (int i = 0; i < l.count; i++)
        if (l.moves[i] == m) return movegen_legal_after(b, m);
    return false;
}
