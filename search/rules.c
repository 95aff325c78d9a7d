// SPDX-License-Identifier: MIT
#include "rules.h"

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
        if (reps >= 2) {
            bool red = all_checks(b, first, RED), black = all_checks(b, first, BLACK);
            if (red != black)
                return end_win(red ? BLACK : RED, END_PERPETUAL_CHECK);
            return end_draw(END_REPETITION);
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

SearchRule rules_search_probe(const Board *b, const RulesConfig *cfg)
{
    int floor = repetition_floor(b);
    for (int i = b->hist_len - 4; i >= floor; i -= 2) {
        if (b->hist[i].key != b->key)
            continue;
        bool us = all_checks(b, i, b->side), them = all_checks(b, i, (Color)(b->side ^ 1));
        if (us != them)
            return us ? SEARCH_RULE_LOSS : SEARCH_RULE_WIN;
        return SEARCH_RULE_DRAW;
    }
    if (cfg->set == RULES_ASIAN && b->halfmove >= 120 && move_rule_plies(b) >= 120)
        return SEARCH_RULE_DRAW;
    if (cfg->set == RULES_SEED && b->halfmove > 0 && counting_expired(b, cfg->counting_default))
        return SEARCH_RULE_DRAW;
    if (rules_insufficient_material(b))
        return SEARCH_RULE_DRAW;
    return SEARCH_RULE_NONE;
}
