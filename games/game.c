// SPDX-License-Identifier: MIT
#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "movegen.h"
#include "timeman.h"

// The names are the PGN's Termination texts and result.json's keys: changing one changes files
// that other tools read.
const char *game_termination_name(Termination t)
{
    static const char *const text[TERM_NB] = {
        [TERM_NONE] = "none",
        [TERM_CHECKMATE] = "checkmate",
        [TERM_STALEMATE] = "stalemate",
        [TERM_PERPETUAL_CHECK] = "perpetual check",
        [TERM_COUNTING] = "counting",
        [TERM_REPETITION] = "repetition",
        [TERM_MOVE_RULE] = "60-move rule",
        [TERM_INSUFFICIENT] = "insufficient material",
        [TERM_RESIGN_ADJ] = "resign adjudication",
        [TERM_DRAW_ADJ] = "draw adjudication",
        [TERM_PLY_LIMIT] = "ply limit",
        [TERM_TIME_FORFEIT] = "time forfeit",
        [TERM_ILLEGAL_MOVE] = "illegal move",
        [TERM_CRASH] = "crash",
        [TERM_STALL] = "stall",
        [TERM_ABORTED] = "aborted",
        [TERM_RESIGN] = "resignation",
        [TERM_PERPETUAL_CHASE] = "perpetual chase",
    };
    return (unsigned)t < TERM_NB ? text[t] : "unknown";
}

/// The termination a rule's verdict is recorded as, case by case (the two enums are not in
/// the same order: perpetual chase came after the failures and adjudications).
static Termination from_rule(EndReason r)
{
    switch (r) {
    case END_CHECKMATE: return TERM_CHECKMATE;
    case END_STALEMATE: return TERM_STALEMATE;
    case END_PERPETUAL_CHECK: return TERM_PERPETUAL_CHECK;
    case END_COUNTING: return TERM_COUNTING;
    case END_REPETITION: return TERM_REPETITION;
    case END_MOVE_RULE: return TERM_MOVE_RULE;
    case END_INSUFFICIENT: return TERM_INSUFFICIENT;
    case END_PLY_LIMIT: return TERM_PLY_LIMIT;
    case END_PERPETUAL_CHASE: return TERM_PERPETUAL_CHASE;
    default: return TERM_NONE;
    }
}

int game_failed_player(const GameRecord *rec)
{
    // The failures are the contiguous run TIME_FORFEIT..STALL of the enum; a resignation is a loss,
    // not a failure, and needs no restart.
    if (rec->term < TERM_TIME_FORFEIT || rec->term > TERM_STALL)
        return -1;
    // The loser failed: Red lost means the Red player failed.
    if (rec->outcome == OUTCOME_BLACK_WINS)
        return rec->red;
    if (rec->outcome == OUTCOME_RED_WINS)
        return 1 - rec->red;
    return -1;
}

/// Seconds as a decimal number (0.1 is 100 ms) into milliseconds; !(v >= 0) also refuses NaN,
/// and the 1e7 s cap (about 4 months) keeps the milliseconds far from overflow.
static bool parse_seconds(const char *s, int64_t *ms)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0) || v > 1e7)
        return false;
    *ms = (int64_t)llround(v * 1000.0);
    return true;
}

bool game_parse_tc(const char *text, TimeControl *tc)
{
    // Only the clock fields are replaced: movetime, depth, nodes and the margins set elsewhere
    // stay.
    TimeControl t = *tc;
    t.base_ms = t.inc_ms = 0;
    t.moves = 0;
    if (strcmp(text, "inf") == 0) {
        *tc = t;
        return true;
    }
    char buf[64];
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf)
        return false;
    char *base = buf, *slash = strchr(buf, '/'), *plus;
    if (slash) {
        *slash = '\0';
        char *end;
        long m = strtol(buf, &end, 10);
        if (end == buf || *end != '\0' || m < 1 || m > 1000)
            return false;
        t.moves = (int)m;
        base = slash + 1;
    }
    plus = strchr(base, '+');
    if (plus) {
        *plus = '\0';
        if (!parse_seconds(plus + 1, &t.inc_ms))
            return false;
    }
    // 0+0 is refused: an untimed game must be asked for as "inf", not reached by a typo.
    if (!parse_seconds(base, &t.base_ms) || (t.base_ms == 0 && t.inc_ms == 0))
        return false;
    *tc = t;
    return true;
}

// The limit that governs a move, in this order of precedence: fixed time per move, the clock,
// fixed depth, fixed nodes; "-" for none. The text game_parse_tc reads back for clocks.
void game_format_tc(const TimeControl *tc, char *out, size_t len)
{
    if (tc->movetime_ms)
        snprintf(out, len, "st=%g", tc->movetime_ms / 1000.0);
    else if ((tc->base_ms || tc->inc_ms) && tc->moves)
        snprintf(out, len, "%d/%g+%g", tc->moves, tc->base_ms / 1000.0, tc->inc_ms / 1000.0);
    else if (tc->base_ms || tc->inc_ms)
        snprintf(out, len, "%g+%g", tc->base_ms / 1000.0, tc->inc_ms / 1000.0);
    else if (tc->depth)
        snprintf(out, len, "depth=%d", tc->depth);
    else if (tc->nodes)
        snprintf(out, len, "nodes=%llu", (unsigned long long)tc->nodes);
    else
        snprintf(out, len, "-");
}

// Per player, not per colour: each player keeps its clock (and its time control) whichever
// colour it has.
typedef struct {
    int64_t left[2]; // per player
    int moves_made[2];
} Clock;

static bool timed(const TimeControl *tc) { return tc->base_ms > 0 || tc->inc_ms > 0; }

static void finish(GameRecord *rec, Outcome o, Termination t, const char *detail)
{
    rec->outcome = o;
    rec->term = t;
    snprintf(rec->detail, sizeof rec->detail, "%s", detail ? detail : "");
}

static Outcome loss_for(Color c) { return c == RED ? OUTCOME_BLACK_WINS : OUTCOME_RED_WINS; }

// The last mover's own moves are plies n-1, n-3, ...; the opponent's n-2, n-4, ... A mate score
// counts by its sign alone: being mated is below any threshold, mating above it. A move without
// a score (a book move, an engine that printed none) stops the adjudication.
bool game_resigns(const ResignAdjudication *ra, const GameRecord *rec)
{
    const int n = rec->ply_count;
    if (!ra->enabled || ra->movecount <= 0 || n < 2 * ra->movecount - (ra->twosided ? 0 : 1))
        return false;
    for (int k = 0; k < ra->movecount; k++) {
        const GameMove *own = &rec->moves[n - 1 - 2 * k];
        if (!own->has_score || (own->mate ? own->score > 0 : own->score > -ra->score))
            return false;
        if (!ra->twosided)
            continue;
        const GameMove *other = &rec->moves[n - 2 - 2 * k];
        if (!other->has_score || (other->mate ? other->score < 0 : other->score < ra->score))
            return false;
    }
    return true;
}

// Both sides' last movecount moves, 2 movecount plies; a mate score never agrees to a draw.
bool game_agrees_draw(const DrawAdjudication *da, const GameRecord *rec, int fullmove)
{
    const int n = rec->ply_count;
    if (!da->enabled || da->movecount <= 0 || fullmove < da->movenumber || n < 2 * da->movecount)
        return false;
    for (int k = 0; k < 2 * da->movecount; k++) {
        const GameMove *m = &rec->moves[n - 1 - k];
        if (!m->has_score || m->mate || abs(m->score) > da->score)
            return false;
    }
    return true;
}

int game_play(Player *players[2], int red, const GameConfig *cfg, const Opening *opening,
              const atomic_bool *stop, GameRecord *rec)
{
    Board *b = malloc(sizeof *b);
    if (!b)
        return -1;
    rec->red = red;
    rec->ply_count = rec->book_plies = 0;
    finish(rec, OUTCOME_NONE, TERM_NONE, NULL);
    char why[160];
    if (board_set_fen(b, opening->fen, why, sizeof why) != FEN_OK) {
        free(b);
        return -1;
    }
    // The start is recorded in the board's own FEN, so that the verifier and the PGN see one
    // spelling whatever the opening file wrote.
    board_fen(b, rec->start_fen, sizeof rec->start_fen);
    for (int i = 0; i < opening->move_count; i++) {
        if (!movegen_is_legal(b, opening->moves[i])) {
            free(b);
            return -1;
        }
        board_make_move(b, opening->moves[i]);
        rec->moves[rec->ply_count++] = (GameMove){opening->moves[i], 0, false, false, 0, 0};
    }
    rec->book_plies = rec->ply_count;
    char msg[GAME_DETAIL_MAX];
    for (int i = 0; i < 2; i++) {
        PlayerStatus st = player_new_game(players[i], &cfg->rules, msg, sizeof msg);
        if (st != PLAYER_OK) {
            Color c = i == red ? RED : BLACK;
            finish(rec, loss_for(c), st == PLAYER_ERR_STALL ? TERM_STALL : TERM_CRASH, msg);
            free(b);
            return 0;
        }
    }
    Clock clock = {{cfg->tc[0].base_ms, cfg->tc[1].base_ms}, {0, 0}};
    for (;;) {
        // Each position is judged once: rules first (RULES.md: a rule-decided result takes
        // precedence), then, after a player's move, the scores.
        GameEnd end = rules_game_end(b, &cfg->rules);
        if (end.outcome != OUTCOME_NONE) {
            finish(rec, end.outcome, from_rule(end.reason), NULL);
            break;
        }
        // Adjudication only after a player has moved: the book's moves carry no scores, and a game
        // is never adjudicated in its opening.
        if (rec->ply_count > rec->book_plies && game_resigns(&cfg->resign, rec)) {
            finish(rec, loss_for((Color)(b->side ^ 1)), TERM_RESIGN_ADJ, NULL);
            break;
        }
        if (rec->ply_count > rec->book_plies && game_agrees_draw(&cfg->draw, rec, b->fullmove)) {
            finish(rec, OUTCOME_DRAW, TERM_DRAW_ADJ, NULL);
            break;
        }
        if ((cfg->max_plies && rec->ply_count >= cfg->max_plies) ||
            rec->ply_count >= GAME_MAX_PLIES || b->hist_len >= BOARD_HISTORY_MAX - MAX_MOVES) {
            finish(rec, OUTCOME_DRAW, TERM_PLY_LIMIT, NULL);
            break;
        }
        // Checked between moves only: an aborted game has no result, and nothing of it is counted.
        if (stop && atomic_load(stop)) {
            finish(rec, OUTCOME_NONE, TERM_ABORTED, NULL);
            break;
        }
        Color side = b->side;
        int pi = side == RED ? red : 1 - red;
        const TimeControl *tc = &cfg->tc[pi];
        PlayerLimits lim = {{-1, -1}, {0, 0}, 0, tc->movetime_ms, tc->depth, tc->nodes};
        int64_t budget;
        if (timed(tc)) {
            for (Color c = RED; c < COLOR_NB; c++) {
                int owner = c == RED ? red : 1 - red;
                // Both colours' clocks, as UCI's wtime/btime carry them; never 0 or negative,
                // which some engines mishandle.
                lim.time_ms[c] = clock.left[owner] > 0 ? clock.left[owner] : 1;
                lim.inc_ms[c] = cfg->tc[owner].inc_ms;
            }
            if (tc->moves)
                lim.movestogo = tc->moves - clock.moves_made[pi] % tc->moves;
            // budget: the wall-clock deadline player_go enforces (a stall past it). Fixed depth or
            // nodes still get one, so that an engine that never answers cannot hold the game
            // forever.
            budget = clock.left[pi] + tc->margin_ms;
        } else if (tc->movetime_ms) {
            budget = tc->movetime_ms + tc->margin_ms;
        } else {
            budget = tc->fixed_deadline_ms > 0 ? tc->fixed_deadline_ms : 60000;
        }
        PlayerMove pm;
        // The time is measured here, not taken from the engine: the clock is honest whatever the
        // engine reports.
        int64_t t0 = timeman_now_ms();
        PlayerStatus st = player_go(players[pi], b, &lim, t0 + budget, &pm, msg, sizeof msg);
        int64_t spent = timeman_now_ms() - t0;
        if (st == PLAYER_ERR_CONFIG) { // not the engine's fault in this game: stop the match
            finish(rec, OUTCOME_NONE, TERM_ABORTED, msg);
            break;
        }
        if (st != PLAYER_OK) {
            Termination t = st == PLAYER_RESIGNED                              ? TERM_RESIGN
                            : st == PLAYER_ERR_TIMEOUT                         ? TERM_TIME_FORFEIT
                            : st == PLAYER_ERR_STALL                           ? TERM_STALL
                            : st == PLAYER_ERR_CRASH || st == PLAYER_ERR_START ? TERM_CRASH
                                                                               : TERM_ILLEGAL_MOVE;
            finish(rec, loss_for(side), t, msg);
            break;
        }
        if (timed(tc)) {
            // Lateness within margin_ms is forgiven but not carried (the clock goes back to 0,
            // never below); past it the game is lost on time. Then the increment, and at the end of
            // a moves/time period the next period's base time.
            clock.left[pi] -= spent;
            if (clock.left[pi] < -tc->margin_ms) {
                snprintf(msg, sizeof msg, "used %lld ms, %lld ms over", (long long)spent,
                         (long long)-clock.left[pi]);
                finish(rec, loss_for(side), TERM_TIME_FORFEIT, msg);
                break;
            }
            if (clock.left[pi] < 0)
                clock.left[pi] = 0;
            clock.left[pi] += tc->inc_ms;
            clock.moves_made[pi]++;
            if (tc->moves && clock.moves_made[pi] % tc->moves == 0)
                clock.left[pi] += tc->base_ms;
        } else if (tc->movetime_ms && spent > tc->movetime_ms + tc->margin_ms) {
            snprintf(msg, sizeof msg, "used %lld ms of %lld", (long long)spent,
                     (long long)tc->movetime_ms);
            finish(rec, loss_for(side), TERM_TIME_FORFEIT, msg);
            break;
        }
        GameMove *gm = &rec->moves[rec->ply_count++];
        *gm = (GameMove){pm.move, pm.score, pm.has_score, pm.mate, pm.depth, spent};
        board_make_move(b, pm.move);
    }
    free(b);
    return 0;
}

/// Rules first: a position the rules end must be the last one, and a rule ending must be the
/// rules' own verdict there; an adjudication or a failure must leave a position the rules do
/// not end, with a decisive result (or a draw for the draw adjudication and the ply limit).
/// The coordinator's check of a game a worker reports: nothing a rank sends is trusted. It
/// replays the moves under the same rules code (search/rules) as game_play, so an honest
/// worker's record passes.
bool game_verify(const GameRecord *rec, const GameConfig *cfg, const Opening *opening, char *why,
                 size_t why_len)
{
    if (rec->outcome == OUTCOME_NONE || rec->term == TERM_NONE || rec->term == TERM_ABORTED ||
        rec->term >= TERM_NB || rec->outcome > OUTCOME_DRAW) {
        snprintf(why, why_len, "an aborted game or no result");
        return false;
    }
    Board *b = malloc(sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    bool ok = false;
    char fen[BOARD_FEN_MAX];
    if (opening) {
        if (board_set_fen(b, opening->fen, why, why_len) != FEN_OK)
            goto out;
        board_fen(b, fen, sizeof fen);
        if (strcmp(fen, rec->start_fen) != 0 || rec->book_plies != opening->move_count) {
            snprintf(why, why_len, "the game does not start from its pair's opening");
            goto out;
        }
    }
    char fwhy[128];
    if (board_set_fen(b, rec->start_fen, fwhy, sizeof fwhy) != FEN_OK) {
        snprintf(why, why_len, "start position: %s", fwhy);
        goto out;
    }
    for (int i = 0; i < rec->ply_count; i++) {
        Move m = rec->moves[i].move;
        if (opening && i < opening->move_count && m != opening->moves[i]) {
            snprintf(why, why_len, "book move %d is not the opening's", i + 1);
            goto out;
        }
        if (i >= rec->book_plies && rules_game_end(b, &cfg->rules).outcome != OUTCOME_NONE) {
            snprintf(why, why_len, "moves go on after the rules ended the game (ply %d)", i + 1);
            goto out;
        }
        if (!movegen_is_legal(b, m) || b->hist_len >= BOARD_HISTORY_MAX - 1) {
            char mv[MOVE_TEXT_MAX];
            move_text(m, 0, mv);
            snprintf(why, why_len, "illegal move %s at ply %d", mv, i + 1);
            goto out;
        }
        board_make_move(b, m);
    }
    GameEnd end = rules_game_end(b, &cfg->rules);
    if (end.outcome != OUTCOME_NONE) {
        ok = rec->outcome == end.outcome && rec->term == from_rule(end.reason);
        if (!ok)
            snprintf(why, why_len, "the rules end the game by %s, the record says %s",
                     rules_end_name(end.reason), game_termination_name(rec->term));
        goto out;
    }
    bool draw_term = rec->term == TERM_DRAW_ADJ || rec->term == TERM_PLY_LIMIT;
    bool rule_term = rec->term <= TERM_INSUFFICIENT || rec->term == TERM_PERPETUAL_CHASE;
    if (rule_term) {
        snprintf(why, why_len, "the record says %s, the rules do not end the game there",
                 game_termination_name(rec->term));
    } else if (draw_term != (rec->outcome == OUTCOME_DRAW)) {
        snprintf(why, why_len, "%s with a %s", game_termination_name(rec->term),
                 rec->outcome == OUTCOME_DRAW ? "draw" : "decisive result");
        // A ply limit must be one game_play would have reached: the job's max_plies, GAME_MAX_PLIES
        // or the board's history bound, the same three tests.
    } else if (rec->term == TERM_PLY_LIMIT &&
               !(cfg->max_plies && rec->ply_count >= cfg->max_plies) &&
               rec->ply_count < GAME_MAX_PLIES && b->hist_len < BOARD_HISTORY_MAX - MAX_MOVES) {
        snprintf(why, why_len, "ply limit after %d plies", rec->ply_count);
    } else {
        ok = true;
    }
out:
    free(b);
    return ok;
}
