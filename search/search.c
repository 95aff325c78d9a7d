// SPDX-License-Identifier: MIT
#include "search.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "eval.h"
#include "movegen.h"
#include "nnue.h"
#include "see.h"
#include "tt.h"

/// Continuation history: how often a quiet move (piece, destination) cut after a given
/// earlier move (piece, destination) one or two plies before.
typedef int16_t ContHist[PIECE_NB][SQUARE_NB];

typedef struct {
    int static_eval;
    Move killers[2];
    Move move;    // the move made from this ply (MOVE_NONE for a null move)
    ContHist *ch; // the continuation table of that move (NULL for a null move)
    int pv_len;
    Move pv[MAX_PLY + 1];
} Stack;

typedef struct SearchThread SearchThread;

enum { LMR_MAX = 64, LMP_DEPTH_MAX = 8 };

/// Tables derived from search rows of the weights, rebuilt by engine_search when those rows
/// changed (weights may be edited between searches: setoption, weight files, SPSA).
typedef struct {
    int32_t lmr_base, lmr_div, lmp_base, lmp_factor; // the rows they were built from (0: never)
    uint8_t reductions[LMR_MAX][LMR_MAX];            // [depth][moves searched]
    int16_t lmp[2][LMP_DEPTH_MAX + 1];               // [improving][depth]: quiets before pruning
} SearchTables;

struct Engine {
    TT tt;
    Weights weights;
    SearchTables tables;
    RulesConfig rules;
    int threads, hash_mb, multipv, overhead_ms;
    unsigned features; // SEARCH_FEATURE_* bits switched on (all by default)
    atomic_bool stop;
    SearchThread **workers;
    Board root;
    // Evaluation: the linear one (eval.c) unless use_nnue; the net from EvalFile, else the
    // embedded default. Threads share the net read-only; each has its own accumulators.
    bool use_nnue;
    NnueNet file_net; // hidden == 0: none loaded
    char error[ENGINE_ERROR_MAX];
};

struct SearchThread {
    Engine *engine;
    int id;
    _Atomic uint64_t nodes;
    int seldepth, root_depth;
    // main thread only: limits and clock
    const SearchLimits *limits;
    TimeBudget budget;
    int64_t start_ms;
    int slowdown;    // XQFORGE_SLOWDOWN (a test knob, timeman.h); 1: none
    int64_t slow_ns; // the thread's CPU time when its last busy work ended
    // MultiPV: root moves already reported as better lines in this iteration
    Move excluded[ENGINE_MAX_MULTIPV];
    int excluded_n;
    int16_t history[COLOR_NB][SQUARE_NB][SQUARE_NB];
    ContHist cont[PIECE_NB][SQUARE_NB];
    Stack stack[MAX_PLY + 4];
    Board board;
    NnueStack *nnue; // allocated while UseNNUE is on (64-byte aligned)
    bool nnue_on;    // this search evaluates with the net
};

/// The option table (options.def); STRING rows keep their default in text, the others in def.
#define OPTION_DEFAULT_SPIN(d)   .def = (d)
#define OPTION_DEFAULT_CHECK(d)  .def = (d)
#define OPTION_DEFAULT_COMBO(d)  .def = (d)
#define OPTION_DEFAULT_BUTTON(d) .def = (d)
#define OPTION_DEFAULT_STRING(d) .text = (d)
const EngineOptionInfo engine_options[ENGINE_OPT_NB] = {
#define ENGINE_OPTION(id, label, kind, d, lo, hi)                                                  \
    {.name = label, .type = OPTION_##kind, OPTION_DEFAULT_##kind(d), .min = lo, .max = hi},
#define UCI_OPTION(id, label, kind, d, lo, hi)                                                     \
    {.name = label,                                                                                \
     .type = OPTION_##kind,                                                                        \
     OPTION_DEFAULT_##kind(d),                                                                     \
     .min = lo,                                                                                    \
     .max = hi,                                                                                    \
     .front_end = true},
#include "options.def"
#undef UCI_OPTION
#undef ENGINE_OPTION
};

// Feature f is row ENGINE_OPT_FEATURE_FIRST + f: the features must close the table.
#define ENGINE_OPTION(id, label, kind, d, lo, hi)
#define SEARCH_FEATURE(id, label, d)                                                               \
    _Static_assert(ENGINE_OPT_FEATURE_##id == ENGINE_OPT_FEATURE_FIRST + SEARCH_##id,              \
                   "SEARCH_FEATURE rows must close options.def");
#include "options.def"
#undef SEARCH_FEATURE
#undef ENGINE_OPTION

static inline bool on(const Engine *e, SearchFeature f) { return (e->features >> f) & 1; }

/// Late-move reductions grow with the log of depth and of the move's number:
/// lmr_base / 100 + ln(depth) * ln(moves) / (lmr_div / 100). Late-move pruning keeps
/// lmp_base + depth^2 * lmp_factor / 100 / (2 - improving) quiets. Rebuilt only on a change.
static void tables_update(SearchTables *tb, const Weights *w)
{
    const int32_t *v = w->v;
    if (tb->lmr_base == v[P_search_lmr_base] && tb->lmr_div == v[P_search_lmr_div] &&
        tb->lmp_base == v[P_search_lmp_base] && tb->lmp_factor == v[P_search_lmp_factor])
        return;
    tb->lmr_base = v[P_search_lmr_base];
    tb->lmr_div = v[P_search_lmr_div];
    tb->lmp_base = v[P_search_lmp_base];
    tb->lmp_factor = v[P_search_lmp_factor];
    double base = tb->lmr_base / 100.0, div = tb->lmr_div / 100.0;
    for (int d = 1; d < LMR_MAX; d++)
        for (int m = 1; m < LMR_MAX; m++)
            tb->reductions[d][m] = (uint8_t)(int)(base + log(d) * log(m) / div);
    for (int imp = 0; imp < 2; imp++)
        for (int d = 0; d <= LMP_DEPTH_MAX; d++)
            tb->lmp[imp][d] = (int16_t)(tb->lmp_base + d * d * tb->lmp_factor / (100 * (2 - imp)));
}

const char *engine_strerror(EngineStatus st)
{
    switch (st) {
    case ENGINE_OK: return "no error";
    case ENGINE_ERR_UNKNOWN_OPTION: return "unknown option";
    case ENGINE_ERR_VALUE: return "bad option value";
    case ENGINE_ERR_NOMEM: return "out of memory";
    default: return "unknown engine status";
    }
}

// ---------------------------------------------------------------------------------------
// Engine object and options

static void free_workers(Engine *e)
{
    if (!e->workers)
        return;
    for (int i = 0; i < e->threads; i++) {
        if (e->workers[i])
            free(e->workers[i]->nnue);
        free(e->workers[i]);
    }
    free(e->workers);
    e->workers = NULL;
}

/// Gives every worker its accumulator stack (UseNNUE on).
static EngineStatus alloc_nnue_stacks(Engine *e)
{
    for (int i = 0; i < e->threads; i++) {
        SearchThread *t = e->workers[i];
        if (!t->nnue && !(t->nnue = aligned_alloc(64, sizeof *t->nnue)))
            return ENGINE_ERR_NOMEM;
    }
    return ENGINE_OK;
}

static EngineStatus alloc_workers(Engine *e, int n)
{
    free_workers(e);
    e->workers = calloc((size_t)n, sizeof *e->workers);
    if (!e->workers)
        return ENGINE_ERR_NOMEM;
    e->threads = n;
    for (int i = 0; i < n; i++) {
        e->workers[i] = calloc(1, sizeof(SearchThread));
        if (!e->workers[i]) {
            free_workers(e);
            e->threads = 0;
            return ENGINE_ERR_NOMEM;
        }
        e->workers[i]->engine = e;
        e->workers[i]->id = i;
    }
    if (e->use_nnue && alloc_nnue_stacks(e) != ENGINE_OK) {
        free_workers(e);
        e->threads = 0;
        return ENGINE_ERR_NOMEM;
    }
    return ENGINE_OK;
}

static EngineStatus option_apply(Engine *e, EngineOptionId id, long v, const char *text);

Engine *engine_new(void)
{
    board_init();
    Engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    weights_default(&e->weights);
    tables_update(&e->tables, &e->weights);
    atomic_init(&e->stop, false);
    board_set_fen(&e->root, BOARD_START_FEN, NULL, 0);
    // Every option through its setter, in table order (Threads and Hash come first).
    for (int id = 0; id < ENGINE_OPT_NB; id++) {
        const EngineOptionInfo *o = &engine_options[id];
        if (o->front_end || o->type == OPTION_BUTTON)
            continue;
        if (option_apply(e, (EngineOptionId)id, engine_option_default((EngineOptionId)id),
                         o->text) != ENGINE_OK) {
            engine_free(e);
            return NULL;
        }
    }
    return e;
}

void engine_free(Engine *e)
{
    if (!e)
        return;
    free_workers(e);
    tt_free(&e->tt);
    nnue_free(&e->file_net);
    free(e);
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return false;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool name_is(const char *a, const char *b) { return strcasecmp(a, b) == 0; }

/// The net UseNNUE evaluates with: EvalFile's, else the embedded one (NULL: none).
static const NnueNet *active_net(const Engine *e)
{
    return e->file_net.hidden ? &e->file_net : nnue_default();
}

static EngineStatus option_error(Engine *e, const char *fmt, const char *arg)
{
    snprintf(e->error, sizeof e->error, fmt, arg);
    return ENGINE_ERR_VALUE;
}

/// EvalFile: a path, or empty / <default> / <empty> for the embedded net. A bad file is
/// refused with the reason and the net in use stays.
static EngineStatus set_eval_file(Engine *e, const char *value)
{
    if (!value || !*value || name_is(value, "<default>") || name_is(value, "<empty>")) {
        if (e->use_nnue && !nnue_default())
            return option_error(e, "%s",
                                "EvalFile: this build has no embedded net to go back "
                                "to while UseNNUE is true");
        nnue_free(&e->file_net);
        tt_clear(&e->tt); // stored static evaluations were the old net's
        return ENGINE_OK;
    }
    NnueNet net;
    char why[ENGINE_ERROR_MAX - 16];
    if (nnue_load_file(&net, value, why, sizeof why) != NNUE_OK)
        return option_error(e, "EvalFile: %s", why);
    nnue_free(&e->file_net);
    e->file_net = net;
    tt_clear(&e->tt);
    return ENGINE_OK;
}

static EngineStatus set_use_nnue(Engine *e, bool on)
{
    if (on && !active_net(e))
        return option_error(e, "%s",
                            "UseNNUE true needs a net: set EvalFile to a net file "
                            "first (this build has no embedded net)");
    if (on && alloc_nnue_stacks(e) != ENGINE_OK)
        return ENGINE_ERR_NOMEM;
    if (on != e->use_nnue)
        tt_clear(&e->tt);
    e->use_nnue = on;
    return ENGINE_OK;
}

static bool parse_bool(const char *value, bool *out)
{
    if (value && (name_is(value, "true") || name_is(value, "on") || !strcmp(value, "1")))
        *out = true;
    else if (value && (name_is(value, "false") || name_is(value, "off") || !strcmp(value, "0")))
        *out = false;
    else
        return false;
    return true;
}

const char *engine_error(const Engine *e) { return e->error; }

static EngineStatus set_hash(Engine *e, int mb)
{
    if (tt_resize(&e->tt, (size_t)mb) != 0) {
        tt_resize(&e->tt, (size_t)e->hash_mb); // keep a working table of the old size
        return ENGINE_ERR_NOMEM;
    }
    e->hash_mb = mb;
    return ENGINE_OK;
}

/// Sets row id to a value its type has checked: v for SPIN, CHECK (0/1) and COMBO (a
/// RuleSet), text for STRING.
static EngineStatus option_apply(Engine *e, EngineOptionId id, long v, const char *text)
{
    if (id >= ENGINE_OPT_FEATURE_FIRST) {
        unsigned bit = 1u << (id - ENGINE_OPT_FEATURE_FIRST);
        e->features = v ? e->features | bit : e->features & ~bit;
        return ENGINE_OK;
    }
    switch (id) {
    case ENGINE_OPT_THREADS: return (int)v == e->threads ? ENGINE_OK : alloc_workers(e, (int)v);
    case ENGINE_OPT_HASH: return set_hash(e, (int)v);
    case ENGINE_OPT_CLEAR_HASH: tt_clear(&e->tt); return ENGINE_OK;
    case ENGINE_OPT_MULTIPV: e->multipv = (int)v; return ENGINE_OK;
    case ENGINE_OPT_MOVE_OVERHEAD: e->overhead_ms = (int)v; return ENGINE_OK;
    case ENGINE_OPT_RULES: {
        int counting = e->rules.counting_default; // its own option
        e->rules = rules_config_default((RuleSet)v);
        e->rules.counting_default = counting;
        return ENGINE_OK;
    }
    case ENGINE_OPT_COUNTING_DEFAULT: e->rules.counting_default = (int)v; return ENGINE_OK;
    case ENGINE_OPT_EVAL_FILE: return set_eval_file(e, text);
    case ENGINE_OPT_USE_NNUE: return set_use_nnue(e, v != 0);
    default: return ENGINE_ERR_UNKNOWN_OPTION; // a front end's (WeightsFile)
    }
}

/// The row engine_set_option reads under this name (any case), or -1.
static int option_find(const char *name)
{
    for (int id = 0; name && id < ENGINE_OPT_NB; id++)
        if (!engine_options[id].front_end && name_is(name, engine_options[id].name))
            return id;
    return -1;
}

/// A value as the row's type takes it, SPIN within its range; false if it is not one.
static bool option_parse(const EngineOptionInfo *o, const char *value, long *v)
{
    bool flag;
    RuleSet set;
    *v = 0;
    switch (o->type) {
    case OPTION_SPIN: return parse_long(value, o->min, o->max, v);
    case OPTION_CHECK:
        if (!parse_bool(value, &flag))
            return false;
        *v = flag;
        return true;
    case OPTION_COMBO: // the one combo is Rules
        if (!rules_set_parse(value, &set))
            return false;
        *v = set;
        return true;
    default: return true; // a button takes no value; a string's is its setter's to check
    }
}

EngineStatus engine_set_option(Engine *e, const char *name, const char *value)
{
    e->error[0] = '\0';
    int id = option_find(name);
    long v;
    if (id >= 0)
        return option_parse(&engine_options[id], value, &v)
                   ? option_apply(e, (EngineOptionId)id, v, value)
                   : ENGINE_ERR_VALUE;
    switch (weights_set(&e->weights, name, value)) {
    case PARAMS_OK: return ENGINE_OK;
    case PARAMS_ERR_UNKNOWN: return ENGINE_ERR_UNKNOWN_OPTION;
    default: return ENGINE_ERR_VALUE;
    }
}

bool engine_option_exists(const char *name)
{
    return option_find(name) >= 0 || params_find(name) >= 0;
}

int engine_option_default(EngineOptionId id)
{
    int def = engine_options[id].def;
    return def == ENGINE_DEFAULT_NET ? nnue_default() != NULL : def;
}

const char *engine_feature_name(int feature)
{
    return feature >= 0 && feature < SEARCH_FEATURE_NB
               ? engine_options[ENGINE_OPT_FEATURE_FIRST + feature].name
               : NULL;
}

int engine_threads(const Engine *e) { return e->threads; }
int engine_multipv(const Engine *e) { return e->multipv; }
const RulesConfig *engine_rules(const Engine *e) { return &e->rules; }
Weights *engine_weights(Engine *e) { return &e->weights; }
EngineStatus engine_set_position(Engine *e, const Board *b)
{
    if (b->hist_len > ENGINE_MAX_GAME_PLIES)
        return ENGINE_ERR_VALUE;
    e->root = *b;
    return ENGINE_OK;
}
const Board *engine_position(const Engine *e) { return &e->root; }
void engine_stop(Engine *e) { atomic_store(&e->stop, true); }

void engine_new_game(Engine *e)
{
    tt_clear(&e->tt);
    for (int i = 0; i < e->threads; i++) {
        memset(e->workers[i]->history, 0, sizeof e->workers[i]->history);
        memset(e->workers[i]->cont, 0, sizeof e->workers[i]->cont);
    }
}

// ---------------------------------------------------------------------------------------
// Helpers

/// The static evaluation the search uses, centipawns for the side to move.
static inline int evaluate(SearchThread *t, const Board *b)
{
    if (!t->nnue_on)
        return eval_evaluate(b, &t->engine->weights);
    int v = nnue_stack_evaluate(t->nnue, b);
    // Debug builds check the incremental path against the full evaluation one node in 16 (a
    // wrong accumulator stays wrong, so sampling still catches it; every node made sanitizer
    // runs 4x slower now that the net is the default); test_nnue checks every position.
    assert((atomic_load_explicit(&t->nodes, memory_order_relaxed) & 15) != 0 ||
           v == nnue_evaluate_full(t->nnue->net, b));
    return v;
}

int engine_evaluate(const Engine *e, const Board *b)
{
    const NnueNet *net = active_net(e);
    return e->use_nnue && net ? nnue_evaluate_full(net, b) : eval_evaluate(b, &e->weights);
}

bool engine_uses_nnue(const Engine *e, char id[NNUE_ID_MAX])
{
    const NnueNet *net = active_net(e);
    if (!e->use_nnue || !net)
        return false;
    if (id)
        nnue_id(net, id);
    return true;
}

static inline bool stopped(const SearchThread *t)
{
    return atomic_load_explicit(&t->engine->stop, memory_order_relaxed);
}

static uint64_t total_nodes(const Engine *e)
{
    uint64_t n = 0;
    for (int i = 0; i < e->threads; i++)
        n += atomic_load_explicit(&e->workers[i]->nodes, memory_order_relaxed);
    return n;
}

/// The main thread polls the clock and the node limit; every thread polls the stop flag.
static void check_limits(SearchThread *t)
{
    if (t->slowdown > 1 && (atomic_load_explicit(&t->nodes, memory_order_relaxed) & 255) == 0)
        t->slow_ns = timeman_slow(t->slow_ns, t->slowdown);
    if (t->id != 0 || t->root_depth <= 1)
        return;
    uint64_t n = atomic_load_explicit(&t->nodes, memory_order_relaxed);
    const SearchLimits *l = t->limits;
    if (l->nodes) {
        uint64_t all = t->engine->threads == 1 ? n : ((n & 1023) == 0 ? total_nodes(t->engine) : 0);
        if (all >= l->nodes)
            engine_stop(t->engine);
    }
    if ((n & 1023) == 0 && t->budget.hard_ms && timeman_now_ms() - t->start_ms >= t->budget.hard_ms)
        engine_stop(t->engine);
}

static inline int score_to_tt(int s, int ply)
{
    return s >= VALUE_MATE_IN_MAX ? s + ply : s <= -VALUE_MATE_IN_MAX ? s - ply : s;
}

static inline int score_from_tt(int s, int ply)
{
    return s >= VALUE_MATE_IN_MAX ? s - ply : s <= -VALUE_MATE_IN_MAX ? s + ply : s;
}

static inline bool is_capture(const Board *b, Move m)
{
    return board_piece(b, move_to(m)) != NO_PIECE;
}

/// Whether a stored bound settles the node for this window.
static inline bool tt_cuts(Bound bound, int score, int alpha, int beta)
{
    return bound == BOUND_EXACT || (bound == BOUND_LOWER && score >= beta) ||
           (bound == BOUND_UPPER && score <= alpha);
}

static inline Bound bound_of(int best, int alpha_orig, int beta)
{
    return best >= beta ? BOUND_LOWER : best > alpha_orig ? BOUND_EXACT : BOUND_UPPER;
}

static void update_pv(Stack *ss, Move m)
{
    ss->pv[0] = m;
    memcpy(ss->pv + 1, (ss + 1)->pv, sizeof(Move) * (size_t)(ss + 1)->pv_len);
    ss->pv_len = (ss + 1)->pv_len + 1;
}

static inline void history_update(int16_t *h, int bonus)
{
    int v = *h + bonus - *h * abs(bonus) / 16384;
    *h = (int16_t)(v > 16000 ? 16000 : v < -16000 ? -16000 : v);
}

// ---------------------------------------------------------------------------------------
// Move ordering: score every legal move, then pick the best remaining one at a time.

enum { SCORE_TT = 1 << 30, SCORE_GOOD_CAPTURE = 1 << 28, SCORE_KILLER = 1 << 27 };

/// The picker hands out the table move, then the captures that hold by SEE, and only then
/// generates the quiet moves: a node that cuts on a capture never generates them.
typedef enum { STAGE_TT, STAGE_CAPTURES, STAGE_GOOD, STAGE_QUIETS, STAGE_REST } PickStage;

typedef struct {
    SearchThread *t;
    const Stack *ss;
    Move tt_move;
    bool captures_only;
    PickStage stage;
    int next;
    MoveList list;
    int scores[MAX_MOVES];
} Picker;

static void picker_init(Picker *p, SearchThread *t, const Stack *ss, Move tt_move,
                        bool captures_only)
{
    p->t = t;
    p->ss = ss;
    p->captures_only = captures_only;
    p->stage = STAGE_TT;
    p->next = 0;
    const Board *b = &t->board;
    // The table's move is tried before anything is generated: it often cuts at once.
    p->tt_move = tt_move != MOVE_NONE && movegen_is_legal(b, tt_move) &&
                         (!captures_only || board_piece(b, move_to(tt_move)) != NO_PIECE)
                     ? tt_move
                     : MOVE_NONE;
}

/// Captures by MVV-LVA; one that may lose material (victim worth less than the capturer)
/// is ranked after the quiet moves unless SEE shows it holds.
static int capture_score(const Board *b, Move m)
{
    int victim = see_piece_value[piece_type(board_piece(b, move_to(m)))];
    int attacker = see_piece_value[piece_type(board_piece(b, move_from(m)))];
    int mvv = victim * 8 - piece_type(board_piece(b, move_from(m)));
    bool good = victim >= attacker || see_ge(b, m, 0);
    return good ? SCORE_GOOD_CAPTURE + mvv : -SCORE_GOOD_CAPTURE + mvv;
}

/// A quiet move's ordering score: its history, plus its continuation histories after the
/// last two moves when that feature is on.
static int quiet_score(const SearchThread *t, const Stack *ss, Piece pc, Move m)
{
    int s = t->history[piece_color(pc)][move_from(m)][move_to(m)];
    if (!ss || !on(t->engine, SEARCH_CONTINUATION_HISTORY))
        return s;
    if ((ss - 1)->ch)
        s += (*(ss - 1)->ch)[pc][move_to(m)];
    if ((ss - 2)->ch)
        s += (*(ss - 2)->ch)[pc][move_to(m)];
    return s;
}

static void quiet_update(SearchThread *t, const Stack *ss, Piece pc, Move m, int bonus)
{
    history_update(&t->history[piece_color(pc)][move_from(m)][move_to(m)], bonus);
    if (!on(t->engine, SEARCH_CONTINUATION_HISTORY))
        return;
    if ((ss - 1)->ch)
        history_update(&(*(ss - 1)->ch)[pc][move_to(m)], bonus);
    if ((ss - 2)->ch)
        history_update(&(*(ss - 2)->ch)[pc][move_to(m)], bonus);
}

/// Scores the moves of gen (dropping the table move, already tried)
/// and appends them to the picker's list.
static void picker_add(Picker *p, const MoveList *gen)
{
    const Board *b = &p->t->board;
    int n = p->list.count;
    for (int i = 0; i < gen->count; i++) {
        Move m = gen->moves[i];
        if (m == p->tt_move)
            continue;
        int s;
        if (board_piece(b, move_to(m)) != NO_PIECE)
            s = capture_score(b, m);
        else if (!on(p->t->engine, SEARCH_KILLER_HISTORY))
            s = 0;
        else if (p->ss && m == p->ss->killers[0])
            s = SCORE_KILLER + 1;
        else if (p->ss && m == p->ss->killers[1])
            s = SCORE_KILLER;
        else
            s = quiet_score(p->t, p->ss, board_piece(b, move_from(m)), m);
        p->list.moves[n] = m;
        p->scores[n++] = s;
    }
    p->list.count = n;
}

/// Index of the best-scored move not yet handed out (p->next if none is left).
static int picker_best(const Picker *p)
{
    int best = p->next;
    for (int i = p->next + 1; i < p->list.count; i++)
        if (p->scores[i] > p->scores[best])
            best = i;
    return best;
}

static Move picker_take(Picker *p, int best, int *score)
{
    Move m = p->list.moves[best];
    *score = p->scores[best];
    p->list.moves[best] = p->list.moves[p->next];
    p->scores[best] = p->scores[p->next];
    p->next++;
    return m;
}

static Move picker_next(Picker *p, int *score)
{
    MoveList gen;
    int best;
    switch (p->stage) {
    case STAGE_TT:
        p->stage = STAGE_CAPTURES;
        if (p->tt_move != MOVE_NONE) {
            *score = SCORE_TT;
            return p->tt_move;
        }
        // fall through
    case STAGE_CAPTURES:
        movegen_captures(&p->t->board, &gen);
        p->list.count = 0;
        picker_add(p, &gen);
        p->stage = STAGE_GOOD;
        // fall through
    case STAGE_GOOD:
        best = picker_best(p);
        if (best < p->list.count && p->scores[best] >= SCORE_GOOD_CAPTURE)
            return picker_take(p, best, score);
        p->stage = p->captures_only ? STAGE_REST : STAGE_QUIETS;
        if (p->captures_only)
            break;
        // fall through
    case STAGE_QUIETS:
        movegen_quiets(&p->t->board, &gen);
        picker_add(p, &gen); // after the losing captures still in the list
        p->stage = STAGE_REST;
        break;
    case STAGE_REST: break;
    }
    if (p->next >= p->list.count)
        return MOVE_NONE;
    return picker_take(p, picker_best(p), score);
}

// ---------------------------------------------------------------------------------------
// Quiescence search: captures only, or every evasion when in check.

/// A quiet check (pseudo-legal, from movegen_quiet_checks) worth a quiescence search: legal
/// and not losing material.
static bool qsearch_quiet_check(const Board *b, Move m)
{
    return movegen_legal_after(b, m) && see_ge(b, m, 0);
}

/// Captures (every evasion when in check); with checks, also the quiet checks that do not
/// lose material, so that a mate by a quiet chariot, cannon or horse check is seen at the
/// horizon (only at the first quiescence ply: checks cannot then chain without end).
static int qsearch(SearchThread *t, Stack *ss, int alpha, int beta, int ply, bool checks)
{
    Board *b = &t->board;
    atomic_fetch_add_explicit(&t->nodes, 1, memory_order_relaxed);
    check_limits(t);
    if (stopped(t))
        return 0;
    if (ply > t->seldepth)
        t->seldepth = ply;
    if (ply >= MAX_PLY)
        return b->in_check ? 0 : evaluate(t, b);

    TTHit hit;
    TT *tt = &t->engine->tt;
    bool tt_hit = tt_probe(tt, b->key, &hit);
    if (tt_hit) {
        int v = score_from_tt(hit.score, ply);
        if (tt_cuts(hit.bound, v, alpha, beta))
            return v;
    }
    int best = -VALUE_INFINITE, stand = 0;
    const int alpha_orig = alpha;
    if (!b->in_check) {
        stand = tt_hit && hit.eval != 0 ? hit.eval : evaluate(t, b);
        if (stand >= beta) {
            if (!tt_hit)
                tt_store(tt, b->key, MOVE_NONE, score_to_tt(stand, ply), stand, -1, BOUND_LOWER);
            return stand;
        }
        if (stand > alpha)
            alpha = stand;
        best = stand;
    }
    Move best_move = MOVE_NONE;
    Picker p;
    picker_init(&p, t, NULL, tt_hit ? hit.move : MOVE_NONE, !b->in_check);
    int score, searched = 0;
    MoveList quiet;
    quiet.count = 0;
    bool captures_done = false;
    bool quiets_done = b->in_check || !checks || !on(t->engine, SEARCH_QUIESCENCE_CHECKS);
    for (int qi = 0;;) {
        Move m = MOVE_NONE;
        // The losing captures come last (out of check): none of them is searched.
        if (!captures_done && (m = picker_next(&p, &score)) != MOVE_NONE && !b->in_check &&
            score < SCORE_GOOD_CAPTURE)
            m = MOVE_NONE;
        captures_done = m == MOVE_NONE;
        if (m == MOVE_NONE && !quiets_done) {
            movegen_quiet_checks(b, &quiet);
            quiets_done = true;
        }
        while (m == MOVE_NONE && qi < quiet.count)
            if (qsearch_quiet_check(b, quiet.moves[qi++]))
                m = quiet.moves[qi - 1];
        if (m == MOVE_NONE)
            break;
        board_make_move(b, m);
        ss->move = m;
        int v = -qsearch(t, ss + 1, -beta, -alpha, ply + 1, false);
        board_unmake_move(b);
        searched++;
        if (stopped(t))
            return 0;
        if (v > best) {
            best = v;
            if (v > alpha) {
                best_move = m;
                alpha = v;
                if (v >= beta)
                    break;
            }
        }
    }
    if (b->in_check && searched == 0)
        return -VALUE_MATE + ply; // mated (stalemate cannot happen in check)
    Bound bound = bound_of(best, alpha_orig, beta);
    tt_store(tt, b->key, best_move, score_to_tt(best, ply), b->in_check ? 0 : stand, -1, bound);
    return best;
}

// ---------------------------------------------------------------------------------------
// Main search

static bool root_excluded(const SearchThread *t, Move m)
{
    for (int i = 0; i < t->excluded_n; i++)
        if (t->excluded[i] == m)
            return true;
    return false;
}

static int search(SearchThread *t, Stack *ss, int alpha, int beta, int depth, int ply, bool null_ok)
{
    Board *b = &t->board;
    Engine *e = t->engine;
    const int32_t *sp = e->weights.v; // the search rows (search_params.def)
    const bool pv_node = beta - alpha > 1, root = ply == 0;
    ss->pv_len = 0;

    // Step 1. Leaf: quiescence search.
    if (depth <= 0)
        return qsearch(t, ss, alpha, beta, ply, true);

    atomic_fetch_add_explicit(&t->nodes, 1, memory_order_relaxed);
    check_limits(t);
    if (stopped(t))
        return 0;
    if (ply > t->seldepth)
        t->seldepth = ply;

    // Step 2. Rules that already decide the position, mate distance pruning.
    if (!root) {
        switch (rules_search_probe(b, &e->rules, on(e, SEARCH_CHASE_RULE))) {
        case SEARCH_RULE_DRAW: return 0;
        case SEARCH_RULE_WIN: return VALUE_MATE - ply;
        case SEARCH_RULE_LOSS: return -VALUE_MATE + ply;
        default: break;
        }
        if (ply >= MAX_PLY)
            return b->in_check ? 0 : evaluate(t, b);
        alpha = alpha > -VALUE_MATE + ply ? alpha : -VALUE_MATE + ply;
        beta = beta < VALUE_MATE - ply - 1 ? beta : VALUE_MATE - ply - 1;
        if (alpha >= beta)
            return alpha;
    }

    // Step 3. Transposition table.
    TTHit hit;
    bool tt_hit = tt_probe(&e->tt, b->key, &hit);
    Move tt_move = tt_hit ? hit.move : MOVE_NONE;
    int tt_score = tt_hit ? score_from_tt(hit.score, ply) : 0;
    if (tt_hit && !pv_node && hit.depth >= depth && tt_cuts(hit.bound, tt_score, alpha, beta))
        return tt_score;

    // Step 4. Static evaluation.
    const bool in_check = b->in_check;
    int eval = in_check ? -VALUE_INFINITE : (tt_hit && hit.eval != 0 ? hit.eval : evaluate(t, b));
    ss->static_eval = eval;
    bool improving = !in_check && ply >= 2 && eval > (ss - 2)->static_eval;
    (ss + 1)->killers[0] = (ss + 1)->killers[1] = MOVE_NONE;

    if (!pv_node && !in_check) {
        // Step 5. Reverse futility pruning.
        if (on(e, SEARCH_REVERSE_FUTILITY) && depth <= sp[P_search_rfp_depth] &&
            eval - (sp[P_search_rfp_margin] - sp[P_search_rfp_improving] * improving) * depth >=
                beta &&
            abs(beta) < VALUE_MATE_IN_MAX)
            return eval;

        // Step 6. Null move, only with a chariot, horse or cannon (zugzwang is real in
        // soldier and defender endings).
        const Bitboard *own = b->pieces[b->side];
        if (on(e, SEARCH_NULL_MOVE) && null_ok && depth >= sp[P_search_nmp_depth] && eval >= beta &&
            (own[CHARIOT] | own[HORSE] | own[CANNON])) {
            int r = sp[P_search_nmp_base] + depth / sp[P_search_nmp_div] +
                    (eval - beta > sp[P_search_nmp_eval_margin]);
            board_make_null(b);
            ss->move = MOVE_NONE;
            ss->ch = NULL;
            int v = -search(t, ss + 1, -beta, -beta + 1, depth - r, ply + 1, false);
            board_unmake_null(b);
            if (stopped(t))
                return 0;
            if (v >= beta)
                return v >= VALUE_MATE_IN_MAX ? beta : v;
        }
    }

    // Step 7. No table move at a deep node: search it shallower first (internal iterative
    // reduction); its own iterations will fill the table for the deeper search.
    if (on(e, SEARCH_INTERNAL_REDUCTION) && depth >= sp[P_search_iir_depth] && tt_move == MOVE_NONE)
        depth--;

    // Step 8. The moves.
    Picker p;
    picker_init(&p, t, ss, tt_move, false);
    int best = -VALUE_INFINITE, searched = 0, score;
    Move best_move = MOVE_NONE;
    Move quiets[MAX_MOVES];
    int quiet_n = 0;
    const int alpha_orig = alpha;
    for (Move m; (m = picker_next(&p, &score)) != MOVE_NONE;) {
        if (root && root_excluded(t, m))
            continue;
        bool capture = is_capture(b, m);

        // Step 9. Pruning of late quiet moves and losing captures at low depth. A move is
        // pruned only once it is seen not to give check: quiet checks and checking
        // sacrifices of a chariot or cannon are how xiangqi games are mated.
        bool prune = false;
        if (!root && !in_check && best > -VALUE_MATE_IN_MAX && searched > 0) {
            if (!capture)
                prune = (on(e, SEARCH_LATE_MOVE_PRUNING) && depth <= sp[P_search_lmp_depth] &&
                         depth <= LMP_DEPTH_MAX && quiet_n >= e->tables.lmp[improving][depth]) ||
                        (on(e, SEARCH_FUTILITY) && depth <= sp[P_search_fut_depth] &&
                         eval + sp[P_search_fut_base] + sp[P_search_fut_margin] * depth <= alpha) ||
                        (depth <= sp[P_search_hist_prune_depth] &&
                         score < -sp[P_search_hist_prune_margin] * depth);
            else
                prune = on(e, SEARCH_SEE_PRUNING) && depth <= sp[P_search_see_depth] &&
                        score < SCORE_GOOD_CAPTURE &&
                        !see_ge(b, m, -sp[P_search_see_margin] * depth);
        }

        const bool gives_check = board_gives_check(b, m);
        if (prune && !gives_check)
            continue;
        // Only a check that does not lose material is extended: cannon and chariot checks
        // are so common in xiangqi that extending every one lets the tree explode.
        const int ext = on(e, SEARCH_CHECK_EXTENSION) && gives_check &&
                        ply < sp[P_search_ext_ply_factor] * t->root_depth &&
                        see_ge(b, m, sp[P_search_ext_see]);

        tt_prefetch(&e->tt, board_key_after(b, m));
        board_make_move(b, m);
        ss->move = m;
        ss->ch = &t->cont[board_piece(b, move_to(m))][move_to(m)];
        int new_depth = depth - 1 + ext;
        int v;

        // Step 10. Late-move reductions, then principal variation search.
        if (on(e, SEARCH_LATE_MOVE_REDUCTIONS) && depth >= sp[P_search_lmr_depth] &&
            searched >= 1 + pv_node * 2 && !capture && !gives_check) {
            int r = e->tables.reductions[depth < LMR_MAX ? depth : LMR_MAX - 1]
                                        [searched < LMR_MAX ? searched : LMR_MAX - 1];
            r -= pv_node;
            r += !improving;
            r -= quiet_score(t, ss, board_piece(b, move_to(m)), m) /
                 sp[on(e, SEARCH_CONTINUATION_HISTORY) ? P_search_lmr_hist
                                                       : P_search_lmr_hist_single];
            if (score >= SCORE_KILLER)
                r--;
            int d = new_depth - (r > 0 ? r : 0);
            if (d < 1)
                d = 1;
            v = -search(t, ss + 1, -alpha - 1, -alpha, d, ply + 1, true);
            if (v > alpha && d < new_depth)
                v = -search(t, ss + 1, -alpha - 1, -alpha, new_depth, ply + 1, true);
        } else if (!pv_node || searched > 0) {
            v = -search(t, ss + 1, -alpha - 1, -alpha, new_depth, ply + 1, true);
        } else {
            v = alpha + 1; // first move of a PV node: full window below
        }
        if (pv_node && (searched == 0 || (v > alpha && v < beta)))
            v = -search(t, ss + 1, -beta, -alpha, new_depth, ply + 1, true);
        board_unmake_move(b);
        searched++;
        if (stopped(t))
            return 0;

        if (v > best) {
            best = v;
            if (v > alpha) {
                best_move = m;
                alpha = v;
                if (pv_node)
                    update_pv(ss, m);
                if (v >= beta)
                    break;
            }
        }
        if (!capture && quiet_n < MAX_MOVES)
            quiets[quiet_n++] = m;
    }

    // Step 11. No legal move: checkmate or stalemate, both lost (rules 1 and 2).
    if (searched == 0)
        return root && t->excluded_n ? alpha : -VALUE_MATE + ply;

    // Step 12. Histories and killers for a quiet move that failed high.
    if (best >= beta && !is_capture(b, best_move)) {
        int bonus = depth * depth * sp[P_search_hist_bonus_scale] / 100;
        bonus = bonus < sp[P_search_hist_bonus_max] ? bonus : sp[P_search_hist_bonus_max];
        quiet_update(t, ss, board_piece(b, move_from(best_move)), best_move, bonus);
        for (int i = 0; i < quiet_n; i++)
            if (quiets[i] != best_move)
                quiet_update(t, ss, board_piece(b, move_from(quiets[i])), quiets[i], -bonus);
        if (ss->killers[0] != best_move) {
            ss->killers[1] = ss->killers[0];
            ss->killers[0] = best_move;
        }
    }

    Bound bound = bound_of(best, alpha_orig, beta);
    if (!(root && t->excluded_n))
        tt_store(&e->tt, b->key, best_move, score_to_tt(best, ply), in_check ? 0 : eval, depth,
                 bound);
    return best;
}

// ---------------------------------------------------------------------------------------
// Iterative deepening

typedef struct {
    Move move;
    int score;
    Bound bound;
    int pv_len;
    Move pv[MAX_PLY];
} Line;

static void report(SearchThread *t, Line *lines, int n, int depth, SearchInfoFn fn, void *ctx)
{
    if (!fn)
        return;
    Engine *e = t->engine;
    SearchInfo info;
    memset(&info, 0, offsetof(SearchInfo, pv));
    info.depth = depth;
    info.seldepth = t->seldepth;
    info.nodes = total_nodes(e);
    info.time_ms = timeman_now_ms() - t->start_ms;
    info.nps = info.time_ms > 0 ? info.nodes * 1000 / (uint64_t)info.time_ms : info.nodes * 1000;
    info.hashfull = tt_hashfull(&e->tt);
    for (int i = 0; i < n; i++) {
        info.multipv = i + 1;
        info.score = lines[i].score;
        info.bound = lines[i].bound;
        info.mate = 0;
        if (info.score >= VALUE_MATE_IN_MAX)
            info.mate = (VALUE_MATE - info.score + 1) / 2;
        else if (info.score <= -VALUE_MATE_IN_MAX)
            info.mate = -(VALUE_MATE + info.score) / 2;
        info.pv_len = lines[i].pv_len;
        memcpy(info.pv, lines[i].pv, sizeof(Move) * (size_t)lines[i].pv_len);
        fn(ctx, &info);
    }
}

/// One thread's iterative deepening. The main thread (id 0) reports and decides when to
/// stop; helpers search the same tree and share what they find through the table.
static void iterate(SearchThread *t, Line *lines, int *lines_n, int *completed, SearchInfoFn fn,
                    void *ctx)
{
    Engine *e = t->engine;
    const int32_t *sp = e->weights.v;
    const SearchLimits *l = t->limits;
    MoveList root_moves;
    int root_count = movegen_legal(&t->board, &root_moves);
    int multipv = e->multipv < root_count ? e->multipv : root_count;
    if (t->id != 0)
        multipv = 1;
    int max_depth = l->depth > 0 && l->depth < MAX_PLY - 4 ? l->depth : MAX_PLY - 4;
    Line prev[ENGINE_MAX_MULTIPV];
    int prev_n = 0;

    for (int depth = 1 + (t->id & 1); depth <= max_depth; depth++) {
        t->root_depth = depth;
        t->seldepth = 0;
        Line cur[ENGINE_MAX_MULTIPV];
        int cur_n = 0;
        t->excluded_n = 0;
        for (int pv_idx = 0; pv_idx < multipv; pv_idx++) {
            int prev_score = pv_idx < prev_n ? prev[pv_idx].score : 0;
            int delta = sp[P_search_asp_delta], alpha = -VALUE_INFINITE, beta = VALUE_INFINITE;
            if (on(e, SEARCH_ASPIRATION) && depth >= sp[P_search_asp_depth] && pv_idx < prev_n &&
                abs(prev_score) < VALUE_MATE_IN_MAX) {
                alpha = prev_score - delta;
                beta = prev_score + delta;
            }
            Stack *ss = &t->stack[2];
            int v;
            for (;;) {
                v = search(t, ss, alpha, beta, depth, 0, false);
                if (stopped(t))
                    break;
                if (v <= alpha) {
                    beta = (alpha + beta) / 2;
                    alpha = v - delta > -VALUE_INFINITE ? v - delta : -VALUE_INFINITE;
                } else if (v >= beta) {
                    beta = v + delta < VALUE_INFINITE ? v + delta : VALUE_INFINITE;
                } else {
                    break;
                }
                delta += delta * sp[P_search_asp_growth] / 100 + sp[P_search_asp_growth_add];
            }
            if (stopped(t) && depth > 1)
                break;
            if (ss->pv_len == 0)
                break; // only excluded moves were left
            Line *ln = &cur[cur_n++];
            ln->move = ss->pv[0];
            ln->score = v;
            ln->bound = BOUND_EXACT;
            ln->pv_len = ss->pv_len;
            memcpy(ln->pv, ss->pv, sizeof(Move) * (size_t)ss->pv_len);
            t->excluded[t->excluded_n++] = ln->move;
        }
        t->excluded_n = 0;
        if (cur_n < multipv && (stopped(t) && depth > 1))
            break; // incomplete iteration: keep the previous one
        memcpy(prev, cur, sizeof(Line) * (size_t)cur_n);
        prev_n = cur_n;
        if (t->id == 0) {
            memcpy(lines, cur, sizeof(Line) * (size_t)cur_n);
            *lines_n = cur_n;
            *completed = depth;
            report(t, cur, cur_n, depth, fn, ctx);
            // Stop when the next iteration would not finish in time, or a mate is found
            // within the asked distance.
            int64_t elapsed = timeman_now_ms() - t->start_ms;
            if (t->budget.soft_ms && elapsed >= t->budget.soft_ms * sp[P_tm_soft_stop] / 100)
                break;
            if (l->mate && cur[0].score >= VALUE_MATE_IN_MAX &&
                (VALUE_MATE - cur[0].score + 1) / 2 <= l->mate)
                break;
            if (root_count == 1 && !l->infinite && (t->budget.soft_ms || l->movetime))
                break; // a forced move needs no thought
        }
        if (stopped(t))
            break;
    }
}

typedef struct {
    SearchThread *t;
    Line lines[ENGINE_MAX_MULTIPV];
    int n, completed;
} HelperArgs;

static void *helper_main(void *arg)
{
    HelperArgs *h = arg;
    iterate(h->t, h->lines, &h->n, &h->completed, NULL, NULL);
    return NULL;
}

SearchResult engine_search(Engine *e, const SearchLimits *limits, SearchInfoFn info, void *ctx)
{
    SearchResult res = {MOVE_NONE, MOVE_NONE, 0, 0, 0, 0};
    int64_t start = timeman_now_ms();
    atomic_store(&e->stop, false);
    tt_new_search(&e->tt);
    tables_update(&e->tables, &e->weights);
    TimeBudget budget = timeman_budget(limits, e->root.side, e->overhead_ms, &e->weights);
    for (int i = 0; i < e->threads; i++) {
        SearchThread *t = e->workers[i];
        t->board = e->root;
        t->limits = limits;
        t->budget = budget;
        t->start_ms = start;
        t->slowdown = timeman_slowdown();
        t->slow_ns = 0; // the thread's CPU clock: read by the thread itself
        t->root_depth = 0;
        atomic_store_explicit(&t->nodes, 0, memory_order_relaxed);
        memset(t->stack, 0, sizeof t->stack);
        t->nnue_on = e->use_nnue && active_net(e) && t->nnue;
        if (t->nnue_on)
            nnue_stack_reset(t->nnue, active_net(e), e->root.hist_len);
    }
    MoveList root_moves;
    if (movegen_legal(&e->root, &root_moves) == 0) {
        res.score = -VALUE_MATE;
        return res;
    }

    HelperArgs *helpers = e->threads > 1 ? calloc((size_t)e->threads, sizeof *helpers) : NULL;
    pthread_t tid[ENGINE_MAX_THREADS];
    bool running[ENGINE_MAX_THREADS] = {false};
    for (int i = 1; helpers && i < e->threads; i++) {
        helpers[i].t = e->workers[i];
        running[i] = pthread_create(&tid[i], NULL, helper_main, &helpers[i]) == 0;
    }
    Line lines[ENGINE_MAX_MULTIPV];
    int n = 0, completed = 0;
    iterate(e->workers[0], lines, &n, &completed, info, ctx);
    // `go infinite` waits for stop even after the last depth.
    while (limits->infinite && !atomic_load(&e->stop)) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    engine_stop(e);
    for (int i = 1; i < e->threads; i++)
        if (running[i])
            pthread_join(tid[i], NULL);
    free(helpers);

    if (n > 0) {
        res.best = lines[0].move;
        res.ponder = lines[0].pv_len > 1 ? lines[0].pv[1] : MOVE_NONE;
        res.score = lines[0].score;
    } else {
        res.best = root_moves.moves[0]; // stopped before depth 1 finished: any legal move
    }
    res.depth = completed;
    res.nodes = total_nodes(e);
    res.time_ms = timeman_now_ms() - start;
    return res;
}
