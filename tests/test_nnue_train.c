// SPDX-License-Identifier: MIT
// The NNUE trainer: its gradient against finite differences, training lowers the loss, the
// quantized export matches the float net within the stated tolerance, a stopped and resumed
// run ends bit for bit where an uninterrupted one does, and bad settings are refused; an XQ2
// (king-bucketed) run exports a version-2 net within the same tolerance.
#include <math.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "board.h"
#include "eval.h"
#include "files.h"
#include "fitrun.h"
#include "movegen.h"
#include "nnue_run.h"
#include "params.h"
#include "posdata.h"
#include "rng.h"

enum { POSITIONS = 1200 };

static int positions = POSITIONS;

static char dir[64];
static uint8_t *recs;

/// Positions along random games, scored by the linear evaluation; the result follows the
/// score's sign, so there is something to learn.
static void make_records(void)
{
    Weights w;
    weights_default(&w);
    Board *b = malloc(sizeof *b), *flat = malloc(sizeof *flat);
    recs = malloc((size_t)positions * POSDATA_RECORD);
    assert_non_null(b);
    assert_non_null(flat);
    assert_non_null(recs);
    Rng rng;
    rng_seed(&rng, 42);
    for (int i = 0; i < positions; i++) {
        board_set_fen(b, BOARD_START_FEN, NULL, 0);
        int plies = 4 + (int)(rng_next(&rng) % 60);
        for (int p = 0; p < plies; p++) {
            MoveList ml;
            movegen_legal(b, &ml);
            if (ml.count == 0)
                break;
            board_make_move(b, ml.moves[rng_next(&rng) % (uint64_t)ml.count]);
        }
        char fen[BOARD_FEN_MAX];
        board_fen(b, fen, sizeof fen);
        board_set_fen(flat, fen, NULL, 0);
        int score = eval_evaluate(flat, &w);
        int red = flat->side == RED ? score : -score;
        double result = red > 50 ? 1 : red < -50 ? 0 : 0.5;
        posdata_encode(flat, score, move_make(3, 12), plies, 0, (uint32_t)(i / 8), result,
                       recs + (size_t)i * POSDATA_RECORD);
    }
    free(b);
    free(flat);
}

static int setup(void **state)
{
    (void)state;
    board_init();
    snprintf(dir, sizeof dir, "/tmp/test_nnue_train.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    make_records();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(recs);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void load(uint64_t n, double val, NnueSet **train, NnueSet **valid)
{
    char why[256] = "";
    assert_int_equal(nnue_set_from_records(recs, n, 0, val, 0, train, valid, why, sizeof why),
                     NNUE_TRAIN_OK);
}

static NnueTrainConfig config(int hidden, int epochs)
{
    return (NnueTrainConfig){.hidden = hidden,
                             .epochs = epochs,
                             .batch = 128,
                             .threads = 2,
                             .lr = 0.01,
                             .lambda = 0.5,
                             .val = 0.1,
                             .seed = 7};
}

/// The analytic gradient of the mean loss agrees with central differences on a tiny net, for
/// transformer columns of active features, biases and output weights.
static void test_gradient(void **state)
{
    (void)state;
    NnueSet *train, *valid;
    load(64, 0, &train, &valid);
    NnueModel m;
    assert_int_equal(nnue_model_init(&m, 32, 3), NNUE_TRAIN_OK);
    double *grad = malloc(sizeof *grad * m.size), loss = 0;
    assert_int_equal(nnue_model_loss(&m, train, 0.5, 2, &loss, grad), NNUE_TRAIN_OK);
    // Transformer columns (those of active features: a nonzero gradient), its biases and the
    // output bias; the output weights train through their grid (straight through), so a
    // finite difference does not see them.
    size_t ids[128];
    int count = 0;
    for (size_t j = 0; j < (size_t)(m.ft_b - m.p) && count < 60; j += 97)
        if (grad[j] != 0)
            ids[count++] = j;
    for (size_t j = 0; j < 32; j++)
        ids[count++] = (size_t)(m.ft_b - m.p) + j;
    ids[count++] = (size_t)(m.out_b - m.p);
    int checked = 0, good = 0;
    for (int k = 0; k < count; k++) {
        size_t j = ids[k];
        float keep = m.p[j];
        double e = 1e-2, up, down;
        m.p[j] = keep + (float)e;
        nnue_model_loss(&m, train, 0.5, 1, &up, NULL);
        m.p[j] = keep - (float)e;
        nnue_model_loss(&m, train, 0.5, 1, &down, NULL);
        m.p[j] = keep;
        double num = (up - down) / (2 * e);
        checked++;
        good += fabs(num - grad[j]) <= 0.05 * fabs(grad[j]) + 1e-6;
    }
    assert_true(checked >= 20);
    assert_true(good >= checked * 9 / 10); // a clip's kink may sit inside the step
    free(grad);
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
}

/// Training lowers the training loss well below its start, and the validation loss too.
static void test_loss_decreases(void **state)
{
    (void)state;
    NnueSet *train, *valid;
    load(POSITIONS, 0.1, &train, &valid);
    assert_true(nnue_set_size(valid) > 0);
    NnueModel m;
    assert_int_equal(nnue_model_init(&m, 32, 7), NNUE_TRAIN_OK);
    NnueTrainConfig cfg = config(32, 6);
    NnueTrainReport rep;
    char why[256] = "";
    assert_int_equal(nnue_train(&m, train, valid, &cfg, &rep, why, sizeof why), NNUE_TRAIN_OK);
    assert_int_equal(rep.epochs_done, 6);
    assert_true(rep.loss_end < 0.7 * rep.loss_start);
    assert_true(rep.val_end < rep.val_start);
    // The quantized export matches the float net within the tolerance (engine's evaluation).
    NnueNet net;
    double mean = -1, max = -1;
    NnueTrainStatus st = nnue_model_export(&m, valid, "test", &net, &mean, &max, why, sizeof why);
    if (st != NNUE_TRAIN_OK)
        print_error("%s\n", why);
    assert_int_equal(st, NNUE_TRAIN_OK);
    assert_true(mean >= 0 && mean <= NNUE_TRAIN_EXPORT_TOLERANCE);
    assert_true(max >= mean);
    char path[128], w2[256];
    snprintf(path, sizeof path, "%s/net.nnue", dir);
    assert_int_equal(nnue_save_file(&net, path), NNUE_OK);
    NnueNet back;
    assert_int_equal(nnue_load_file(&back, path, w2, sizeof w2), NNUE_OK);
    assert_int_equal(back.hash, net.hash);
    nnue_free(&back);
    nnue_free(&net);
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
}

static double epoch_val[64];

static void keep_val(void *ctx, int epoch, double train, double val)
{
    (void)ctx, (void)train;
    if (epoch < 64)
        epoch_val[epoch] = val;
}

/// A net that overfits a few positions: the validation loss falls, then rises. The model the
/// run ends with (and exports) is the epoch of the lowest validation loss, not the last; with
/// val 0 it is the last.
static void test_best_epoch_kept(void **state)
{
    (void)state;
    NnueSet *train, *valid;
    load(160, 0.4, &train, &valid);
    assert_true(nnue_set_size(valid) > 0);
    NnueModel m;
    assert_int_equal(nnue_model_init(&m, 32, 7), NNUE_TRAIN_OK);
    NnueTrainConfig cfg = config(32, 12);
    cfg.batch = 32;
    cfg.lr = 0.01;
    cfg.on_epoch = keep_val;
    NnueTrainReport rep;
    char why[256] = "";
    assert_int_equal(nnue_train(&m, train, valid, &cfg, &rep, why, sizeof why), NNUE_TRAIN_OK);
    int best = 1;
    for (int e = 2; e <= 12; e++)
        if (epoch_val[e] < epoch_val[best])
            best = e;
    print_message("val by epoch: %.5f %.5f %.5f ... %.5f; best %d\n", epoch_val[1], epoch_val[2],
                  epoch_val[3], epoch_val[12], best);
    assert_int_equal(best, 1); // the case in point: validation rises after epoch 1
    assert_int_equal(rep.best_epoch, best);
    assert_true(rep.best_val == epoch_val[best] && rep.val_end == epoch_val[best]);
    double val = 0;
    assert_int_equal(nnue_model_loss(&m, valid, cfg.lambda, 2, &val, NULL), NNUE_TRAIN_OK);
    assert_true(fabs(val - epoch_val[best]) < 1e-9); // the model is that epoch's
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
    // No validation: the last epoch.
    load(160, 0, &train, &valid);
    assert_int_equal(nnue_model_init(&m, 32, 7), NNUE_TRAIN_OK);
    cfg.val = 0;
    assert_int_equal(nnue_train(&m, train, valid, &cfg, &rep, why, sizeof why), NNUE_TRAIN_OK);
    assert_int_equal(rep.best_epoch, 12);
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
}

static atomic_bool stop_now;

/// Sets the stop flag after epoch 2's row: the run stops at its next step.
static void stop_after_two(void *ctx, int epoch, double train, double val)
{
    (void)ctx, (void)train, (void)val;
    if (epoch == 2)
        atomic_store(&stop_now, true);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
    fclose(f);
    return buf;
}

/// One run of 4 epochs writing its checkpoint and loss file; stop_at_two drains it after
/// epoch 2 and resumes it. Returns the final model.
static void run(NnueModel *m, const NnueSet *train, const NnueSet *valid, const char *name,
                bool stop_at_two)
{
    char ckpt[128], csv[128], why[256] = "";
    snprintf(ckpt, sizeof ckpt, "%s/%s.ckpt", dir, name);
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
    NnueTrainConfig cfg = config(32, 4);
    cfg.checkpoint = ckpt;
    cfg.checkpoint_steps = 3;
    cfg.stop = &stop_now;
    atomic_store(&stop_now, false);
    if (stop_at_two)
        cfg.on_epoch = stop_after_two;
    NnueTrainReport rep;
    for (int pass = 0; pass < 2; pass++) {
        bool found;
        int epoch = -1;
        assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                         NNUE_TRAIN_OK);
        assert_int_equal(found, pass == 1);
        assert_int_equal(nnue_model_init(m, 32, cfg.seed), NNUE_TRAIN_OK);
        assert_int_equal(fitrun_loss_open(csv, NNUE_TRAIN_LOSS_HEADER, found ? epoch + 1 : 0,
                                          &cfg.loss_csv, NULL, why, sizeof why),
                         FITRUN_OK);
        NnueTrainStatus st = nnue_train(m, train, valid, &cfg, &rep, why, sizeof why);
        fclose(cfg.loss_csv);
        if (st == NNUE_TRAIN_OK)
            break;
        assert_int_equal(st, NNUE_TRAIN_DRAINED);
        assert_true(stop_at_two && pass == 0);
        assert_int_equal(rep.epochs_done, 2);
        nnue_model_free(m);
        cfg.on_epoch = NULL;
        atomic_store(&stop_now, false);
    }
    assert_int_equal(rep.epochs_done, 4);
}

/// A run stopped after a checkpoint and resumed ends with the very model and loss file of an
/// uninterrupted run; a checkpoint of other settings is refused, naming the difference.
static void test_resume_exact(void **state)
{
    (void)state;
    NnueSet *train, *valid;
    load(600, 0.1, &train, &valid);
    NnueModel a, b;
    run(&a, train, valid, "a", false);
    run(&b, train, valid, "b", true);
    assert_int_equal(a.size, b.size);
    assert_memory_equal(a.p, b.p, a.size * sizeof(float));
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/a.csv", dir);
    snprintf(pb, sizeof pb, "%s/b.csv", dir);
    char *ca = slurp(pa), *cb = slurp(pb);
    assert_string_equal(ca, cb);
    assert_non_null(strstr(ca, "epoch,train,val\n0,"));
    assert_non_null(strstr(ca, "\n4,"));
    free(ca);
    free(cb);

    NnueTrainConfig cfg = config(32, 4);
    char ckpt[128], why[256] = "";
    snprintf(ckpt, sizeof ckpt, "%s/a.ckpt", dir);
    cfg.checkpoint = ckpt;
    cfg.lambda = 0.7;
    bool found;
    int epoch;
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "lambda 0.5"));
    cfg.lambda = 0.5;
    cfg.threads = 1;
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "2 threads"));
    cfg.threads = 2;
    cfg.fresh = true;
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why), NNUE_TRAIN_OK);
    assert_false(found);
    nnue_model_free(&a);
    nnue_model_free(&b);
    nnue_set_free(train);
    nnue_set_free(valid);
}

/// Reads the whole file at path into *len bytes (freed by the caller).
static unsigned char *slurp_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    unsigned char *b = malloc(*len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

static void write_bytes(const char *path, const unsigned char *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    fclose(f);
}

/// The checkpoint: "XQNNCK2", the 72-byte id, u64 parameter count, the 11 state doubles, the
/// floats p, m, v, the best epoch's p and the FNV-1a of all but the count; a flipped bit, a
/// file cut short, one of another program, or an "XQNNCK1" of before the best epoch was kept
/// is refused saying so.
static void test_checkpoint_format(void **state)
{
    (void)state;
    NnueSet *train, *valid;
    load(300, 0.1, &train, &valid);
    NnueModel m;
    run(&m, train, valid, "f", false);
    char ckpt[128], why[256] = "";
    snprintf(ckpt, sizeof ckpt, "%s/f.ckpt", dir);
    enum { ID = 72, STATE = 11 * 8 };
    size_t len, floats = m.size;
    unsigned char *b = slurp_bytes(ckpt, &len);
    assert_int_equal(len, 8 + ID + 8 + STATE + 4 * floats * 4 + 8);
    assert_memory_equal(b, "XQNNCK2", 8);
    uint64_t count, hash;
    memcpy(&count, b + 8 + ID, 8);
    assert_int_equal(count, floats);
    memcpy(&hash, b + len - 8, 8);
    uint64_t h = files_fnv(FILES_FNV_BASIS, b, 8 + ID);
    h = files_fnv(h, b + 8 + ID + 8, len - 8 - (8 + ID + 8));
    assert_true(h == hash);
    NnueTrainConfig cfg = config(32, 4);
    cfg.checkpoint = ckpt;
    bool found;
    int epoch;
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why), NNUE_TRAIN_OK);
    assert_true(found);
    assert_int_equal(epoch, 4);
    b[8 + ID + 8 + STATE + 5] ^= 1; // a bit of the model
    write_bytes(ckpt, b, len);
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "is damaged (its checksum does not match)"));
    write_bytes(ckpt, b, len - 9);
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "is cut short"));
    write_bytes(ckpt, (const unsigned char *)"XQTXCK3\0", 8);
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "is not an NNUE training checkpoint"));
    write_bytes(ckpt, (const unsigned char *)"XQNNCK1\0", 8);
    assert_int_equal(nnue_checkpoint_check(&cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "no record of its best validation epoch"));
    free(b);
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
}

/// Settings out of range are refused with their name; a damaged record is refused by index.
static void test_bad_settings(void **state)
{
    (void)state;
    char why[256];
    NnueTrainConfig ok = config(32, 1), cfg;
    assert_int_equal(nnue_train_check(&ok, why, sizeof why), NNUE_TRAIN_OK);
    cfg = ok, cfg.hidden = 48;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    assert_non_null(strstr(why, "hidden 48"));
    cfg = ok, cfg.lambda = 1.5;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    cfg = ok, cfg.batch = 0;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    cfg = ok, cfg.val = 1;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    cfg = ok, cfg.lr = 0;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    NnueModel m;
    assert_int_equal(nnue_model_init(&m, 40, 1), NNUE_TRAIN_ERR_CONFIG);
    uint8_t bad[2 * POSDATA_RECORD];
    memcpy(bad, recs, sizeof bad);
    memset(bad + POSDATA_RECORD, 0x77, 45); // no generals: not a position
    NnueSet *train = NULL, *valid = NULL;
    assert_int_equal(nnue_set_from_records(bad, 2, 0, 0, 0, &train, &valid, why, sizeof why),
                     NNUE_TRAIN_ERR_DATA);
    assert_non_null(strstr(why, "record 1"));
    assert_null(train);
}

/// A whole run from a positions file writes the net (which the engine loads), the loss CSV
/// and the checkpoint; a file that is not a positions file is refused as bad data.
static void test_run(void **state)
{
    (void)state;
    char data[128], out[128], why[512] = "";
    snprintf(data, sizeof data, "%s/run.xqp", dir);
    snprintf(out, sizeof out, "%s/run", dir);
    assert_int_equal(mkdir(out, 0755), 0);
    PosWriter *w;
    assert_int_equal(posdata_writer_open(data, false, &w, why, sizeof why), POSDATA_OK);
    for (int i = 0; i < 400; i++)
        assert_int_equal(posdata_writer_add(w, recs + (size_t)i * POSDATA_RECORD), POSDATA_OK);
    assert_int_equal(posdata_writer_close(w, why, sizeof why), POSDATA_OK);
    NnueTrainRun run = {.files = 1, .dir = out, .description = "unit", .ranks = 1};
    run.data[0] = data;
    run.cfg = config(32, 2);
    NnueRunResult *res = calloc(1, sizeof *res);
    assert_non_null(res);
    assert_int_equal(nnue_train_run(&run, res, why, sizeof why), NNUE_TRAIN_OK);
    assert_int_equal(res->total, 400);
    assert_int_equal(res->train_n + res->val_n, 400);
    assert_true(res->quant_mean_cp <= NNUE_TRAIN_EXPORT_TOLERANCE);
    NnueNet net;
    assert_int_equal(nnue_load_file(&net, res->net_path, why, sizeof why), NNUE_OK);
    nnue_free(&net);
    char ckpt[160];
    snprintf(ckpt, sizeof ckpt, "%s/train.ckpt", out);
    assert_int_equal(access(ckpt, R_OK), 0);
    assert_int_equal(access(res->loss_path, R_OK), 0);
    run.data[0] = ckpt; // not a positions file
    assert_int_equal(nnue_train_run(&run, res, why, sizeof why), NNUE_TRAIN_ERR_DATA);
    free(res);
}

/// A tiny XQ2 run (400 positions, 2 epochs) lowers the loss and exports a version-2 net that
/// the engine loads, its quantized evaluation within the tolerance of the float net's; its
/// checkpoint is refused by an XQ1 run of the same settings, and a model or positions of the
/// other version are refused by the trainer.
static void test_xq2_run(void **state)
{
    (void)state;
    char data[128], out[128], why[512] = "";
    snprintf(data, sizeof data, "%s/run2.xqp", dir);
    snprintf(out, sizeof out, "%s/run2", dir);
    assert_int_equal(mkdir(out, 0755), 0);
    PosWriter *w;
    assert_int_equal(posdata_writer_open(data, false, &w, why, sizeof why), POSDATA_OK);
    for (int i = 0; i < 400; i++)
        assert_int_equal(posdata_writer_add(w, recs + (size_t)i * POSDATA_RECORD), POSDATA_OK);
    assert_int_equal(posdata_writer_close(w, why, sizeof why), POSDATA_OK);
    NnueTrainRun run = {.files = 1, .dir = out, .description = "unit xq2", .ranks = 1};
    run.data[0] = data;
    run.cfg = config(32, 2);
    run.cfg.version = NNUE_VERSION_XQ2;
    NnueRunResult *res = calloc(1, sizeof *res);
    assert_non_null(res);
    if (nnue_train_run(&run, res, why, sizeof why) != NNUE_TRAIN_OK)
        fail_msg("%s", why);
    assert_true(res->val_n > 0);
    assert_true(res->train.loss_end < res->train.loss_start);
    assert_true(res->quant_mean_cp <= NNUE_TRAIN_EXPORT_TOLERANCE);
    NnueNet net;
    assert_int_equal(nnue_load_file(&net, res->net_path, why, sizeof why), NNUE_OK);
    assert_int_equal(net.version, NNUE_VERSION_XQ2);
    assert_int_equal(net.features, NNUE_FEATURES_XQ2);
    nnue_free(&net);
    // The checkpoint names the version it was made for.
    run.cfg.version = 0;
    bool found = true;
    int epoch = 0;
    char ckpt[160];
    snprintf(ckpt, sizeof ckpt, "%s/train.ckpt", out);
    run.cfg.checkpoint = ckpt;
    run.cfg.inputs.ranks = 1;
    assert_int_equal(nnue_checkpoint_check(&run.cfg, &found, &epoch, why, sizeof why),
                     NNUE_TRAIN_ERR_STALE);
    assert_non_null(strstr(why, "XQ2 net, now XQ1"));
    // An XQ1 model with XQ2 positions, and an unknown version, are refused.
    NnueSet *train, *valid;
    assert_int_equal(
        nnue_set_from_records(recs, 64, 0, 0, NNUE_VERSION_XQ2, &train, &valid, why, sizeof why),
        NNUE_TRAIN_OK);
    NnueModel m;
    assert_int_equal(nnue_model_init(&m, 32, 1), NNUE_TRAIN_OK);
    NnueTrainConfig cfg = config(32, 1);
    NnueTrainReport rep;
    assert_int_equal(nnue_train(&m, train, valid, &cfg, &rep, why, sizeof why),
                     NNUE_TRAIN_ERR_CONFIG);
    assert_non_null(strstr(why, "XQ1"));
    nnue_model_free(&m);
    nnue_set_free(train);
    nnue_set_free(valid);
    cfg.version = 3;
    assert_int_equal(nnue_train_check(&cfg, why, sizeof why), NNUE_TRAIN_ERR_CONFIG);
    assert_non_null(strstr(why, "version 3"));
    assert_int_equal(nnue_model_init_version(&m, 3, 32, 1), NNUE_TRAIN_ERR_CONFIG);
    free(res);
}

/// The rows no training position reaches: their number is the one the log gives (counted
/// here from the records' own features), they are exactly the initial model's after training,
/// and every row a position reaches has moved.
static void test_unreached_rows(void **state)
{
    (void)state;
    enum { N = 300 };
    char why[512] = "";
    static bool seen[NNUE_FEATURES_XQ2];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < N; i++) {
        PosRecord r;
        assert_int_equal(posdata_decode(recs + (size_t)i * POSDATA_RECORD, &r, why, sizeof why),
                         POSDATA_OK);
        uint16_t f[64];
        for (int c = 0; c < 2; c++)
            for (int k = nnue_features_version(NNUE_VERSION_XQ2, &r.board, (Color)c, f); k-- > 0;)
                seen[f[k]] = true;
    }
    int reached = 0;
    for (int i = 0; i < NNUE_FEATURES_XQ2; i++)
        reached += seen[i];
    assert_true(reached > 100 && reached < NNUE_FEATURES_XQ2 / 2);
    NnueSet *train, *valid;
    assert_int_equal(
        nnue_set_from_records(recs, N, 0, 0, NNUE_VERSION_XQ2, &train, &valid, why, sizeof why),
        NNUE_TRAIN_OK);
    NnueModel m, init;
    assert_int_equal(nnue_model_init_version(&m, NNUE_VERSION_XQ2, 32, 5), NNUE_TRAIN_OK);
    assert_int_equal(nnue_model_init_version(&init, NNUE_VERSION_XQ2, 32, 5), NNUE_TRAIN_OK);
    NnueTrainConfig cfg = config(32, 2);
    cfg.version = NNUE_VERSION_XQ2;
    cfg.val = 0;
    char *log = NULL;
    size_t len = 0;
    cfg.log = open_memstream(&log, &len);
    NnueTrainReport rep;
    assert_int_equal(nnue_train(&m, train, valid, &cfg, &rep, why, sizeof why), NNUE_TRAIN_OK);
    fclose(cfg.log);
    char want[96];
    snprintf(want, sizeof want, "Input rows reached by the training positions: %d of %d\n", reached,
             NNUE_FEATURES_XQ2);
    if (!strstr(log, want))
        fail_msg("the log does not say '%s': %s", want, log);
    for (int i = 0; i < NNUE_FEATURES_XQ2; i++) {
        bool same =
            !memcmp(m.ft_w + (size_t)i * 32, init.ft_w + (size_t)i * 32, 32 * sizeof(float));
        if (same == seen[i])
            fail_msg("row %d: %s", i,
                     seen[i] ? "reached but unchanged" : "not reached but changed");
    }
    free(log);
    nnue_model_free(&m);
    nnue_model_free(&init);
    nnue_set_free(train);
    nnue_set_free(valid);
}

/// `test_nnue_train --write N FILE`: N such positions as a positions file (for
/// nnue_train_run.sh).
static int write_file(const char *count, const char *path)
{
    positions = atoi(count);
    if (positions < 1 || positions > 10000000)
        return 2;
    board_init();
    make_records();
    PosWriter *w;
    char why[256];
    if (posdata_writer_open(path, false, &w, why, sizeof why) != POSDATA_OK)
        return 1;
    for (int i = 0; i < positions; i++)
        posdata_writer_add(w, recs + (size_t)i * POSDATA_RECORD);
    free(recs);
    return posdata_writer_close(w, why, sizeof why) == POSDATA_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--write"))
        return write_file(argv[2], argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradient),
        cmocka_unit_test(test_loss_decreases),
        cmocka_unit_test(test_resume_exact),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_checkpoint_format),
        cmocka_unit_test(test_best_epoch_kept),
        cmocka_unit_test(test_xq2_run),
        cmocka_unit_test(test_unreached_rows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
