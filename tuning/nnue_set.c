// SPDX-License-Identifier: MIT
// The trainer's samples: positions files (.xqp, tuning/posdata.h) read in shards, each record
// made the active features of both perspectives, and split by game into training and
// validation sets.
#include "nnue_train_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "posdata.h"
#include "why.h"

static NnueSet *set_new(bool keep_records, int version)
{
    NnueSet *s = calloc(1, sizeof *s);
    if (s) {
        s->keep_records = keep_records;
        s->version = nnue_train_version(version);
    }
    return s;
}

void nnue_set_free(NnueSet *s)
{
    if (!s)
        return;
    free(s->s);
    free(s->recs);
    free(s);
}

const uint8_t *nnue_set_record(const NnueSet *s, uint64_t i)
{
    return s->keep_records && i < s->n ? s->recs + i * POSDATA_RECORD : NULL;
}

uint64_t nnue_set_size(const NnueSet *s) { return s ? s->n : 0; }

static bool set_reserve(NnueSet *s, uint64_t more)
{
    if (s->n + more <= s->cap)
        return true;
    uint64_t cap = s->cap ? s->cap : 1024;
    while (cap < s->n + more)
        cap *= 2;
    Sample *ns = realloc(s->s, cap * sizeof *ns);
    if (!ns)
        return false;
    s->s = ns;
    if (s->keep_records) {
        uint8_t *nr = realloc(s->recs, cap * POSDATA_RECORD);
        if (!nr)
            return false;
        s->recs = nr;
    }
    s->cap = cap;
    return true;
}

/// Whether a game is held out for validation: a hash of (file, game) below the fraction. By
/// game, not by position: positions of one game are alike, and a game split between the two
/// sets would let the validation loss flatter the net.
static bool game_is_val(int file, uint32_t game, double val)
{
    uint64_t h = ((uint64_t)(uint32_t)file << 32) ^ game;
    return val > 0 && nnue_uniform(&h) < val;
}

/// Adds records (record i is the file's record first + i * stride, for the messages).
static NnueTrainStatus set_add(NnueSet *train, NnueSet *valid, const uint8_t *recs, uint64_t n,
                               uint64_t first, uint64_t stride, int file, double val, char *why,
                               size_t why_len)
{
    if (!set_reserve(train, n) || !set_reserve(valid, 0))
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    PosRecord *pr = malloc(sizeof *pr);
    if (!pr)
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    NnueTrainStatus st = NNUE_TRAIN_OK;
    for (uint64_t i = 0; i < n && st == NNUE_TRAIN_OK; i++) {
        const uint8_t *rec = recs + i * POSDATA_RECORD;
        char reason[256] = "";
        if (posdata_decode(rec, pr, reason, sizeof reason) != POSDATA_OK) {
            st = WHY_FAIL(NNUE_TRAIN_ERR_DATA, why, why_len, "record %llu: %s",
                          (unsigned long long)(first + i * stride), reason);
            break;
        }
        NnueSet *to = game_is_val(file, pr->game, val) ? valid : train;
        if (!set_reserve(to, 1)) {
            st = WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
            break;
        }
        // Both perspectives, as the engine's accumulators see them: the net reads the side to
        // move's first.
        Sample *s = &to->s[to->n];
        Color us = pr->board.side;
        s->n[0] = (uint8_t)nnue_features_version(to->version, &pr->board, us, s->f[0]);
        s->n[1] = (uint8_t)nnue_features_version(to->version, &pr->board, (Color)(us ^ 1), s->f[1]);
        double r = us == RED ? pr->red_result : 1 - pr->red_result;
        s->result = (uint8_t)lround(r * 2);
        s->score = (int16_t)(pr->score > 30000 ? 30000 : pr->score < -30000 ? -30000 : pr->score);
        // The validation set keeps the record itself: the export check decodes it to run the
        // engine's own evaluation on the board.
        if (to->keep_records)
            memcpy(to->recs + to->n * POSDATA_RECORD, rec, POSDATA_RECORD);
        to->n++;
    }
    free(pr);
    return st;
}

static NnueTrainStatus sets_new(NnueSet **train, NnueSet **valid, int version, char *why,
                                size_t why_len)
{
    if (!nnue_version_features(nnue_train_version(version)))
        return WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len, "net version %d: 1 (XQ1) or 2 (XQ2)",
                        version);
    *train = set_new(false, version);
    *valid = set_new(true, version);
    if (*train && *valid)
        return NNUE_TRAIN_OK;
    nnue_set_free(*train);
    nnue_set_free(*valid);
    *train = *valid = NULL;
    return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
}

NnueTrainStatus nnue_set_from_records(const uint8_t *recs, uint64_t n, int file, double val,
                                      int version, NnueSet **train, NnueSet **valid, char *why,
                                      size_t why_len)
{
    *train = *valid = NULL;
    NnueTrainStatus st = sets_new(train, valid, version, why, why_len);
    if (st == NNUE_TRAIN_OK)
        st = set_add(*train, *valid, recs, n, 0, 1, file, val, why, why_len);
    if (st != NNUE_TRAIN_OK) {
        nnue_set_free(*train);
        nnue_set_free(*valid);
        *train = *valid = NULL;
    }
    return st;
}

NnueTrainStatus nnue_set_load(const char *const *paths, int files, int shard, int shards,
                              double val, int version, NnueSet **train, NnueSet **valid,
                              uint64_t *total, char *why, size_t why_len)
{
    if (total)
        *total = 0;
    *train = *valid = NULL;
    NnueTrainStatus st = sets_new(train, valid, version, why, why_len);
    for (int f = 0; f < files && st == NNUE_TRAIN_OK; f++) {
        uint8_t *recs = NULL;
        uint64_t n = 0, all = 0;
        char reason[512] = "";
        PosdataStatus ps =
            posdata_read_file(paths[f], shard, shards, &recs, &n, &all, reason, sizeof reason);
        if (ps != POSDATA_OK)
            st = WHY_FAIL(ps == POSDATA_ERR_NOMEM ? NNUE_TRAIN_ERR_NOMEM : NNUE_TRAIN_ERR_DATA, why,
                          why_len, "%s", reason[0] ? reason : posdata_strerror(ps));
        if (st == NNUE_TRAIN_OK) { // the record numbered in its file, the file named
            char inner[400] = "";
            st = set_add(*train, *valid, recs, n, (uint64_t)shard, (uint64_t)shards, f, val, inner,
                         sizeof inner);
            if (st != NNUE_TRAIN_OK)
                why_set(why, why_len, "%s: %s", paths[f], inner);
        }
        if (total)
            *total += all;
        free(recs);
    }
    if (st != NNUE_TRAIN_OK) {
        nnue_set_free(*train);
        nnue_set_free(*valid);
        *train = *valid = NULL;
    }
    return st;
}
