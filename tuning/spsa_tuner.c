// SPDX-License-Identifier: MIT
// The coordinator's SPSA state: theta, the steps handed out and which pairs each one still
// waits for. Steps are kept until their last pair is done, since a result applies the step's
// own c_k, R_k and flips, however late it comes back.
#include "spsa_tuner.h"

#include <stdlib.h>
#include <string.h>

enum { STEP_MAGIC = 0x41535053u }; // "SPSA"

/// A step and how many of its pairs are still out: freed when none is (a step is ~20 KB).
typedef struct {
    SpsaStep *step;
    int pending; // pairs of the step not yet done
} StepSlot;

struct SpsaTuner {
    SpsaConfig cfg;
    uint64_t seed, pairs_total;
    double theta[SPSA_PARAMS_MAX];
    int64_t k;
    uint64_t next_id;
    int64_t *step_of; // per pair: step id, or -1
    StepSlot *slots;  // by step id
    uint64_t slot_cap;
    FILE *csv;
    int64_t csv_every;
    int64_t csv_last; // the iteration of the last row written (-1: none)
};

SpsaTuner *spsa_tuner_new(const SpsaConfig *cfg, uint64_t seed, uint64_t pairs_total)
{
    SpsaTuner *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    t->csv_last = -1;
    t->seed = seed;
    t->pairs_total = pairs_total;
    spsa_theta_init(cfg, t->theta);
    t->step_of = malloc(sizeof *t->step_of * (pairs_total ? pairs_total : 1));
    if (!t->step_of) {
        free(t);
        return NULL;
    }
    for (uint64_t i = 0; i < pairs_total; i++)
        t->step_of[i] = -1;
    return t;
}

void spsa_tuner_free(SpsaTuner *t)
{
    if (!t)
        return;
    for (uint64_t i = 0; i < t->slot_cap; i++)
        free(t->slots[i].step);
    free(t->slots);
    free(t->step_of);
    free(t);
}

/// Room for step id: ids are dense (0, 1, ...), so slots are an array grown by doubling.
static bool slots_reserve(SpsaTuner *t, uint64_t id)
{
    if (id < t->slot_cap)
        return true;
    uint64_t cap = t->slot_cap ? t->slot_cap : 64;
    while (cap <= id)
        cap *= 2;
    StepSlot *s = realloc(t->slots, sizeof *s * cap);
    if (!s)
        return false;
    memset(s + t->slot_cap, 0, sizeof *s * (cap - t->slot_cap));
    t->slots = s;
    t->slot_cap = cap;
    return true;
}

static void slot_release(SpsaTuner *t, uint64_t id)
{
    StepSlot *s = &t->slots[id];
    if (--s->pending <= 0) {
        free(s->step);
        s->step = NULL;
    }
}

/// Gives pairs to step id (taking each from the step that had it before): a pair whose worker
/// was lost is handed out again in a new step, and only that step's result will count.
static void assign(SpsaTuner *t, uint64_t id, const uint64_t *pairs, int n)
{
    for (int i = 0; i < n; i++) {
        if (pairs[i] >= t->pairs_total)
            continue;
        int64_t old = t->step_of[pairs[i]];
        if (old >= 0 && (uint64_t)old != id)
            slot_release(t, (uint64_t)old);
        if (old != (int64_t)id)
            t->slots[id].pending++;
        t->step_of[pairs[i]] = (int64_t)id;
    }
}

const SpsaStep *spsa_tuner_step(SpsaTuner *t, const uint64_t *pairs, int n)
{
    uint64_t id = t->next_id;
    SpsaStep *s = malloc(sizeof *s);
    if (!s || !slots_reserve(t, id)) {
        free(s);
        return NULL;
    }
    // Made from the current theta and k: the journal records the step itself (not theta),
    // so replay needs no knowledge of the order in which steps were made.
    spsa_step_make(&t->cfg, t->theta, t->k, t->seed, id, s);
    t->next_id++;
    t->slots[id] = (StepSlot){s, 0};
    assign(t, id, pairs, n);
    return s;
}

// Journal record: u32 magic, u64 id, i64 k, u32 count, u32 pairs, u64 pair[pairs], then per
// parameter i8 flip, f64 c_k, f64 r_k, i32 plus, i32 minus. Native byte order: the journal
// is read back by the same build on the same machine.
void *spsa_tuner_encode(const SpsaStep *s, const uint64_t *pairs, int n, size_t *len)
{
    size_t per = 1 + 8 + 8 + 4 + 4,
           size = 4 + 8 + 8 + 4 + 4 + 8 * (size_t)n + per * (size_t)s->count;
    unsigned char *b = malloc(size), *p = b;
    if (!b)
        return NULL;
    uint32_t magic = STEP_MAGIC, count = (uint32_t)s->count, np = (uint32_t)n;
#define PUT(x)                                                                                     \
    do {                                                                                           \
        memcpy(p, &(x), sizeof(x));                                                                \
        p += sizeof(x);                                                                            \
    } while (0)
    PUT(magic);
    PUT(s->id);
    PUT(s->k);
    PUT(count);
    PUT(np);
    for (int i = 0; i < n; i++)
        PUT(pairs[i]);
    for (int i = 0; i < s->count; i++) {
        PUT(s->flip[i]);
        PUT(s->c_k[i]);
        PUT(s->r_k[i]);
        PUT(s->plus[i]);
        PUT(s->minus[i]);
    }
#undef PUT
    *len = size;
    return b;
}

bool spsa_tuner_replay_step(SpsaTuner *t, const void *data, size_t len, char *why, size_t why_len)
{
    const unsigned char *p = data, *end = p + len;
    uint32_t magic, count, np;
    SpsaStep *s = malloc(sizeof *s);
    if (!s) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
#define GETV(x)                                                                                    \
    do {                                                                                           \
        if ((size_t)(end - p) < sizeof(x))                                                         \
            goto truncated;                                                                        \
        memcpy(&(x), p, sizeof(x));                                                                \
        p += sizeof(x);                                                                            \
    } while (0)
    GETV(magic);
    GETV(s->id);
    GETV(s->k);
    GETV(count);
    GETV(np);
    // Bounds before any allocation or index: a damaged record is refused, never trusted.
    if (magic != STEP_MAGIC || count != (uint32_t)t->cfg.count || np > (1u << 20) ||
        s->id > (1ull << 40)) {
        snprintf(why, why_len, "not a step of this job (magic %08x, %u parameters, %u pairs)",
                 (unsigned)magic, (unsigned)count, (unsigned)np);
        free(s);
        return false;
    }
    s->count = (int)count;
    if ((size_t)(end - p) < 8 * (size_t)np)
        goto truncated;
    const unsigned char *pair_bytes = p;
    p += 8 * (size_t)np;
    for (int i = 0; i < s->count; i++) {
        GETV(s->flip[i]);
        GETV(s->c_k[i]);
        GETV(s->r_k[i]);
        GETV(s->plus[i]);
        GETV(s->minus[i]);
    }
#undef GETV
    if (p != end || !slots_reserve(t, s->id))
        goto truncated;
    free(t->slots[s->id].step); // a step journaled twice: the later record wins
    t->slots[s->id] = (StepSlot){s, 0};
    for (uint32_t i = 0; i < np; i++) {
        uint64_t pair;
        memcpy(&pair, pair_bytes + 8 * i, 8);
        assign(t, s->id, &pair, 1);
    }
    uint64_t id = s->id;
    if (id >= t->next_id) // new steps after a resume never reuse a journaled id
        t->next_id = id + 1;
    if (t->slots[id].pending == 0) { // every pair was done already
        free(s);
        t->slots[id].step = NULL;
    }
    return true;
truncated:
    snprintf(why, why_len, "step record of %zu bytes is truncated or too long", len);
    free(s);
    return false;
}

bool spsa_tuner_pair_done(SpsaTuner *t, uint64_t pair, int w_minus_l)
{
    if (pair >= t->pairs_total || t->step_of[pair] < 0)
        return false;
    uint64_t id = (uint64_t)t->step_of[pair];
    const SpsaStep *s = t->slots[id].step;
    if (!s) // a pair counted already, or of an unknown step: ignored, never applied twice
        return false;
    spsa_step_apply(&t->cfg, s, w_minus_l, t->theta);
    t->k++;
    t->step_of[pair] = -1;
    slot_release(t, id);
    if (t->csv && t->csv_every > 0 && t->k % t->csv_every == 0)
        spsa_tuner_csv_row(t);
    return true;
}

const double *spsa_tuner_theta(const SpsaTuner *t) { return t->theta; }
const SpsaConfig *spsa_tuner_config(const SpsaTuner *t) { return &t->cfg; }
int64_t spsa_tuner_iterations(const SpsaTuner *t) { return t->k; }

void spsa_tuner_set_csv(SpsaTuner *t, FILE *f, int64_t every)
{
    t->csv = f;
    t->csv_every = every;
    t->csv_last = -1;
    if (!f)
        return;
    fprintf(f, "iteration");
    for (int i = 0; i < t->cfg.count; i++)
        fprintf(f, ",%s", t->cfg.params[i].name);
    fprintf(f, "\n");
    spsa_tuner_csv_row(t);
}

/// One row per iteration: the final row of a run (games_spsa_finish) is not written again when
/// the interval wrote it already.
void spsa_tuner_csv_row(SpsaTuner *t)
{
    if (!t->csv || t->k == t->csv_last)
        return;
    t->csv_last = t->k;
    fprintf(t->csv, "%lld", (long long)t->k);
    for (int i = 0; i < t->cfg.count; i++)
        fprintf(t->csv, ",%.4f", t->theta[i]);
    fprintf(t->csv, "\n");
    fflush(t->csv);
}
