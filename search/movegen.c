// SPDX-License-Identifier: MIT
#include "movegen.h"

typedef enum { GEN_ALL, GEN_CAPTURES, GEN_QUIETS } GenMode;

static inline void add(MoveList *l, Square from, Square to)
{
    l->moves[l->count++] = move_make(from, to);
}

/// Moves to the points of a 9- or 10-bit line mask, along a rank or along a file.
static inline void add_rank_mask(MoveList *l, Square from, int rank, unsigned mask)
{
    for (; mask; mask &= mask - 1)
        add(l, from, rank * FILE_NB + __builtin_ctz(mask));
}

static inline void add_file_mask(MoveList *l, Square from, int file, unsigned mask)
{
    for (; mask; mask &= mask - 1)
        add(l, from, __builtin_ctz(mask) * FILE_NB + file);
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
        if (mode != GEN_QUIETS) {
            unsigned cr = (screen ? LINE_SCREEN(er) : LINE_HIT(er)) & b->rank_occ[them][r];
            unsigned cf = (screen ? LINE_SCREEN(ef) : LINE_HIT(ef)) & b->file_occ[them][f];
            add_rank_mask(l, s, r, cr);
            add_file_mask(l, s, f, cf);
        }
        if (mode != GEN_CAPTURES) {
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
            if (blockable && b->squares[st->via[i]] != NO_PIECE)
                continue;
            if (p == NO_PIECE ? mode != GEN_CAPTURES : mode != GEN_QUIETS && (p >> 3) == them)
                add(l, s, st->to[i]);
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

int movegen_quiets(const Board *b, MoveList *list)
{
    generate(b, list, GEN_QUIETS);
    return filter_legal(b, list);
}

void movegen_pseudo_quiets(const Board *b, MoveList *list) { generate(b, list, GEN_QUIETS); }

bool movegen_is_legal(const Board *b, Move m)
{
    return movegen_is_pseudo_legal(b, m) && movegen_legal_after(b, m);
}

/// Whether a step list from `from` reaches `to` with its blocking point empty.
static bool step_reaches(const Board *b, const StepList *st, Square to, bool blockable)
{
    for (int i = 0; i < st->n; i++)
        if (st->to[i] == to)
            return !blockable || b->squares[st->via[i]] == NO_PIECE;
    return false;
}

bool movegen_is_pseudo_legal(const Board *b, Move m)
{
    Square from = move_from(m), to = move_to(m);
    if (from >= SQUARE_NB || to >= SQUARE_NB || from == to)
        return false;
    Piece p = board_piece(b, from), target = board_piece(b, to);
    Color us = b->side;
    if (p == NO_PIECE || piece_color(p) != us || (target != NO_PIECE && piece_color(target) == us))
        return false;
    switch (piece_type(p)) {
    case CHARIOT:
    case CANNON: {
        unsigned occ, bit;
        int pos;
        if (sq_rank(from) == sq_rank(to)) {
            int r = sq_rank(from);
            pos = sq_file(from), bit = 1u << sq_file(to);
            occ = b->rank_occ[RED][r] | b->rank_occ[BLACK][r];
            LineEntry e = attacks_rank[pos][occ];
            if (target == NO_PIECE)
                return LINE_QUIET(e) & bit;
            return (piece_type(p) == CHARIOT ? LINE_HIT(e) : LINE_SCREEN(e)) & bit;
        }
        if (sq_file(from) == sq_file(to)) {
            int f = sq_file(from);
            pos = sq_rank(from), bit = 1u << sq_rank(to);
            occ = b->file_occ[RED][f] | b->file_occ[BLACK][f];
            LineEntry e = attacks_file[pos][occ];
            if (target == NO_PIECE)
                return LINE_QUIET(e) & bit;
            return (piece_type(p) == CHARIOT ? LINE_HIT(e) : LINE_SCREEN(e)) & bit;
        }
        return false;
    }
    case HORSE: return step_reaches(b, &attacks_horse[from], to, true);
    case ELEPHANT: return step_reaches(b, &attacks_elephant[from], to, true);
    case ADVISOR: return step_reaches(b, &attacks_advisor[from], to, false);
    case KING: return step_reaches(b, &attacks_king[from], to, false);
    case SOLDIER: return step_reaches(b, &attacks_soldier[us][from], to, false);
    default: return false;
    }
}

/// Counts a slider's legal moves from a 9/10-bit line mask when every destination needs the
/// full test (the slider stands on one of its general's lines or beside it).
static inline int count_checked(const Board *b, Square from, Square ksq, unsigned mask, bool rank,
                                int line)
{
    int n = 0;
    for (; mask; mask &= mask - 1) {
        int bit = __builtin_ctz(mask);
        Square to = rank ? line * FILE_NB + bit : bit * FILE_NB + line;
        n += !board_attacked_after(b, b->side, ksq, from, to);
    }
    return n;
}

static inline int count_sliders(const Board *b, Bitboard set, bool screen, Square ksq)
{
    const Color them = (Color)(b->side ^ 1);
    const int kf = sq_file(ksq), kr = sq_rank(ksq);
    int n = 0;
    while (set) {
        Square s = bb_pop(&set);
        int f = sq_file(s), r = sq_rank(s);
        LineEntry er = attacks_rank[f][b->rank_occ[RED][r] | b->rank_occ[BLACK][r]];
        LineEntry ef = attacks_file[r][b->file_occ[RED][f] | b->file_occ[BLACK][f]];
        unsigned rm =
            LINE_QUIET(er) | ((screen ? LINE_SCREEN(er) : LINE_HIT(er)) & b->rank_occ[them][r]);
        unsigned fm =
            LINE_QUIET(ef) | ((screen ? LINE_SCREEN(ef) : LINE_HIT(ef)) & b->file_occ[them][f]);
        if (attacks_exposure[ksq][s] & 1) {
            n += count_checked(b, s, ksq, rm, true, r) + count_checked(b, s, ksq, fm, false, f);
            continue;
        }
        // Off the general's lines, only the two points where this piece's rank meets the
        // general's file and its file meets the general's rank can expose the general (as a
        // new cannon screen).
        n += __builtin_popcount(rm) + __builtin_popcount(fm);
        if ((rm >> kf) & 1)
            n -= board_attacked_after(b, b->side, ksq, s, r * FILE_NB + kf);
        if ((fm >> kr) & 1)
            n -= board_attacked_after(b, b->side, ksq, s, kr * FILE_NB + f);
    }
    return n;
}

static inline int count_steps(const Board *b, Bitboard set, const StepList *table, bool blockable,
                              Square ksq, bool king)
{
    const unsigned them = (unsigned)(b->side ^ 1);
    const uint8_t *expo = attacks_exposure[ksq];
    int n = 0;
    while (set) {
        Square s = bb_pop(&set);
        const StepList *st = &table[s];
        for (int i = 0; i < st->n; i++) {
            Square to = st->to[i];
            unsigned p = b->squares[to];
            if (blockable && b->squares[st->via[i]] != NO_PIECE)
                continue;
            if (p != NO_PIECE && (p >> 3) != them)
                continue;
            if (king)
                n += !board_attacked_after(b, b->side, to, s, to);
            else if ((expo[s] & 1) | (expo[to] & 2))
                n += !board_attacked_after(b, b->side, ksq, s, to);
            else
                n++;
        }
    }
    return n;
}

int movegen_count_legal(const Board *b)
{
    if (b->in_check) {
        MoveList l;
        return movegen_legal(b, &l);
    }
    const Color us = b->side;
    const Bitboard *own = b->pieces[us];
    const Square ksq = b->king_sq[us];
    return count_sliders(b, own[CHARIOT], false, ksq) + count_sliders(b, own[CANNON], true, ksq) +
           count_steps(b, own[HORSE], attacks_horse, true, ksq, false) +
           count_steps(b, own[SOLDIER], attacks_soldier[us], false, ksq, false) +
           count_steps(b, own[ELEPHANT], attacks_elephant, true, ksq, false) +
           count_steps(b, own[ADVISOR], attacks_advisor, false, ksq, false) +
           count_steps(b, own[KING], attacks_king, false, ksq, true);
}
