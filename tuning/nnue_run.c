// SPDX-License-Identifier: MIT
#include "nnue_run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "fitrun.h"
#include "posdata.h"
#include "why.h"

// ---- Export --------------------------------------------------------------------------------

/// x on the integer grid of 1 / scale, saturated to int16 (the clips of training keep the
/// weights well inside it; saturation only guards a net trained elsewhere).
static int16_t quant16(double x, double scale)
{
    double v = round(x * scale);
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
}

/// The mean and largest |quantized - float| and the mean signed difference over valid (the
/// float evaluation clamped as the engine clamps its own).
static NnueTrainStatus export_compare(const NnueModel *m, const NnueSet *valid, const NnueNet *net,
                                      double *mean_cp, double *max_cp, double *bias, char *why,
                                      size_t why_len)
{
    uint64_t n = nnue_set_size(valid);
    PosRecord *pr = malloc(sizeof *pr);
    if (!pr)
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    double sum = 0, signed_sum = 0;
    *max_cp = 0;
    NnueTrainStatus st = NNUE_TRAIN_OK;
    // The engine's own evaluation of each board, not a copy of its arithmetic: what is checked
    // is what will play.
    for (uint64_t i = 0; i < n; i++) {
        char reason[256];
        const uint8_t *rec = nnue_set_record(valid, i);
        if (!rec || posdata_decode(rec, pr, reason, sizeof reason) != POSDATA_OK) {
            st = WHY_FAIL(NNUE_TRAIN_ERR_DATA, why, why_len, "validation record %llu: %s",
                          (unsigned long long)i, reason);
            break;
        }
        double f = nnue_model_eval(m, valid, i);
        f = f > NNUE_EVAL_MAX ? NNUE_EVAL_MAX : f < -NNUE_EVAL_MAX ? -NNUE_EVAL_MAX : f;
        double d = nnue_evaluate_full(net, &pr->board) - f;
        sum += fabs(d);
        signed_sum += d;
        *max_cp = fabs(d) > *max_cp ? fabs(d) : *max_cp;
    }
    free(pr);
    *mean_cp = n ? sum / (double)n : 0;
    *bias = n ? signed_sum / (double)n : 0;
    return st;
}

NnueTrainStatus nnue_model_export(const NnueModel *m, const NnueSet *valid, const char *description,
                                  NnueNet *net, double *mean_cp, double *max_cp, char *why,
                                  size_t why_len)
{
    *mean_cp = *max_cp = 0;
    if (nnue_alloc_version(net, m->version, m->hidden) != NNUE_OK)
        return WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    size_t h = (size_t)m->hidden;
    net->qa = NNUE_QA;
    net->qb = NNUE_QB;
    net->scale = NNUE_SCALE;
    for (size_t i = 0; i < (size_t)m->features * h; i++)
        net->ft_weight[i] = quant16(m->ft_w[i], NNUE_QA);
    for (size_t i = 0; i < h; i++)
        net->ft_bias[i] = quant16(m->ft_b[i], NNUE_QA);
    for (size_t i = 0; i < 2 * h; i++)
        net->out_weight[i] = quant16(m->out_w[i], NNUE_QB);
    net->out_bias = (int32_t)lround((double)*m->out_b * NNUE_QA * NNUE_QB);
    // 12 characters: the header's bytes 48..59 (its CRC-32 takes 60..63).
    snprintf(net->description, sizeof net->description, "%.12s", description ? description : "");
    nnue_rehash(net);
    double bias = 0;
    NnueTrainStatus st = export_compare(m, valid, net, mean_cp, max_cp, &bias, why, why_len);
    // The roundings leave an offset common to all positions: the output bias takes it back
    // (one number fitted on the validation positions), then the check is made again.
    if (st == NNUE_TRAIN_OK && nnue_set_size(valid) > 0) {
        net->out_bias -= (int32_t)lround(bias * NNUE_QA * NNUE_QB / NNUE_SCALE);
        nnue_rehash(net);
        st = export_compare(m, valid, net, mean_cp, max_cp, &bias, why, why_len);
    }
    if (st == NNUE_TRAIN_OK && *mean_cp > NNUE_TRAIN_EXPORT_TOLERANCE)
        st = WHY_FAIL(
            NNUE_TRAIN_ERR_EXPORT, why, why_len,
            "the quantized net differs from the float net by %.2f cp on average (max %.1f) "
            "over %llu validation positions: above the %.1f cp tolerance",
            *mean_cp, *max_cp, (unsigned long long)nnue_set_size(valid),
            NNUE_TRAIN_EXPORT_TOLERANCE);
    return st;
}

// ---- A whole run ---------------------------------------------------------------------------

/// m's weights from the net at path (the export's quantization undone): the start of a run
/// that goes on from an earlier net. NNUE_TRAIN_ERR_CONFIG when its shape is not m's.
static NnueTrainStatus model_from_net(NnueModel *m, const char *path, char *why, size_t why_len)
{
    NnueNet net;
    char msg[256];
    memset(&net, 0, sizeof net);
    if (nnue_load_file(&net, path, msg, sizeof msg) != NNUE_OK)
        return WHY_FAIL(NNUE_TRAIN_ERR_DATA, why, why_len, "the start net %s: %s", path, msg);
    NnueTrainStatus st = NNUE_TRAIN_OK;
    if (net.hidden != m->hidden || net.scale != NNUE_SCALE || net.qa <= 0 || net.qb <= 0)
        st = WHY_FAIL(
            NNUE_TRAIN_ERR_CONFIG, why, why_len,
            "the start net %s has %d hidden units (scale %d): not this run's %d (scale %d)", path,
            net.hidden, (int)net.scale, m->hidden, NNUE_SCALE);
    else if (net.version != m->version)
        st = WHY_FAIL(NNUE_TRAIN_ERR_CONFIG, why, why_len,
                      "the start net %s is an %s net: not this run's %s", path,
                      nnue_version_name(net.version), nnue_version_name(m->version));
    size_t h = (size_t)m->hidden;
    double qa = net.qa, qb = net.qb;
    for (size_t i = 0; st == NNUE_TRAIN_OK && i < (size_t)m->features * h; i++)
        m->ft_w[i] = (float)(net.ft_weight[i] / qa);
    for (size_t i = 0; st == NNUE_TRAIN_OK && i < h; i++)
        m->ft_b[i] = (float)(net.ft_bias[i] / qa);
    for (size_t i = 0; st == NNUE_TRAIN_OK && i < 2 * h; i++)
        m->out_w[i] = (float)(net.out_weight[i] / qb);
    if (st == NNUE_TRAIN_OK)
        *m->out_b = (float)(net.out_bias / (qa * qb));
    nnue_free(&net);
    return st;
}

static bool reduce(const NnueTrainConfig *cfg, double *buf, int n)
{
    return !cfg->reduce || cfg->reduce(cfg->reduce_ctx, buf, n);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// name in dir, or name itself when it is an absolute path.
static void path_in(char *out, size_t len, const char *dir, const char *name)
{
    if (name[0] == '/')
        snprintf(out, len, "%.4000s", name);
    else
        snprintf(out, len, "%.2000s/%.2000s", dir, name);
}

/// The shards of every rank loaded, or the same failure everywhere (a rank's own reason).
static NnueTrainStatus run_load(NnueTrainRun *run, NnueSet **train, NnueSet **valid,
                                NnueRunResult *res, char *why, size_t why_len)
{
    double t0 = now_s();
    NnueTrainStatus st = nnue_set_load(run->data, run->files, run->rank, run->ranks, run->cfg.val,
                                       run->cfg.version, train, valid, &res->total, why, why_len);
    // The checkpoint's record of the data: the files' bytes, in order, so a file replaced by
    // another under the same name is refused on resume.
    uint64_t h = FILES_FNV_BASIS;
    for (int f = 0; f < run->files && st == NNUE_TRAIN_OK; f++) {
        uint64_t fh = FILES_FNV_BASIS; // files_hash continues from it
        if (!files_hash(run->data[f], &fh))
            st = WHY_FAIL(NNUE_TRAIN_ERR_DATA, why, why_len, "%s: %s", run->data[f],
                          strerror(errno));
        h = files_fnv(h, &fh, sizeof fh);
    }
    run->cfg.inputs.data = h;
    // One rank's failure fails all: the others would wait for it in the first sum forever.
    double bad = st != NNUE_TRAIN_OK;
    if (!reduce(&run->cfg, &bad, 1))
        st = NNUE_TRAIN_ERR_REDUCE;
    else if (bad > 0 && st == NNUE_TRAIN_OK)
        st = WHY_FAIL(NNUE_TRAIN_ERR_DATA, why, why_len,
                      "another rank could not load its positions");
    res->train_n = nnue_set_size(*train);
    res->val_n = nnue_set_size(*valid);
    res->load_s = now_s() - t0;
    return st;
}

/// Rank 0: the quantized net checked and written.
static NnueTrainStatus run_export(const NnueTrainRun *run, const NnueModel *m, const NnueSet *valid,
                                  NnueRunResult *res, char *why, size_t why_len)
{
    NnueNet net;
    NnueTrainStatus st = nnue_model_export(m, valid, run->description, &net, &res->quant_mean_cp,
                                           &res->quant_max_cp, why, why_len);
    if (st == NNUE_TRAIN_OK && nnue_save_file(&net, res->net_path) != NNUE_OK)
        st = WHY_FAIL(NNUE_TRAIN_ERR_IO, why, why_len, "cannot write %s: %s", res->net_path,
                      strerror(errno));
    if (st == NNUE_TRAIN_OK)
        nnue_id(&net, res->net_id);
    nnue_free(&net);
    return st;
}

NnueTrainStatus nnue_train_run(NnueTrainRun *run, NnueRunResult *res, char *why, size_t why_len)
{
    memset(res, 0, sizeof *res);
    NnueTrainConfig *cfg = &run->cfg;
    NnueTrainStatus st = nnue_train_check(cfg, why, why_len);
    if (st != NNUE_TRAIN_OK)
        return st;
    char ckpt[4200];
    path_in(ckpt, sizeof ckpt, run->dir, "train.ckpt");
    path_in(res->net_path, sizeof res->net_path, run->dir, run->net ? run->net : "net.nnue");
    path_in(res->loss_path, sizeof res->loss_path, run->dir,
            run->loss ? run->loss : "train-loss.csv");
    // Rank 0 alone keeps the checkpoint and the loss file (fitrun_resume hands its state to
    // the others), so the ranks may share a directory or not.
    cfg->checkpoint = run->rank == 0 ? ckpt : NULL;
    cfg->inputs.ranks = run->ranks;
    if (run->rank != 0)
        cfg->log = NULL;
    NnueSet *train = NULL, *valid = NULL;
    st = run_load(run, &train, &valid, res, why, why_len);
    bool found = false;
    int epoch = 0;
    if (st == NNUE_TRAIN_OK && run->rank == 0 && cfg->fresh && unlink(ckpt) != 0 && errno != ENOENT)
        st = WHY_FAIL(NNUE_TRAIN_ERR_IO, why, why_len, "cannot remove %s: %s", ckpt,
                      strerror(errno));
    // Checked before the loss file is touched: a refused checkpoint leaves every file as it was.
    if (st == NNUE_TRAIN_OK && run->rank == 0)
        st = nnue_checkpoint_check(cfg, &found, &epoch, why, why_len);
    if (st == NNUE_TRAIN_OK && run->rank == 0)
        // Rows 0..epoch stay (row 0 is the start), so the resumed run appends the same rows.
        st = fitrun_loss_open(res->loss_path, NNUE_TRAIN_LOSS_HEADER, found ? epoch + 1 : 0,
                              &cfg->loss_csv, NULL, why, why_len) == FITRUN_OK
                 ? NNUE_TRAIN_OK
                 : NNUE_TRAIN_ERR_IO;
    if (st == NNUE_TRAIN_OK && cfg->log)
        fprintf(cfg->log,
                "Loaded %llu positions (%llu training, %llu validation on rank 0) on %d rank%s in "
                "%.2f s\n",
                (unsigned long long)res->total, (unsigned long long)res->train_n,
                (unsigned long long)res->val_n, run->ranks, run->ranks == 1 ? "" : "s",
                res->load_s);
    NnueModel m = {0};
    if (st == NNUE_TRAIN_OK &&
        nnue_model_init_version(&m, cfg->version, cfg->hidden, cfg->seed) != NNUE_TRAIN_OK)
        st = WHY_FAIL(NNUE_TRAIN_ERR_NOMEM, why, why_len, "out of memory");
    if (st == NNUE_TRAIN_OK && run->init)
        st = model_from_net(&m, run->init, why, why_len);
    // Every rank reaches nnue_train (its collectives) or none: a rank 0 failure is said.
    double bad = st != NNUE_TRAIN_OK;
    if (!reduce(cfg, &bad, 1))
        st = NNUE_TRAIN_ERR_REDUCE;
    else if (bad > 0 && st == NNUE_TRAIN_OK)
        st = WHY_FAIL(NNUE_TRAIN_ERR_STALE, why, why_len, "rank 0 refused the run");
    if (st == NNUE_TRAIN_OK)
        st = nnue_train(&m, train, valid, cfg, &res->train, why, why_len);
    if (st == NNUE_TRAIN_OK && run->rank == 0)
        st = run_export(run, &m, valid, res, why, why_len);
    if (cfg->loss_csv)
        fclose(cfg->loss_csv);
    cfg->loss_csv = NULL;
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
    return st;
}
