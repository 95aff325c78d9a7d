// SPDX-License-Identifier: MIT
#include "movegen.h"

#include <string.h>

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

// ---------------------------------------------------------------------------------------
// Quiet checks, generated from the enemy general's lines, jumps and steps instead of by
// testing every quiet move.

enum { DISC_ANY = 1, DISC_OFF_RANK = 2, DISC_OFF_FILE = 4 };

/// What a quiet move needs in order to check the enemy general on ek (the side not to move
/// is not in check). Rank masks are indexed by file, file masks by rank.
typedef struct {
    Square ek;
    int kf, kr;
    unsigned rocc, focc;         // occupancy of ek's rank and file
    unsigned vis_r, vis_f;       // empty points seeing ek directly: chariot (general: file)
    unsigned cannon_r, cannon_f; // empty points with exactly one piece between them and ek
    unsigned gap_r, gap_f;       // empty points between ek and our cannon with no screen
    Bitboard horse, soldier;     // points a horse (leg free) or soldier of ours checks from
    uint8_t disc[SQUARE_NB];     // DISC_*: leaving the point uncovers a check (off a line)
} CheckInfo;

/// Points of a line strictly between lo and hi (lo may be -1, hi the line's length).
static inline unsigned line_span(int lo, int hi)
{
    return ((1u << hi) - 1) & ~((1u << (lo + 1)) - 1);
}

/// The first three occupied points from p towards dir (+1 or -1) on a line of n points; the
/// point past the line's end (n or -1) where there are fewer.
static inline void line_hits(unsigned occ, int p, int dir, int n, int hit[3])
{
    unsigned m = dir > 0 ? occ & ~((2u << p) - 1) : occ & ((1u << p) - 1);
    for (int i = 0; i < 3; i++) {
        if (!m) {
            hit[i] = dir > 0 ? n : -1;
            continue;
        }
        hit[i] = dir > 0 ? __builtin_ctz(m) : 31 - __builtin_clz(m);
        m &= ~(1u << hit[i]);
    }
}

/// Points strictly between line points a and b, whichever way round.
static inline unsigned line_between(int a, int b)
{
    return a < b ? line_span(a, b) : line_span(b, a);
}

/// A cannon checks from the empty points with exactly one piece between them and the
/// general on p: past the first piece each way, up to the second.
static unsigned line_cannon_points(unsigned occ, int p, int n)
{
    unsigned out = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
        int hit[3];
        line_hits(occ, p, dir, n, hit);
        if (hit[0] >= 0 && hit[0] < n)
            out |= line_between(hit[0], hit[1]);
    }
    return out;
}

/// Whether p is a piece (not NO_PIECE, whose colour bits read as Red) of colour us.
static inline bool is_own(Piece p, Color us) { return p != NO_PIECE && piece_color(p) == us; }

/// One way along ek's rank or file. A lone piece of ours before our chariot (on the file,
/// also our general) uncovers it by leaving the line; so does either of two pieces of ours
/// before our cannon (the other stays as its screen); a piece of ours arriving between ek and
/// our cannon with nothing between becomes its screen.
static void check_info_ray(const Board *b, CheckInfo *ci, bool rank, int dir)
{
    const Color us = b->side;
    const int p = rank ? ci->kf : ci->kr, n = rank ? FILE_NB : RANK_NB;
    int hit[3];
    line_hits(rank ? ci->rocc : ci->focc, p, dir, n, hit);
    Square sq[3];
    Piece pc[3];
    for (int i = 0; i < 3; i++) {
        bool on = hit[i] >= 0 && hit[i] < n;
        sq[i] = !on ? SQ_NONE : rank ? sq_make(hit[i], ci->kr) : sq_make(ci->kf, hit[i]);
        pc[i] = on ? board_piece(b, sq[i]) : NO_PIECE;
    }
    unsigned vis = line_between(p, hit[0]);
    unsigned cannon = sq[0] != SQ_NONE ? line_between(hit[0], hit[1]) : 0;
    unsigned gap = pc[0] == piece_make(us, CANNON) ? vis : 0;
    const uint8_t off = rank ? DISC_OFF_RANK : DISC_OFF_FILE;
    if (is_own(pc[0], us) &&
        (pc[1] == piece_make(us, CHARIOT) || (!rank && pc[1] == piece_make(us, KING))))
        ci->disc[sq[0]] |= off;
    if (pc[2] == piece_make(us, CANNON))
        for (int i = 0; i < 2; i++)
            if (is_own(pc[i], us))
                ci->disc[sq[i]] |= off;
    if (rank)
        ci->vis_r |= vis, ci->cannon_r |= cannon, ci->gap_r |= gap;
    else
        ci->vis_f |= vis, ci->cannon_f |= cannon, ci->gap_f |= gap;
}

/// Fills ci for the general of the side not to move: its four rays, horse jumps and soldier
/// steps.
static void check_info_init(const Board *b, CheckInfo *ci)
{
    const Color us = b->side, them = (Color)(us ^ 1);
    memset(ci, 0, sizeof *ci);
    ci->ek = b->king_sq[them];
    ci->kf = sq_file(ci->ek), ci->kr = sq_rank(ci->ek);
    board_lines_after(b, ci->ek, SQ_NONE, SQ_NONE, &ci->rocc, &ci->focc);
    for (int dir = -1; dir <= 1; dir += 2) {
        check_info_ray(b, ci, true, dir);
        check_info_ray(b, ci, false, dir);
    }
    // Horses: a horse of ours checks from a jump whose leg (beside the horse, towards ek) is
    // empty; a piece of ours on the leg of our horse uncovers its check by leaving.
    const StepList *h = &attacks_horse_from[ci->ek];
    for (int i = 0; i < h->n; i++) {
        Piece leg = board_piece(b, h->via[i]);
        if (leg == NO_PIECE)
            ci->horse |= bb_square(h->to[i]);
        else if (is_own(leg, us) && board_piece(b, h->to[i]) == piece_make(us, HORSE))
            ci->disc[h->via[i]] |= DISC_ANY;
    }
    // Soldiers: the point in front of ek (seen from our side) and the two beside it, the
    // three board_attacked_after looks at.
    Square front = them == RED ? ci->ek + FILE_NB : ci->ek - FILE_NB;
    if (front >= 0 && front < SQUARE_NB)
        ci->soldier |= bb_square(front);
    if (ci->kf > 0)
        ci->soldier |= bb_square(ci->ek - 1);
    if (ci->kf < FILE_NB - 1)
        ci->soldier |= bb_square(ci->ek + 1);
}

/// Whether the quiet move s-t of a pt gives check: it uncovers one (leaves a horse leg, or
/// a line other than along it), or it lands on a target point of ek's rank (tr) or file (tf),
/// or on a horse or soldier checking point.
static inline bool quiet_gives_check(const CheckInfo *ci, PieceType pt, Square s, Square t,
                                     unsigned tr, unsigned tf)
{
    const uint8_t d = ci->disc[s];
    const int f = sq_file(t), r = sq_rank(t);
    if ((d & DISC_ANY) || ((d & DISC_OFF_RANK) && r != ci->kr) ||
        ((d & DISC_OFF_FILE) && f != ci->kf))
        return true;
    if ((r == ci->kr && ((tr >> f) & 1)) || (f == ci->kf && ((tf >> r) & 1)))
        return true;
    return (pt == HORSE && bb_test(ci->horse, t)) || (pt == SOLDIER && bb_test(ci->soldier, t));
}

/// The points of ek's rank (tr) and file (tf) from which a pt that started on s checks:
/// screen gaps for every piece; direct lines for chariots, cannons and (on the file) the
/// general. A cannon moving along one of ek's lines is recounted without itself (it may be
/// the cannon of the gap, or the first piece of its line).
static inline void quiet_check_targets(const CheckInfo *ci, PieceType pt, Square s, unsigned *tr,
                                       unsigned *tf)
{
    *tr = ci->gap_r, *tf = ci->gap_f;
    if (pt == CHARIOT) {
        *tr |= ci->vis_r, *tf |= ci->vis_f;
    } else if (pt == KING) {
        *tf |= ci->vis_f;
    } else if (pt == CANNON) {
        *tr = sq_rank(s) == ci->kr
                  ? line_cannon_points(ci->rocc & ~(1u << sq_file(s)), ci->kf, FILE_NB)
                  : *tr | ci->cannon_r;
        *tf = sq_file(s) == ci->kf
                  ? line_cannon_points(ci->focc & ~(1u << sq_rank(s)), ci->kr, RANK_NB)
                  : *tf | ci->cannon_f;
    }
}

/// Chariots and cannons: off ek's lines, only the two points where the slider's lines cross
/// ek's can check; on one of ek's lines, its moves along that line. A slider whose leaving
/// uncovers a check tests every move.
static void quiet_checks_sliders(const Board *b, const CheckInfo *ci, MoveList *l, Bitboard set,
                                 PieceType pt)
{
    while (set) {
        Square s = bb_pop(&set);
        int f = sq_file(s), r = sq_rank(s);
        unsigned mr = LINE_QUIET(attacks_rank[f][b->rank_occ[RED][r] | b->rank_occ[BLACK][r]]);
        unsigned mf = LINE_QUIET(attacks_file[r][b->file_occ[RED][f] | b->file_occ[BLACK][f]]);
        unsigned tr, tf;
        quiet_check_targets(ci, pt, s, &tr, &tf);
        if (ci->disc[s]) {
            for (; mr; mr &= mr - 1)
                if (quiet_gives_check(ci, pt, s, sq_make(__builtin_ctz(mr), r), tr, tf))
                    add(l, s, sq_make(__builtin_ctz(mr), r));
            for (; mf; mf &= mf - 1)
                if (quiet_gives_check(ci, pt, s, sq_make(f, __builtin_ctz(mf)), tr, tf))
                    add(l, s, sq_make(f, __builtin_ctz(mf)));
            continue;
        }
        if (r == ci->kr)
            add_rank_mask(l, s, r, mr & tr);
        else if (((mr >> ci->kf) & 1) && ((tf >> r) & 1))
            add(l, s, sq_make(ci->kf, r));
        if (f == ci->kf)
            add_file_mask(l, s, f, mf & tf);
        else if (((mf >> ci->kr) & 1) && ((tr >> f) & 1))
            add(l, s, sq_make(f, ci->kr));
    }
}

/// Stepping pieces: every quiet step is tested. With all = false only the pieces whose
/// leaving uncovers a check are looked at (advisors and elephants check no other way when
/// there is no screen gap to fill).
static void quiet_checks_steps(const Board *b, const CheckInfo *ci, MoveList *l, Bitboard set,
                               const StepList *table, bool blockable, PieceType pt, bool all)
{
    while (set) {
        Square s = bb_pop(&set);
        if (!all && !ci->disc[s])
            continue;
        unsigned tr, tf;
        quiet_check_targets(ci, pt, s, &tr, &tf);
        const StepList *st = &table[s];
        for (int i = 0; i < st->n; i++) {
            Square t = st->to[i];
            if (b->squares[t] != NO_PIECE || (blockable && b->squares[st->via[i]] != NO_PIECE))
                continue;
            if (quiet_gives_check(ci, pt, s, t, tr, tf))
                add(l, s, t);
        }
    }
}

void movegen_quiet_checks(const Board *b, MoveList *list)
{
    const Color us = b->side;
    const Bitboard *own = b->pieces[us];
    CheckInfo ci;
    check_info_init(b, &ci);
    const bool gaps = (ci.gap_r | ci.gap_f) != 0;
    list->count = 0;
    quiet_checks_sliders(b, &ci, list, own[CHARIOT], CHARIOT);
    quiet_checks_sliders(b, &ci, list, own[CANNON], CANNON);
    quiet_checks_steps(b, &ci, list, own[HORSE], attacks_horse, true, HORSE, true);
    quiet_checks_steps(b, &ci, list, own[SOLDIER], attacks_soldier[us], false, SOLDIER, true);
    quiet_checks_steps(b, &ci, list, own[ELEPHANT], attacks_elephant, true, ELEPHANT, gaps);
    quiet_checks_steps(b, &ci, list, own[ADVISOR], attacks_advisor, false, ADVISOR, gaps);
    quiet_checks_steps(b, &ci, list, own[KING], attacks_king, false, KING, true);
}
