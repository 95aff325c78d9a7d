// SPDX-License-Identifier: MIT
#include "rules.h"

#include <assert.h>
#include <string.h>

#include "movegen.h"

static const char *const SET_NAMES[RULES_SET_NB] = {"seed", "asian"};

RulesConfig rules_config_default(RuleSet set)
{
    return (RulesConfig){set, 60, set == RULES_SEED ? 300 : 0};
}

const char *rules_set_name(RuleSet set)
{
    return (unsigned)set < RULES_SET_NB ? SET_NAMES[set] : "unknown";
}

bool rules_set_parse(const char *name, RuleSet *out)
{
    for (int i = 0; i < RULES_SET_NB; i++) {
        if (name && strcmp(name, SET_NAMES[i]) == 0) {
            *out = (RuleSet)i;
            return true;
        }
    }
    return false;
}

const char *rules_end_name(EndReason reason)
{
    static const char *const text[END_REASON_NB] = {
        [END_NONE] = "none",
        [END_CHECKMATE] = "checkmate",
        [END_STALEMATE] = "stalemate",
        [END_PERPETUAL_CHECK] = "perpetual check",
        [END_COUNTING] = "counting",
        [END_REPETITION] = "repetition",
        [END_MOVE_RULE] = "60-move rule",
        [END_INSUFFICIENT] = "insufficient material",
        [END_PLY_LIMIT] = "ply limit",
        [END_PERPETUAL_CHASE] = "perpetual chase",
    };
    return (unsigned)reason < END_REASON_NB ? text[reason] : "unknown";
}

static Color mover_of(const Board *b, int i)
{
    // The side that made history move i: moves alternate and the last was made by !side.
    return (Color)((b->side ^ 1 ^ ((b->hist_len - 1 - i) & 1)) & 1);
}

bool rules_insufficient_material(const Board *b)
{
    for (Color c = RED; c < COLOR_NB; c++)
        if (b->pieces[c][CHARIOT] | b->pieces[c][HORSE] | b->pieces[c][CANNON] |
            b->pieces[c][SOLDIER])
            return false;
    return true;
}

/// Rule 6's table: the smallest count whose requirement the material meets; 0 = no row.
static int counting_row(int chariots, int horses, int cannons, int soldiers)
{
    if (chariots >= 2)
        return 9;
    if (chariots >= 1 || soldiers >= 5)
        return 18;
    if (soldiers >= 4 || horses >= 2 || cannons >= 2)
        return 27;
    if (soldiers >= 3)
        return 36;
    if (soldiers >= 2)
        return 45;
    return 0;
}

int rules_counting_limit(const Board *b, Color strong, int counting_default)
{
    const Bitboard *p = b->pieces[strong];
    int row = counting_row(bb_count(p[CHARIOT]), bb_count(p[HORSE]), bb_count(p[CANNON]),
                           bb_count(p[SOLDIER]));
    return row ? row : counting_default;
}

static bool bare_general(const Board *b, Color c)
{
    return b->pieces[c][NO_PIECE_TYPE] == b->pieces[c][KING];
}

/// Rule 6: whether the stronger side has used up its moves against a bare general. Walks
/// back to where the count started: the capture that left the general bare, or the last
/// change of the stronger side's material that changed its table row.
static bool counting_expired(const Board *b, int counting_default)
{
    Color weak;
    if (bare_general(b, RED) == bare_general(b, BLACK))
        return false;
    weak = bare_general(b, RED) ? RED : BLACK;
    Color strong = (Color)(weak ^ 1);
    int limit = rules_counting_limit(b, strong, counting_default);
    const Bitboard *p = b->pieces[strong];
    int n[PIECE_TYPE_NB] = {0};
    for (PieceType t = KING; t < PIECE_TYPE_NB; t++)
        n[t] = bb_count(p[t]);
    int row = counting_row(n[CHARIOT], n[HORSE], n[CANNON], n[SOLDIER]);
    int start = 0;
    for (int i = b->hist_len - 1; i >= 0; i--) {
        Piece cap = (Piece)b->hist[i].captured;
        if (cap == NO_PIECE)
            continue;
        if (piece_color(cap) == weak) {
            start = i + 1;
            break;
        }
        n[piece_type(cap)]++;
        if (counting_row(n[CHARIOT], n[HORSE], n[CANNON], n[SOLDIER]) != row) {
            start = i + 1;
            break;
        }
    }
    int strong_moves = 0;
    for (int i = start; i < b->hist_len; i++)
        strong_moves += mover_of(b, i) == strong;
    return strong_moves >= limit;
}

/// First history index from which the current position can repeat: nothing before the
/// last capture (material differs) or before a null move (not a real game line).
static int repetition_floor(const Board *b)
{
    int floor = b->hist_len - b->halfmove;
    if (floor < 0)
        floor = 0;
    for (int i = b->hist_len - 1; i >= floor; i--)
        if (b->hist[i].move == MOVE_NONE)
            return i + 1;
    return floor;
}

/// Whether every move side c made in history [from, hist_len) gave check (and it made one).
static bool all_checks(const Board *b, int from, Color c)
{
    int made = 0;
    for (int i = from; i < b->hist_len; i++) {
        if (mover_of(b, i) != c)
            continue;
        made++;
        if (!board_move_gave_check(b, i))
            return false;
    }
    return made > 0;
}

/// Counts earlier occurrences of the current position; *first gets the earliest index.
static int repetitions(const Board *b, int *first)
{
    int count = 0, floor = repetition_floor(b);
    for (int i = b->hist_len - 4; i >= floor; i -= 2) {
        if (b->hist[i].key == b->key) {
            count++;
            *first = i;
        }
    }
    return count;
}

/// Whether any move in history [from, hist_len) gave check.
static bool any_check(const Board *b, int from)
{
    for (int i = from; i < b->hist_len; i++)
        if (board_move_gave_check(b, i))
            return true;
    return false;
}

// ---------------------------------------------------------------------------------------
// Rule C: perpetual chase. It runs only when a repetition is found, on a small board of its
// own that replays the cycle with each piece's id (C2); the game's Board is never touched.

typedef struct {
    uint8_t sq[SQUARE_NB]; // Piece on each point
    uint8_t id[SQUARE_NB]; // id of the piece there, given at the cycle's first position
    Square king[COLOR_NB];
} ChaseBoard;

static void cb_move(ChaseBoard *c, Square from, Square to)
{
    c->sq[to] = c->sq[from];
    c->id[to] = c->id[from];
    c->sq[from] = NO_PIECE;
    if (piece_type((Piece)c->sq[to]) == KING)
        c->king[piece_color((Piece)c->sq[to])] = to;
}

/// The step from a towards b along their rank or file; 0 if they share neither.
static int line_step(Square a, Square b)
{
    if (a == b)
        return 0;
    if (sq_rank(a) == sq_rank(b))
        return b > a ? 1 : -1;
    if (sq_file(a) == sq_file(b))
        return b > a ? FILE_NB : -FILE_NB;
    return 0;
}

/// Pieces strictly between a and b on their rank or file; -1 if they share neither.
static int cb_between(const ChaseBoard *c, Square a, Square b)
{
    int step = line_step(a, b), n = 0;
    if (!step)
        return -1;
    for (Square s = a + step; s != b; s += step)
        n += c->sq[s] != NO_PIECE;
    return n;
}

static bool cb_steps_to(const ChaseBoard *c, const StepList *l, Square to, bool blockable)
{
    for (int i = 0; i < l->n; i++)
        if (l->to[i] == to && (!blockable || c->sq[l->via[i]] == NO_PIECE))
            return true;
    return false;
}

/// RULES.md's "attacks": whether the piece on from could take on to by its capture geometry.
static bool cb_attacks(const ChaseBoard *c, Square from, Square to)
{
    Piece p = (Piece)c->sq[from];
    switch (piece_type(p)) {
    case KING: return cb_steps_to(c, &attacks_king[from], to, false);
    case ADVISOR: return cb_steps_to(c, &attacks_advisor[from], to, false);
    case ELEPHANT: return cb_steps_to(c, &attacks_elephant[from], to, true);
    case HORSE: return cb_steps_to(c, &attacks_horse[from], to, true);
    case CHARIOT: return cb_between(c, from, to) == 0;
    case CANNON: return cb_between(c, from, to) == 1;
    case SOLDIER: return cb_steps_to(c, &attacks_soldier[piece_color(p)][from], to, false);
    default: return false;
    }
}

/// Whether colour us's general is attacked or faces the other general.
static bool cb_exposed(const ChaseBoard *c, Color us)
{
    Square k = c->king[us];
    if (cb_between(c, k, c->king[us ^ 1]) == 0)
        return true;
    for (Square s = 0; s < SQUARE_NB; s++)
        if (c->sq[s] != NO_PIECE && piece_color((Piece)c->sq[s]) != us && cb_attacks(c, s, k))
            return true;
    return false;
}

/// Whether the piece on from, attacking to, may legally take there: afterwards its general is
/// neither attacked nor facing the other. The board is left as it was.
static bool cb_legal_capture(ChaseBoard *c, Square from, Square to)
{
    Color us = piece_color((Piece)c->sq[from]);
    uint8_t taken = c->sq[to], id = c->id[to];
    cb_move(c, from, to);
    bool legal = !cb_exposed(c, us);
    cb_move(c, to, from);
    c->sq[to] = taken;
    c->id[to] = id;
    return legal;
}

/// C5 d: marks the blockers of colour a's general (the only piece between it and an enemy
/// chariot or general on a line, either of the two between it and an enemy cannon, the piece
/// on the leg of an enemy horse aimed at it) and the enemy pieces that pin one of a's so.
static void cb_pins(const ChaseBoard *c, Color a, bool blocker[SQUARE_NB], bool pinner[SQUARE_NB])
{
    Square k = c->king[a];
    memset(blocker, 0, SQUARE_NB * sizeof *blocker);
    memset(pinner, 0, SQUARE_NB * sizeof *pinner);
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = (Piece)c->sq[s];
        if (p == NO_PIECE || piece_color(p) == a)
            continue;
        PieceType t = piece_type(p);
        int need = t == CANNON ? 2 : t == CHARIOT || t == KING ? 1 : 0;
        if (!need || cb_between(c, s, k) != need)
            continue;
        for (Square q = s + line_step(s, k); q != k; q += line_step(s, k)) {
            if (c->sq[q] == NO_PIECE)
                continue;
            blocker[q] = true;
            pinner[s] |= piece_color((Piece)c->sq[q]) == a;
        }
    }
    const StepList *h = &attacks_horse_from[k];
    for (int i = 0; i < h->n; i++) {
        Piece p = (Piece)c->sq[h->to[i]], leg = (Piece)c->sq[h->via[i]];
        if (p != piece_make((Color)(a ^ 1), HORSE) || leg == NO_PIECE)
            continue;
        blocker[h->via[i]] = true;
        pinner[h->to[i]] |= piece_color(leg) == a;
    }
}

/// C5 e, protection: whether, once the piece on x has taken the one on y, a piece of y's
/// colour can legally take back. The board is left as it was.
static bool cb_recapture(ChaseBoard *c, Square x, Square y)
{
    Color v = piece_color((Piece)c->sq[y]);
    uint8_t taken = c->sq[y], id = c->id[y];
    cb_move(c, x, y);
    bool found = false;
    for (Square z = 0; z < SQUARE_NB && !found; z++)
        found = c->sq[z] != NO_PIECE && piece_color((Piece)c->sq[z]) == v && cb_attacks(c, z, y) &&
                cb_legal_capture(c, z, y);
    cb_move(c, y, x);
    c->sq[y] = taken;
    c->id[y] = id;
    return found;
}

/// C5 e: whether a legal attack of x on y is a chase: always against a stronger piece (horse
/// or cannon on a chariot; advisor or elephant on a chariot, horse or cannon), otherwise only
/// if y is unprotected and not offered in exchange (of the same type, it cannot take x).
static bool cb_attack_chases(ChaseBoard *c, Square x, Square y)
{
    PieceType tx = piece_type((Piece)c->sq[x]), ty = piece_type((Piece)c->sq[y]);
    if ((tx == HORSE || tx == CANNON) && ty == CHARIOT)
        return true;
    if ((tx == ADVISOR || tx == ELEPHANT) && (ty == CHARIOT || ty == HORSE || ty == CANNON))
        return true;
    if (tx == ty && cb_attacks(c, y, x) && cb_legal_capture(c, y, x))
        return false;
    return !cb_recapture(c, x, y);
}

/// C5 b: generals and soldiers on their own side of the river are never chased.
static bool cb_chaseable(Piece p, Square s)
{
    if (piece_type(p) == SOLDIER)
        return piece_color(p) == RED ? sq_rank(s) >= 5 : sq_rank(s) <= 4;
    return piece_type(p) != KING;
}

/// C5: the ids of the opponent's pieces that colour a chases here, as if a were to move.
static uint16_t cb_chase_set(ChaseBoard *c, Color a)
{
    bool blocker[SQUARE_NB], pinner[SQUARE_NB];
    cb_pins(c, a, blocker, pinner);
    uint16_t set = 0;
    for (Square x = 0; x < SQUARE_NB; x++) {
        Piece px = (Piece)c->sq[x];
        if (px == NO_PIECE || piece_color(px) != a || piece_type(px) == KING ||
            piece_type(px) == SOLDIER) // C5 a
            continue;
        for (Square y = 0; y < SQUARE_NB; y++) {
            Piece py = (Piece)c->sq[y];
            if (py == NO_PIECE || piece_color(py) == a || (set >> c->id[y] & 1) ||
                !cb_chaseable(py, y) || (blocker[x] && !pinner[y]))
                continue;
            if (cb_attacks(c, x, y) && cb_legal_capture(c, x, y) && cb_attack_chases(c, x, y))
                set |= (uint16_t)(1u << c->id[y]);
        }
    }
    return set;
}

/// C2, C5-C7: the side that chases perpetually in the cycle of history moves [first,
/// hist_len), or COLOR_NB when neither or both do. The cycle holds no capture (C2).
static Color perpetual_chaser(const Board *b, int first)
{
    ChaseBoard c;
    memcpy(c.sq, b->squares, sizeof c.sq);
    c.king[RED] = b->king_sq[RED];
    c.king[BLACK] = b->king_sq[BLACK];
    for (int i = b->hist_len - 1; i >= first; i--) {
        assert(b->hist[i].captured == NO_PIECE && b->hist[i].move != MOVE_NONE);
        cb_move(&c, move_to(b->hist[i].move), move_from(b->hist[i].move));
    }
    uint8_t next[COLOR_NB] = {0, 0};
    for (Square s = 0; s < SQUARE_NB; s++)
        c.id[s] = c.sq[s] == NO_PIECE ? 0 : next[piece_color((Piece)c.sq[s])]++;

    uint16_t chase[COLOR_NB] = {0xffff, 0xffff};
    for (int i = first; i < b->hist_len && (chase[RED] | chase[BLACK]); i++) {
        Square from = move_from(b->hist[i].move), to = move_to(b->hist[i].move);
        Color a = piece_color((Piece)b->hist[i].piece);
        if (!chase[a]) {
            cb_move(&c, from, to);
            continue;
        }
        uint16_t before = cb_chase_set(&c, a);
        cb_move(&c, from, to);
        chase[a] &= cb_chase_set(&c, a) & (uint16_t)~before; // C6: the move's new chases
    }
    if (!chase[RED] == !chase[BLACK])
        return COLOR_NB;
    return chase[RED] ? RED : BLACK;
}

/// Rule C3-C7 on the repetition whose cycle is history [first, hist_len): the side that
/// loses it and why, or COLOR_NB for a draw. chase false stops after the checks (C3-C4).
static Color repetition_loser(const Board *b, int first, bool chase, EndReason *why)
{
    bool red = all_checks(b, first, RED), black = all_checks(b, first, BLACK);
    *why = END_PERPETUAL_CHECK;
    if (red != black)
        return red ? RED : BLACK;
    *why = END_REPETITION;
    if (red || !chase || any_check(b, first))
        return COLOR_NB;
    Color chaser = perpetual_chaser(b, first);
    if (chaser != COLOR_NB)
        *why = END_PERPETUAL_CHASE;
    return chaser;
}

/// Rule 4 (seed): the side that just moved gave the same check, identified by piece type
/// and destination, for the fourth time within one unbroken run of checking moves.
static bool perpetual_check_seed(const Board *b)
{
    int last = b->hist_len - 1;
    if (last < 0 || !b->in_check || b->hist[last].move == MOVE_NONE)
        return false;
    PieceType type = piece_type((Piece)b->hist[last].piece);
    Square to = move_to(b->hist[last].move);
    int same = 0;
    for (int i = last; i >= 0 && board_move_gave_check(b, i); i -= 2) {
        if (b->hist[i].move == MOVE_NONE)
            break;
        if (piece_type((Piece)b->hist[i].piece) == type && move_to(b->hist[i].move) == to)
            same++;
    }
    return same >= 4;
}

/// Asian 60-move rule: plies since the last capture, not counting a side's checking moves
/// after its tenth in that span.
static int move_rule_plies(const Board *b)
{
    int checks[COLOR_NB] = {0, 0};
    int from = b->hist_len - b->halfmove;
    for (int i = from < 0 ? 0 : from; i < b->hist_len; i++)
        if (board_move_gave_check(b, i))
            checks[mover_of(b, i)]++;
    int plies = b->halfmove;
    for (Color c = RED; c < COLOR_NB; c++)
        if (checks[c] > 10)
            plies -= checks[c] - 10;
    return plies;
}

static GameEnd end_win(Color winner, EndReason reason)
{
    return (GameEnd){winner == RED ? OUTCOME_RED_WINS : OUTCOME_BLACK_WINS, reason};
}

static GameEnd end_draw(EndReason reason) { return (GameEnd){OUTCOME_DRAW, reason}; }

GameEnd rules_game_end(const Board *b, const RulesConfig *cfg)
{
    MoveList list;
    Color stm = b->side, moved = (Color)(stm ^ 1);
    if (movegen_legal(b, &list) == 0) // rules 1-3
        return end_win(moved, b->in_check ? END_CHECKMATE : END_STALEMATE);

    int first = -1;
    int reps = repetitions(b, &first);
    if (cfg->set == RULES_SEED) {
        if (perpetual_check_seed(b))
            return end_win(stm, END_PERPETUAL_CHECK);
        if (reps >= 2 && !all_checks(b, first, RED) && !all_checks(b, first, BLACK))
            return end_draw(END_REPETITION);
        if (counting_expired(b, cfg->counting_default))
            return end_draw(END_COUNTING);
    } else {
        if (reps >= 2) { // rule C
            EndReason why;
            Color loser = repetition_loser(b, first, true, &why);
            return loser == COLOR_NB ? end_draw(why) : end_win((Color)(loser ^ 1), why);
        }
        if (move_rule_plies(b) >= 120)
            return end_draw(END_MOVE_RULE);
    }
    if (rules_insufficient_material(b))
        return end_draw(END_INSUFFICIENT);
    if (cfg->ply_limit > 0 && b->hist_len >= cfg->ply_limit)
        return end_draw(END_PLY_LIMIT);
    return (GameEnd){OUTCOME_NONE, END_NONE};
}

SearchRule rules_search_probe(const Board *b, const RulesConfig *cfg, bool chase)
{
    int floor = repetition_floor(b);
    for (int i = b->hist_len - 4; i >= floor; i -= 2) {
        if (b->hist[i].key != b->key)
            continue;
        EndReason why;
        Color loser = repetition_loser(b, i, chase && cfg->set == RULES_ASIAN, &why);
        if (loser == COLOR_NB)
            return SEARCH_RULE_DRAW;
        return loser == b->side ? SEARCH_RULE_LOSS : SEARCH_RULE_WIN;
    }
    if (cfg->set == RULES_ASIAN && b->halfmove >= 120 && move_rule_plies(b) >= 120)
        return SEARCH_RULE_DRAW;
    if (cfg->set == RULES_SEED && b->halfmove > 0 && counting_expired(b, cfg->counting_default))
        return SEARCH_RULE_DRAW;
    if (rules_insufficient_material(b))
        return SEARCH_RULE_DRAW;
    return SEARCH_RULE_NONE;
}
