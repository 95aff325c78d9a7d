// SPDX-License-Identifier: MIT
#include "eval.h"

#include <string.h>

typedef struct {
    const Weights *w;
    EvalTrace *trace;                 // NULL unless tracing
    int mg, eg;                       // Red's point of view
    unsigned soldier_files[COLOR_NB]; // bit f: a soldier of that colour stands on file f
} Acc;

/// Adds n times a feature (n > 0 favours Red) to the middlegame or endgame sum.
static inline void add_mg(Acc *a, int id, int n)
{
    a->mg += n * a->w->v[id];
    if (a->trace)
        a->trace->coef[id] = (int16_t)(a->trace->coef[id] + n);
}

static inline void add_eg(Acc *a, int id, int n)
{
    a->eg += n * a->w->v[id];
    if (a->trace)
        a->trace->coef[id] = (int16_t)(a->trace->coef[id] + n);
}

#define TERM(a, name, n)    (add_mg(a, P_##name##_mg, n), add_eg(a, P_##name##_eg, n))
#define TERM_MG(a, name, n) add_mg(a, P_##name##_mg, n)

/// Bucket k of a one-hot table whose rows run name_0_mg, name_0_eg, name_1_mg, ...
#define TERM_BUCKET(a, name, k, n)                                                                 \
    (add_mg(a, P_##name##_0_mg + 2 * (k), n), add_eg(a, P_##name##_0_eg + 2 * (k), n))

_Static_assert(P_horse_mobility_8_eg == P_horse_mobility_0_mg + 17, "horse mobility rows");
_Static_assert(P_chariot_mobility_5_eg == P_chariot_mobility_0_mg + 11, "chariot mobility rows");
_Static_assert(P_cannon_mobility_5_eg == P_cannon_mobility_0_mg + 11, "cannon mobility rows");

/// Chariot and cannon mobility buckets: 0-1, 2-3, 4-6, 7-9, 10-13, 14-17 points.
static const uint8_t SLIDER_BUCKET[18] = {0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5};

/// Points of a colour's own half of the board (Red: ranks 0-4).
static inline Bitboard half_of(Color c)
{
    const Bitboard red = ((Bitboard)1 << 45) - 1;
    return c == RED ? red : red << 45;
}

static const int PHASE_WEIGHT[PIECE_TYPE_NB] = {0, 0, 0, 0, 2, 4, 2, 0};
static const int MAT_MG[PIECE_TYPE_NB] = {-1,         -1,           P_advisor_mg, P_elephant_mg,
                                          P_horse_mg, P_chariot_mg, P_cannon_mg,  P_soldier_mg};
static const int MAT_EG[PIECE_TYPE_NB] = {-1,         -1,           P_advisor_eg, P_elephant_eg,
                                          P_horse_eg, P_chariot_eg, P_cannon_eg,  P_soldier_eg};
static const int PSQ_MG[PIECE_TYPE_NB] = {-1,
                                          -1,
                                          -1,
                                          -1,
                                          P_psq_horse_mg_a0,
                                          P_psq_chariot_mg_a0,
                                          P_psq_cannon_mg_a0,
                                          P_psq_soldier_mg_a0};
static const int PSQ_EG[PIECE_TYPE_NB] = {-1,
                                          -1,
                                          -1,
                                          -1,
                                          P_psq_horse_eg_a0,
                                          P_psq_chariot_eg_a0,
                                          P_psq_cannon_eg_a0,
                                          P_psq_soldier_eg_a0};

bool eval_param_is_mg(int id)
{
    const char *n = params_info[id].name;
    size_t len = strlen(n);
    if (strncmp(n, "psq_", 4) == 0)
        return strstr(n, "_mg_") != NULL;
    return len > 3 && strcmp(n + len - 3, "_mg") == 0;
}

static inline int rel_rank(Color c, Square s) { return c == RED ? sq_rank(s) : 9 - sq_rank(s); }

/// Index into a piece-square table: rank from the owner's side, file mirrored onto a-e.
static inline int psq_index(Color c, Square s)
{
    int f = sq_file(s);
    return rel_rank(c, s) * 5 + (f <= 4 ? f : 8 - f);
}

static inline unsigned rank_occ(const Board *b, int r)
{
    return b->rank_occ[RED][r] | b->rank_occ[BLACK][r];
}

static inline unsigned file_occ(const Board *b, int f)
{
    return b->file_occ[RED][f] | b->file_occ[BLACK][f];
}

/// Number of pieces strictly between two points on one line (their bits in occ).
static inline int between_count(unsigned occ, int p, int q)
{
    int lo = p < q ? p : q, hi = p < q ? q : p;
    unsigned mask = ((1u << hi) - 1) & ~((2u << lo) - 1);
    return __builtin_popcount(occ & mask);
}

/// A cannon on file e behind the enemy horse that stands just in front of the enemy general
/// on file e, with at most one more piece between (a check, or a pin of the horse).
static bool cannon_on_central_horse(const Board *b, Color them, Square s, Square ek, int between)
{
    if (sq_file(s) != 4 || sq_file(ek) != 4 || between < 1 || between > 2)
        return false;
    Square front = sq_rank(s) > sq_rank(ek) ? ek + FILE_NB : ek - FILE_NB;
    return board_piece(b, front) == piece_make(them, HORSE);
}

static void eval_sliders(const Board *b, Color c, int sign, Acc *a)
{
    Color them = (Color)(c ^ 1);
    Square ek = b->king_sq[them];
    Bitboard set = b->pieces[c][CHARIOT];
    while (set) {
        Square s = bb_pop(&set);
        int f = sq_file(s), r = sq_rank(s);
        LineEntry er = attacks_rank[f][rank_occ(b, r)], ef = attacks_file[r][file_occ(b, f)];
        int mob = __builtin_popcount(LINE_QUIET(er) | (LINE_HIT(er) & b->rank_occ[them][r])) +
                  __builtin_popcount(LINE_QUIET(ef) | (LINE_HIT(ef) & b->file_occ[them][f]));
        TERM(a, chariot_mob, sign * mob);
        TERM_BUCKET(a, chariot_mobility, SLIDER_BUCKET[mob], sign);
        // Open: no soldier on the file; half-open: only the opponent's.
        if (!(a->soldier_files[c] & (1u << f))) {
            if (a->soldier_files[them] & (1u << f))
                TERM(a, chariot_half_open, sign);
            else
                TERM(a, chariot_open_file, sign);
        }
        if (rel_rank(c, s) >= 8)
            TERM(a, chariot_back_ranks, sign);
        // A chariot facing the enemy general with exactly one piece between pins it.
        if (f == sq_file(ek) && between_count(file_occ(b, f), r, sq_rank(ek)) == 1)
            TERM(a, pin_chariot, -sign);
        if (r == sq_rank(ek) && between_count(rank_occ(b, r), f, sq_file(ek)) == 1)
            TERM(a, pin_chariot, -sign);
    }
    set = b->pieces[c][CANNON];
    while (set) {
        Square s = bb_pop(&set);
        int f = sq_file(s), r = sq_rank(s);
        LineEntry er = attacks_rank[f][rank_occ(b, r)], ef = attacks_file[r][file_occ(b, f)];
        int mob = __builtin_popcount(LINE_QUIET(er) | (LINE_SCREEN(er) & b->rank_occ[them][r])) +
                  __builtin_popcount(LINE_QUIET(ef) | (LINE_SCREEN(ef) & b->file_occ[them][f]));
        TERM(a, cannon_mob, sign * mob);
        TERM_BUCKET(a, cannon_mobility, SLIDER_BUCKET[mob < 17 ? mob : 17], sign);
        if (rel_rank(c, s) == 9)
            TERM(a, cannon_bottom, sign);
        int between = -1;
        if (f == sq_file(ek))
            between = between_count(file_occ(b, f), r, sq_rank(ek));
        else if (r == sq_rank(ek))
            between = between_count(rank_occ(b, r), f, sq_file(ek));
        if (between == 0)
            TERM(a, cannon_hollow, sign);
        else if (between == 1)
            TERM_MG(a, cannon_screen_king, sign);
        else if (between == 2)
            TERM_MG(a, pin_cannon, -sign);
        if (cannon_on_central_horse(b, them, s, ek, between))
            TERM(a, cannon_central_horse, sign);
    }
}

static void eval_horses(const Board *b, Color c, int sign, Acc *a)
{
    Bitboard set = b->pieces[c][HORSE];
    Bitboard own_soldiers = b->pieces[c][SOLDIER];
    while (set) {
        Square s = bb_pop(&set);
        const StepList *st = &attacks_horse[s];
        int mob = 0;
        for (int i = 0; i < st->n; i++) {
            Piece p = board_piece(b, st->to[i]);
            mob += board_piece(b, st->via[i]) == NO_PIECE && (p == NO_PIECE || piece_color(p) != c);
        }
        TERM(a, horse_mob, sign * mob);
        TERM_BUCKET(a, horse_mobility, mob, sign);
        if (mob <= 1)
            TERM(a, horse_trapped, sign);
        int f = sq_file(s);
        if (f == 0 || f == FILE_NB - 1)
            TERM(a, horse_rim, sign);
        if (rel_rank(c, s) >= 5) {
            Square behind = c == RED ? s - FILE_NB : s + FILE_NB;
            bool guarded = bb_test(own_soldiers, behind) ||
                           (f > 0 && bb_test(own_soldiers, s - 1)) ||
                           (f < FILE_NB - 1 && bb_test(own_soldiers, s + 1));
            if (guarded)
                TERM(a, horse_outpost, sign);
        }
    }
}

static void eval_soldiers(const Board *b, Color c, int sign, Acc *a)
{
    Bitboard set = b->pieces[c][SOLDIER] & half_of((Color)(c ^ 1));
    Bitboard own = set;
    int crossed = bb_count(set);
    while (set) {
        Square s = bb_pop(&set);
        int rr = rel_rank(c, s), f = sq_file(s);
        if (f < FILE_NB - 1 && bb_test(own, s + 1)) {
            TERM(a, soldier_connected, sign);
            if (rr >= 7)
                TERM(a, soldier_connected_deep, sign);
        }
        if (rr >= 7 && f >= 3 && f <= 5)
            TERM(a, soldier_palace, sign);
    }
    // Crossed soldiers weigh more against a palace short of advisors.
    int missing = 2 - bb_count(b->pieces[c ^ 1][ADVISOR]);
    if (crossed && missing)
        TERM(a, soldier_vs_advisor, sign * crossed * missing);
}

/// Files c-g of the owner's ranks 0-3: the palace and the points in front of it.
static Bitboard palace_zone(Color c)
{
    static const Bitboard row = 0x7c; // files c-g
    Bitboard z = 0;
    for (int r = 0; r < 4; r++)
        z |= row << ((c == RED ? r : 9 - r) * FILE_NB);
    return z;
}

static void eval_king_safety(const Board *b, Color c, int sign, Acc *a)
{
    Color them = (Color)(c ^ 1);
    int adv_missing = 2 - bb_count(b->pieces[c][ADVISOR]);
    int ele_missing = 2 - bb_count(b->pieces[c][ELEPHANT]);
    TERM_MG(a, advisor_missing, sign * adv_missing);
    TERM_MG(a, elephant_missing, sign * ele_missing);
    if (!adv_missing && !ele_missing)
        TERM(a, guard_full, sign);
    // Each missing defender counts once per enemy chariot, horse or cannon across the river.
    const Bitboard heavy =
        b->pieces[them][CHARIOT] | b->pieces[them][HORSE] | b->pieces[them][CANNON];
    int across = adv_missing || ele_missing ? bb_count(heavy & half_of(c)) : 0;
    if (across) {
        TERM(a, advisor_missing_attack, sign * adv_missing * across);
        TERM(a, elephant_missing_attack, sign * ele_missing * across);
    }
    Square k = b->king_sq[c];
    if (sq_file(k) != 4 || rel_rank(c, k) != 0)
        TERM(a, king_off_home, sign);
    // Enemy pieces in the zone around the palace: files c-g, the owner's ranks 0-3.
    static const int ids[PIECE_TYPE_NB] = {-1,
                                           -1,
                                           -1,
                                           -1,
                                           P_attacker_horse_mg,
                                           P_attacker_chariot_mg,
                                           P_attacker_cannon_mg,
                                           P_attacker_soldier_mg};
    const Bitboard zone = palace_zone(c);
    for (PieceType t = HORSE; t <= SOLDIER; t++) {
        int n = bb_count(b->pieces[them][t] & zone);
        if (n)
            add_mg(a, ids[t], sign * n);
        if (n && t == SOLDIER)
            add_eg(a, P_attacker_soldier_eg, sign * n);
    }
    // Attackers together are worth more than alone: one count per pair of heavy attackers.
    int heavy_in_zone = bb_count(heavy & zone);
    if (heavy_in_zone >= 2)
        TERM_MG(a, attacker_pairs, sign * heavy_in_zone * (heavy_in_zone - 1) / 2);
}

static void eval_material_psq(const Board *b, Color c, int sign, Acc *a, int *phase)
{
    for (PieceType t = ADVISOR; t <= SOLDIER; t++) {
        Bitboard set = b->pieces[c][t];
        int n = bb_count(set);
        if (!n)
            continue;
        *phase += n * PHASE_WEIGHT[t];
        add_mg(a, MAT_MG[t], sign * n);
        add_eg(a, MAT_EG[t], sign * n);
        if (PSQ_MG[t] < 0)
            continue;
        while (set) {
            int idx = psq_index(c, bb_pop(&set));
            add_mg(a, PSQ_MG[t] + idx, sign);
            add_eg(a, PSQ_EG[t] + idx, sign);
        }
    }
}

static inline int evaluate(const Board *b, const Weights *w, EvalTrace *trace)
{
    Acc a = {w, trace, 0, 0, {0, 0}};
    for (Color c = RED; c < COLOR_NB; c++)
        for (Bitboard set = b->pieces[c][SOLDIER]; set;)
            a.soldier_files[c] |= 1u << sq_file(bb_pop(&set));
    int phase = 0;
    for (Color c = RED; c < COLOR_NB; c++) {
        int sign = c == RED ? 1 : -1;
        eval_material_psq(b, c, sign, &a, &phase);
        eval_sliders(b, c, sign, &a);
        eval_horses(b, c, sign, &a);
        eval_soldiers(b, c, sign, &a);
        eval_king_safety(b, c, sign, &a);
    }
    TERM(&a, tempo, b->side == RED ? 1 : -1);
    if (phase > EVAL_PHASE_MAX)
        phase = EVAL_PHASE_MAX;
    if (trace)
        trace->phase = phase;
    int red = (a.mg * phase + a.eg * (EVAL_PHASE_MAX - phase)) / EVAL_PHASE_MAX;
    return b->side == RED ? red : -red;
}

int eval_evaluate(const Board *b, const Weights *w) { return evaluate(b, w, NULL); }

int eval_trace(const Board *b, const Weights *w, EvalTrace *trace)
{
    memset(trace, 0, sizeof *trace);
    return evaluate(b, w, trace);
}
