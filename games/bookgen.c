// SPDX-License-Identifier: MIT
#include "bookgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"
#include "rng.h"
#include "search.h"

// The cache never changes a result: a verification is a pure function of the position (its EPD
// part, from a cleared engine), so a cached score is the score a new search would give. A slot
// is simply overwritten by the next position with the same low key bits.
enum { CACHE_SIZE = 1 << 16 }; // verified positions remembered per generator

typedef struct {
    uint64_t key;
    int score;
    bool used;
} CacheSlot;

/// The lines of the last completed iteration of a MultiPV search.
/// The engine reports each depth's lines best first; a new depth starts the list again, so what
/// stays is the deepest iteration the search completed.
typedef struct {
    int depth, n;
    Move move[ENGINE_MAX_MULTIPV];
    int score[ENGINE_MAX_MULTIPV];
} Lines;

struct Bookgen {
    const BookgenConfig *cfg;
    Engine *engine;
    Board *board, *scratch;
    CacheSlot *cache;
};

const char *bookgen_strerror(BookgenStatus st)
{
    static const char *const text[BOOKGEN_STATUS_NB] = {"ok", "book setting out of range",
                                                        "out of memory",
                                                        "the engine refused an option", "aborted"};
    return (unsigned)st < BOOKGEN_STATUS_NB ? text[st] : "unknown bookgen status";
}

/// Every setting within the bounds the fixed arrays assume (paths of BOOKGEN_MAX_PLIES,
/// ENGINE_MAX_MULTIPV lines, units of BOOKGEN_MAX_UNIT).
static bool config_ok(const BookgenConfig *c)
{
    return c->plies_min >= 0 && c->plies_min <= c->plies_max && c->plies_max <= BOOKGEN_MAX_PLIES &&
           c->multipv >= 1 && c->multipv <= ENGINE_MAX_MULTIPV && c->select_depth >= 1 &&
           c->verify_depth >= 1 && c->margin >= 0 && c->temperature >= 0 && c->unit >= 1 &&
           c->unit <= BOOKGEN_MAX_UNIT && c->hash_mb >= 1;
}

BookgenStatus bookgen_new(const BookgenConfig *cfg, Bookgen **out)
{
    *out = NULL;
    if (!config_ok(cfg))
        return BOOKGEN_ERR_CONFIG;
    Bookgen *g = calloc(1, sizeof *g);
    if (!g)
        return BOOKGEN_ERR_NOMEM;
    g->cfg = cfg;
    g->engine = engine_new();
    g->board = malloc(sizeof *g->board);
    g->scratch = malloc(sizeof *g->scratch);
    g->cache = calloc(CACHE_SIZE, sizeof *g->cache);
    if (!g->engine || !g->board || !g->scratch || !g->cache) {
        bookgen_free(g);
        return BOOKGEN_ERR_NOMEM;
    }
    char hash[16];
    snprintf(hash, sizeof hash, "%d", cfg->hash_mb);
    // The job's rules go to the engine: repetition and the other rules shape its search, and the
    // candidates must be positions of the game the book is for.
    if (engine_set_option(g->engine, "Hash", hash) != ENGINE_OK ||
        engine_set_option(g->engine, "Rules", rules_set_name(cfg->rules)) != ENGINE_OK) {
        bookgen_free(g);
        return BOOKGEN_ERR_ENGINE;
    }
    *out = g;
    return BOOKGEN_OK;
}

void bookgen_free(Bookgen *g)
{
    if (!g)
        return;
    engine_free(g->engine);
    free(g->board);
    free(g->scratch);
    free(g->cache);
    free(g);
}

static void on_info(void *ctx, const SearchInfo *info)
{
    Lines *l = ctx;
    if (info->depth != l->depth) {
        l->depth = info->depth;
        l->n = 0;
    }
    if (info->pv_len > 0 && l->n < ENGINE_MAX_MULTIPV) {
        l->move[l->n] = info->pv[0];
        l->score[l->n++] = info->score;
    }
}

/// One fixed-depth search of b; MultiPV is set on every call, as selection and verification
/// alternate on the same engine with different counts.
static BookgenStatus search_depth(Engine *e, const Board *b, int multipv, int depth, Lines *lines,
                                  uint64_t *nodes, SearchResult *res)
{
    char mpv[16];
    snprintf(mpv, sizeof mpv, "%d", multipv);
    if (engine_set_option(e, "MultiPV", mpv) != ENGINE_OK || engine_set_position(e, b) != ENGINE_OK)
        return BOOKGEN_ERR_ENGINE;
    SearchLimits lim;
    limits_init(&lim);
    lim.depth = depth;
    if (lines)
        memset(lines, 0, sizeof *lines);
    *res = engine_search(e, &lim, lines ? on_info : NULL, lines);
    if (nodes)
        *nodes += res->nodes;
    return BOOKGEN_OK;
}

/// The verification's iterations, watched for the early abort.
typedef struct {
    Bookgen *g;
    const Board *b;
    int score; // side to move's, of the last exact iteration
    bool aborted;
} Watch;

static void on_verify_info(void *ctx, const SearchInfo *info)
{
    Watch *w = ctx;
    const BookgenConfig *c = w->g->cfg;
    // Only a finished iteration's line: an aspiration fail is re-searched at the same depth.
    if (w->aborted || info->multipv > 1 || info->bound != BOUND_EXACT)
        return;
    w->score = info->score;
    int red = w->b->side == RED ? info->score : -info->score;
    if (info->depth >= c->abort_depth && info->depth < c->verify_depth &&
        c->abort(c->abort_ctx, w->b, red)) {
        w->aborted = true;
        engine_stop(w->g->engine);
    }
}

/// The verification's fixed-depth search, single line, its iterations watched when w is set.
static BookgenStatus search_depth_watched(Engine *e, const Board *b, int depth, Watch *w,
                                          uint64_t *nodes, SearchResult *res)
{
    if (engine_set_option(e, "MultiPV", "1") != ENGINE_OK || engine_set_position(e, b) != ENGINE_OK)
        return BOOKGEN_ERR_ENGINE;
    SearchLimits lim;
    limits_init(&lim);
    lim.depth = depth;
    *res = engine_search(e, &lim, w ? on_verify_info : NULL, w);
    if (nodes)
        *nodes += res->nodes;
    return BOOKGEN_OK;
}

/// Picks among the lines within the margin of the best: uniformly, or with weights
/// exp((score - best) / temperature).
static Move pick(const BookgenConfig *c, const Lines *l, Rng *r, int *score)
{
    int best = l->score[0], n = 0;
    double w[ENGINE_MAX_MULTIPV], total = 0;
    for (int i = 0; i < l->n; i++) {
        if (l->score[i] < best - c->margin)
            break; // lines come best first
        w[n] = c->temperature > 0 ? exp((l->score[i] - best) / c->temperature) : 1.0;
        total += w[n++];
    }
    // 53 random bits: the same choice on every machine.
    double x = (double)(rng_next(r) >> 11) / 9007199254740992.0 * total;
    int i = 0;
    // The last line takes whatever rounding leaves, so the walk never runs past the lines.
    while (i < n - 1 && x >= w[i])
        x -= w[i++];
    *score = l->score[i];
    return l->move[i];
}

/// The EPD position part of a FEN (board, side, "- -"): the position without counters, so a
/// verification depends on the position alone.
static void epd_position(const Board *b, char *out, size_t len)
{
    char fen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen);
    char *sp = strchr(fen, ' ');
    snprintf(out, len, "%.*s %c - -", sp ? (int)(sp - fen) : (int)strlen(fen), fen,
             b->side == BLACK ? 'b' : 'w');
}

BookgenStatus bookgen_verify(Bookgen *g, const char *fen, int *score, uint64_t *nodes)
{
    if (board_set_fen(g->scratch, fen, NULL, 0) != FEN_OK)
        return BOOKGEN_ERR_CONFIG;
    char pos[BOARD_FEN_MAX];
    epd_position(g->scratch, pos, sizeof pos);
    board_set_fen(g->scratch, pos, NULL, 0);
    CacheSlot *slot = &g->cache[g->scratch->key & (CACHE_SIZE - 1)];
    if (slot->used && slot->key == g->scratch->key) {
        *score = slot->score;
        return BOOKGEN_OK;
    }
    // A cleared engine for every verification: its score then depends on the position alone, not
    // on what this generator searched before (the condition for the cache, and for units to give
    // the same candidates on any rank).
    engine_new_game(g->engine);
    SearchResult res;
    Watch w = {g, g->scratch, 0, false};
    BookgenStatus st = search_depth_watched(g->engine, g->scratch, g->cfg->verify_depth,
                                            g->cfg->abort ? &w : NULL, nodes, &res);
    if (st)
        return st;
    // No legal move: the side to move has lost.
    int stm = w.aborted ? w.score : res.best == MOVE_NONE ? -VALUE_MATE : res.score;
    *score = g->scratch->side == RED ? stm : -stm;
    *slot = (CacheSlot){g->scratch->key, *score, true};
    return BOOKGEN_OK;
}

/// The seed of candidate i of a unit: each candidate has a stream of its own, so it does not
/// depend on the candidates before it, nor on how far they got (splitmix64-style finalizer).
static uint64_t mix(uint64_t seed, uint64_t unit, int i)
{
    uint64_t z = seed ^ (unit * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 29);
}

/// Sets the board to a start position: the start position, or a seed-book entry.
static void start_board(const BookgenConfig *c, Board *b, Rng *r)
{
    if (!c->starts || c->starts->count == 0) {
        board_set_fen(b, BOARD_START_FEN, NULL, 0);
        return;
    }
    const Opening *o = &c->starts->items[rng_below(r, (uint32_t)c->starts->count)];
    board_set_fen(b, o->fen, NULL, 0); // validated when loaded
    for (int i = 0; i < o->move_count; i++)
        board_make_move(b, o->moves[i]);
    char fen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen); // history off: a game starts here
    board_set_fen(b, fen, NULL, 0);
}

/// One candidate: from a cleared engine (the searches along its path share the table, the same
/// way on every rank), a number of plies drawn in [plies_min, plies_max], each move picked
/// among the shallow search's lines, then the verification of the position reached.
static BookgenStatus candidate(Bookgen *g, uint64_t unit, int i, BookgenCandidate *out,
                               uint64_t *nodes)
{
    const BookgenConfig *c = g->cfg;
    Rng r;
    rng_seed(&r, mix(c->seed, unit, i));
    Board *b = g->board;
    start_board(c, b, &r);
    board_fen(b, out->start_fen, sizeof out->start_fen);
    int plies = c->plies_min + (int)rng_below(&r, (uint32_t)(c->plies_max - c->plies_min + 1));
    out->path_len = 0;
    engine_new_game(g->engine);
    for (int p = 0; p < plies; p++) {
        Lines lines;
        SearchResult res;
        BookgenStatus st =
            search_depth(g->engine, b, c->multipv, c->select_depth, &lines, nodes, &res);
        if (st)
            return st;
        if (lines.n == 0)
            break; // no legal move: the verification scores the loss
        int score = 0;
        Move m = pick(c, &lines, &r, &score);
        out->path[out->path_len] = m;
        out->path_scores[out->path_len++] = score;
        board_make_move(b, m);
    }
    char fen[BOARD_FEN_MAX];
    board_fen(b, fen, sizeof fen);
    return bookgen_verify(g, fen, &out->score, nodes);
}

BookgenStatus bookgen_unit(Bookgen *g, uint64_t unit, const atomic_bool *abort,
                           BookgenCandidate *out, uint64_t *nodes)
{
    uint64_t spare = 0;
    for (int i = 0; i < g->cfg->unit; i++) {
        // Checked between candidates only: an aborted unit is incomplete and must not be sent.
        if (abort && atomic_load(abort))
            return BOOKGEN_ABORTED;
        BookgenStatus st = candidate(g, unit, i, &out[i], nodes ? nodes : &spare);
        if (st)
            return st;
    }
    return BOOKGEN_OK;
}

bool bookgen_mirror_fen(const char *fen, char *out, size_t len)
{
    // Each rank's text reversed is the rank mirrored: digits are runs of empty squares (at
    // most 9, one digit), so a run stays a run.
    size_t board = strcspn(fen, " ");
    if (board >= len)
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= board; i++) {
        if (i < board && fen[i] != '/')
            continue;
        for (size_t k = start; k < i; k++)
            out[k] = fen[i - 1 - (k - start)];
        if (i < board)
            out[i] = '/';
        start = i + 1;
    }
    return snprintf(out + board, len - board, "%s", fen + board) < (int)(len - board);
}

/// The key of the mirror of b's position.
/// 0 when it cannot be computed (out of memory): no position has key 0 in practice, so the
/// mirror test then finds nothing rather than refusing a position wrongly.
static uint64_t mirror_key(const Board *b)
{
    char fen[BOARD_FEN_MAX], mirrored[BOARD_FEN_MAX];
    epd_position(b, fen, sizeof fen);
    Board *m = malloc(sizeof *m);
    uint64_t key = 0;
    if (m && bookgen_mirror_fen(fen, mirrored, sizeof mirrored) &&
        board_set_fen(m, mirrored, NULL, 0) == FEN_OK)
        key = m->key;
    free(m);
    return key;
}

bool bookgen_replay(const char *start_fen, const Move *path, int n, BookgenLine *out, char *why,
                    size_t why_len)
{
    Board *b = malloc(sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    // Everything here comes from a worker and is checked as untrusted: the path's length, the start
    // FEN, and each move's squares before movegen sees it (a move of garbage squares must never
    // index the board).
    bool ok = n >= 0 && n <= BOOKGEN_MAX_PLIES;
    if (!ok)
        snprintf(why, why_len, "%d moves, at most %d", n, BOOKGEN_MAX_PLIES);
    else
        ok = board_set_fen(b, start_fen, why, why_len) == FEN_OK;
    for (int i = 0; ok && i < n; i++) {
        out->keys[i] = b->key;
        ok = move_from(path[i]) < SQUARE_NB && move_to(path[i]) < SQUARE_NB &&
             movegen_is_legal(b, path[i]);
        if (!ok)
            snprintf(why, why_len, "move %d (%u) is illegal", i + 1, (unsigned)path[i]);
        else
            board_make_move(b, path[i]);
    }
    if (ok) {
        out->key = b->key;
        out->mirror_key = mirror_key(b);
        out->black_to_move = b->side == BLACK;
        out->in_check = board_in_check(b);
        // From the FEN's move number, so a seed-book start's own counters count: ply is the
        // position's depth in the game, not the length of the path.
        out->ply = 2 * (b->fullmove - 1) + out->black_to_move;
        epd_position(b, out->epd, sizeof out->epd);
    }
    free(b);
    return ok;
}
