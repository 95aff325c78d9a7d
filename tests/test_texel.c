// SPDX-License-Identifier: MIT
// Texel fitting: dataset files (round trip, every kind of damage named, every flipped bit
// refused), checkpoints that resume only the fit they were made from, the sparse trace
// reproducing the evaluation exactly, the gradient against finite differences, K fitting on
// data generated with a known K, a fit that lowers the loss, the L2 pull that keeps a fit on
// little data off the bounds, and a killed or stopped fit resumed to the very same weights
// and loss CSV.
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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "eval.h"
#include "fitrun.h"
#include "movegen.h"
#include "texel.h"

typedef struct {
    char path[64];
    int n;
} Fixture;

/// splitmix64, for reproducible random games and results.
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// Calls fn for every position of `games` random games from the start (after ply 4), with a
/// uniform number u in [0, 1) drawn for it: the same sequence every time, so a test can
/// replay the positions a dataset was written from.
static void random_positions(int games, void (*fn)(void *ctx, Board *b, int ply, double u),
                             void *ctx)
{
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    uint64_t rng = 7;
    for (int g = 0; g < games; g++) {
        assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
        for (int ply = 0; ply < 120; ply++) {
            MoveList l;
            if (movegen_legal(b, &l) == 0)
                break;
            board_make_move(b, l.moves[next(&rng) % (uint64_t)l.count]);
            if (ply >= 4)
                fn(ctx, b, ply, (next(&rng) >> 11) * 0x1.0p-53);
        }
    }
    free(b);
}

typedef struct {
    TexelWriter *tw;
    Weights w;
    double k;
} WriteCtx;

static void write_one(void *ctx, Board *b, int ply, double u)
{
    WriteCtx *c = ctx;
    double r;
    if (c->k > 0) {
        int e = eval_evaluate(b, &c->w) * (b->side == RED ? 1 : -1);
        r = u < 1 / (1 + pow(10, -c->k * e / 400)) ? 1 : 0;
    } else {
        r = u < 0.4 ? 1 : u < 0.6 ? 0.5 : 0;
    }
    assert_int_equal(texel_writer_add(c->tw, b, r, ply), TEXEL_OK);
}

/// Positions from random games; result for Red drawn as a coin with P = sigmoid(K e / 400)
/// (e: the default evaluation for Red) when k > 0, else win/draw/loss at random.
static int write_set(const char *path, int games, double k)
{
    WriteCtx c = {NULL, {{0}}, k};
    weights_default(&c.w);
    char why[256];
    assert_int_equal(texel_writer_open(path, &c.tw, why, sizeof why), TEXEL_OK);
    random_positions(games, write_one, &c);
    int n = (int)texel_writer_count(c.tw);
    assert_int_equal(texel_writer_close(c.tw, why, sizeof why), TEXEL_OK);
    return n;
}

/// Compares the loaded set's evaluation of every position of one shard (of `shards`) with
/// the search's evaluation of the replayed position.
typedef struct {
    const TexelSet *s;
    const Weights *w;
    uint64_t idx, local, shard, shards, limit;
} CheckCtx;

static void check_one(void *ctx, Board *b, int ply, double u)
{
    (void)ply, (void)u;
    CheckCtx *c = ctx;
    if (c->idx++ % c->shards != c->shard || c->local >= c->limit)
        return;
    int want = eval_evaluate(b, c->w) * (b->side == RED ? 1 : -1);
    assert_int_equal(texel_set_eval(c->s, c->local, c->w), want);
    c->local++;
}

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    snprintf(f->path, sizeof f->path, "/tmp/xq-test-texel-%d.xqd", (int)getpid());
    f->n = write_set(f->path, 30, 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    unlink(f->path);
    free(f);
    return 0;
}

/// Every position read back (on 3 threads, in 2 shards) gives, from its sparse trace and
/// random weights, exactly the evaluation the search computes for that position.
static void test_trace_equals_eval(void **state)
{
    Fixture *f = *state;
    // Decode the same positions independently: replay the random games.
    Weights w;
    weights_default(&w);
    uint64_t rng = 3;
    for (int i = 0; i < PARAM_NB; i++)
        w.v[i] += (int)(next(&rng) % 41) - 20;
    uint64_t total = 0, seen = 0;
    for (int shard = 0; shard < 2; shard++) {
        TexelSet *s;
        char why[256];
        assert_int_equal(texel_set_load(f->path, shard, 2, 3, &s, &total, why, sizeof why),
                         TEXEL_OK);
        assert_int_equal(total, f->n);
        seen += texel_set_size(s);
        // Replay the generator and compare the positions of this shard.
        CheckCtx c = {s, &w, 0, 0, (uint64_t)shard, 2, UINT64_MAX};
        random_positions(30, check_one, &c);
        assert_int_equal(c.local, texel_set_size(s));
        texel_set_free(s);
    }
    assert_int_equal(seen, total);
}

/// The analytic gradient agrees with central finite differences of the loss.
static void test_gradient(void **state)
{
    Fixture *f = *state;
    TexelSet *s;
    char why[256];
    assert_int_equal(texel_set_load(f->path, 0, 1, 2, &s, NULL, why, sizeof why), TEXEL_OK);
    double *w = malloc(sizeof *w * PARAM_NB), *g = malloc(sizeof *g * PARAM_NB), loss;
    Weights d;
    weights_default(&d);
    for (int i = 0; i < PARAM_NB; i++)
        w[i] = d.v[i];
    TexelExec x = {NULL, NULL, 2};
    assert_int_equal(texel_gradient(s, w, 1.1, &x, &loss, g), TEXEL_OK);
    const char *names[] = {"horse_mg", "chariot_eg",      "cannon_mg",   "soldier_eg",
                           "tempo_mg", "psq_horse_mg_c2", "horse_mob_mg"};
    int checked = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int id = params_find(names[k]);
        assert_true(id >= 0);
        double h = 0.01, keep = w[id], up, down;
        w[id] = keep + h;
        assert_int_equal(texel_loss(s, w, 1.1, &x, &up), TEXEL_OK);
        w[id] = keep - h;
        assert_int_equal(texel_loss(s, w, 1.1, &x, &down), TEXEL_OK);
        w[id] = keep;
        double fd = (up - down) / (2 * h);
        if (fabs(fd) < 1e-9)
            continue; // a weight these positions do not use
        checked++;
        if (!(fabs(fd - g[id]) <= 1e-4 * fabs(fd) + 1e-10))
            fail_msg("%s: analytic %.10g, finite difference %.10g", names[k], g[id], fd);
    }
    assert_true(checked >= 5);
    free(w);
    free(g);
    texel_set_free(s);
}

/// Results drawn with a known K = 1.3 give back K within 0.2.
static void test_fit_k(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-k-%d.xqd", (int)getpid());
    write_set(path, 150, 1.3);
    TexelSet *s;
    char why[256];
    assert_int_equal(texel_set_load(path, 0, 1, 2, &s, NULL, why, sizeof why), TEXEL_OK);
    double *w = malloc(sizeof *w * PARAM_NB), k = 0;
    Weights d;
    weights_default(&d);
    for (int i = 0; i < PARAM_NB; i++)
        w[i] = d.v[i];
    assert_int_equal(texel_fit_k(s, w, NULL, &k), TEXEL_OK);
    if (fabs(k - 1.3) > 0.2)
        fail_msg("fitted K %.3f, generated with 1.3 (%llu positions)", k,
                 (unsigned long long)texel_set_size(s));
    // A fit from detuned material lowers the loss and moves the weights back.
    Weights start = d;
    start.v[P_horse_mg] = 150;
    start.v[P_chariot_mg] = 900;
    TexelFitConfig cfg = {.epochs = 60, .lr = 5, .k = k};
    for (int i = 0; i < PARAM_NB; i++)
        cfg.tuned[i] = !params_is_psq(i);
    Weights out;
    TexelFitReport rep;
    TexelExec x = {NULL, NULL, 2};
    assert_int_equal(texel_fit(s, &cfg, &start, &x, &out, &rep, why, sizeof why), TEXEL_OK);
    assert_true(rep.loss_end < rep.loss_start);
    assert_true(out.v[P_horse_mg] > 150 && out.v[P_chariot_mg] < 900);
    free(w);
    texel_set_free(s);
    unlink(path);
}

static void patch(const char *path, long off, const void *bytes, size_t n)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, off, SEEK_SET);
    assert_int_equal(fwrite(bytes, 1, n, fp), n);
    fclose(fp);
}

/// Recomputes every block's CRC-32 after a test changed record bytes on purpose, so that the
/// checks behind the checksums are reached.
static void reseal(const char *path)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    unsigned char *buf = malloc((size_t)size);
    rewind(fp);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    uint64_t count = 0;
    memcpy(&count, buf + 16, 8); // little-endian host
    unsigned char *p = buf + TEXEL_HEADER;
    for (uint64_t first = 0; first < count; first += TEXEL_BLOCK) {
        unsigned char *block = p;
        for (uint64_t i = first; i < count && i < first + TEXEL_BLOCK; i++)
            p += TEXEL_RECORD + 4 + 4 * (size_t)(p[TEXEL_RECORD + 2] | p[TEXEL_RECORD + 3] << 8);
        uint32_t crc = (uint32_t)crc32(0, block, (uInt)(p - block));
        memcpy(p, &crc, 4);
        p += 4;
    }
    assert_true(p == buf + size);
    rewind(fp);
    assert_int_equal(fwrite(buf, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    free(buf);
}

static void expect_load(const char *path, TexelStatus want, const char *text)
{
    TexelSet *s = NULL;
    char why[256] = "";
    TexelStatus st = texel_set_load(path, 0, 1, 1, &s, NULL, why, sizeof why);
    if (st != want || !strstr(why, text))
        fail_msg("status %s '%s', expected %s '...%s...'", texel_strerror(st), why,
                 texel_strerror(want), text);
    assert_null(s);
}

/// Damaged files are refused with what is wrong: truncation, magic, header CRC, version,
/// and a record that is not a legal position (named by its number).
static void test_file_errors(void **state)
{
    (void)state;
    char path[64], cmd[160];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-e-%d.xqd", (int)getpid());
    int n = write_set(path, 2, 0);
    assert_true(n > 10);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size - 7), 0);
    expect_load(path, TEXEL_ERR_TRUNCATED, "positions need");
    write_set(path, 2, 0);
    patch(path, 0, "XQTEXEX", 7);
    expect_load(path, TEXEL_ERR_FORMAT, "bad magic");
    write_set(path, 2, 0);
    patch(path, 16, "\x09", 1); // count changed, CRC not
    expect_load(path, TEXEL_ERR_FORMAT, "CRC");
    // Version 4, and version 2 (before checksums: extract again), with a correct CRC.
    static const struct {
        unsigned char version;
        const char *text;
    } versions[] = {{4, "version 4 (this build reads 3)"},
                    {2, "version 2, from before records had checksums (this build reads 3): "
                        "extract it again"}};
    for (int v = 0; v < 2; v++) {
        write_set(path, 2, 0);
        unsigned char h[TEXEL_HEADER];
        FILE *fp = fopen(path, "rb");
        assert_int_equal(fread(h, 1, sizeof h, fp), sizeof h);
        fclose(fp);
        h[8] = versions[v].version;
        uint32_t crc = (uint32_t)crc32(0, h, 44);
        memcpy(h + 44, &crc, 4);
        patch(path, 0, h, sizeof h);
        expect_load(path, TEXEL_ERR_VERSION, versions[v].text);
    }
    // Record 1 with red generals on a0 and b0 (its stored trace is checked by decoding).
    write_set(path, 2, 0);
    unsigned char nib = 0x11;
    patch(path, TEXEL_HEADER, &nib, 1);
    reseal(path);
    expect_load(path, TEXEL_ERR_POSITION, "position 1");
    snprintf(cmd, sizeof cmd, "%s.missing", path);
    expect_load(cmd, TEXEL_ERR_IO, "No such file");
    unlink(path);
}

/// A record that is not decoded (only every 64th is) with a result, side or phase byte out
/// of range is refused by number, not fitted (found by fuzz/fuzz_texel.c).
static void test_record_bytes_checked(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-b-%d.xqd", (int)getpid());
    static const struct {
        int at;
        unsigned char value;
    } bad[] = {{46, 3}, {45, 2}, {TEXEL_RECORD, 33}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_true(write_set(path, 2, 0) > 10);
        unsigned char n[2];
        FILE *fp = fopen(path, "rb");
        fseek(fp, TEXEL_HEADER + TEXEL_RECORD + 2, SEEK_SET);
        assert_int_equal(fread(n, 1, 2, fp), 2);
        fclose(fp);
        long second = TEXEL_HEADER + TEXEL_RECORD + 4 + 4 * (long)(n[0] | n[1] << 8);
        patch(path, second + bad[i].at, &bad[i].value, 1);
        reseal(path);
        expect_load(path, TEXEL_ERR_FORMAT, "position 2: side");
    }
    unlink(path);
}

/// A stored trace that disagrees with this build's evaluation (as after an evaluation
/// change) makes the loader trace every position again: the evaluation still matches.
static void test_stale_traces(void **state)
{
    Fixture *f = *state;
    unsigned char coef[2] = {0x7f, 0x00}; // first term of position 1 becomes 127
    patch(f->path, TEXEL_HEADER + TEXEL_RECORD + 4 + 2, coef, 2);
    reseal(f->path);
    TexelSet *s;
    char why[256];
    assert_int_equal(texel_set_load(f->path, 0, 1, 2, &s, NULL, why, sizeof why), TEXEL_OK);
    Weights w;
    weights_default(&w);
    CheckCtx c = {s, &w, 0, 0, 0, 1, texel_set_size(s)};
    random_positions(1, check_one, &c); // the first game only
    texel_set_free(s);
}

/// A one-position dataset traced again on more threads than positions (threads with
/// nothing to do) loads and evaluates right (found by fuzz_texel: a copy from no buffer).
static void test_retrace_few_positions(void **state)
{
    (void)state;
    char path[64], why[256];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-1-%d.xqd", (int)getpid());
    Board *b = malloc(sizeof *b);
    assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
    TexelWriter *tw;
    assert_int_equal(texel_writer_open(path, &tw, why, sizeof why), TEXEL_OK);
    assert_int_equal(texel_writer_add(tw, b, 0.5, 0), TEXEL_OK);
    assert_int_equal(texel_writer_close(tw, why, sizeof why), TEXEL_OK);
    unsigned char coef[2] = {0x7f, 0x00}; // a stale trace: traced again
    patch(path, TEXEL_HEADER + TEXEL_RECORD + 4 + 2, coef, 2);
    reseal(path);
    TexelSet *s;
    assert_int_equal(texel_set_load(path, 0, 1, 4, &s, NULL, why, sizeof why), TEXEL_OK);
    Weights w;
    weights_default(&w);
    assert_int_equal(texel_set_eval(s, 0, &w), eval_evaluate(b, &w));
    texel_set_free(s);
    free(b);
    unlink(path);
}

/// Any single flipped bit anywhere in a dataset (header, board, side, result, ply bucket,
/// phase, term count, weight id, coefficient, a checksum; first, middle and last block) is
/// refused, never fitted; one in a record's bytes names its block's positions and bytes.
static void test_bit_flips_refused(void **state)
{
    Fixture *f = *state;
    assert_true(f->n > 3 * TEXEL_BLOCK);
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), 0);
    FILE *fp = fopen(f->path, "rb");
    unsigned char *orig = malloc((size_t)sb.st_size);
    assert_int_equal(fread(orig, 1, (size_t)sb.st_size, fp), (size_t)sb.st_size);
    fclose(fp);
    long rec = TEXEL_HEADER; // the fields of the first record, then spread over the file
    long offsets[64] = {3,        20,       40,       rec + 7,  rec + 45, rec + 46,
                        rec + 47, rec + 48, rec + 50, rec + 52, rec + 54, sb.st_size - 1};
    int n = 12;
    for (; n < 64; n++)
        offsets[n] = TEXEL_HEADER + (long)((sb.st_size - TEXEL_HEADER) * (n - 12) / 52);
    for (int i = 0; i < n; i++) {
        unsigned char byte = orig[offsets[i]] ^ (unsigned char)(1 << (i % 8));
        patch(f->path, offsets[i], &byte, 1);
        TexelSet *s = NULL;
        char why[256] = "";
        TexelStatus st = texel_set_load(f->path, 0, 1, 2, &s, NULL, why, sizeof why);
        if (st == TEXEL_OK)
            fail_msg("bit %d of byte %ld flipped: loaded", i % 8, offsets[i]);
        assert_null(s);
        patch(f->path, offsets[i], orig + offsets[i], 1);
    }
    // Position 300's ply bucket: in the second block, named with its byte range.
    long p = TEXEL_HEADER;
    for (int i = 0; i < 299; i++)
        p += TEXEL_RECORD + 4 + 4 * (orig[p + TEXEL_RECORD + 2] | orig[p + TEXEL_RECORD + 3] << 8) +
             (i % TEXEL_BLOCK == TEXEL_BLOCK - 1 ? 4 : 0);
    unsigned char byte = orig[p + 47] ^ 4;
    patch(f->path, p + 47, &byte, 1);
    expect_load(f->path, TEXEL_ERR_CHECKSUM, "positions 257..512 (bytes ");
    expect_load(f->path, TEXEL_ERR_CHECKSUM, "checksum mismatch: the file is damaged");
    free(orig);
}

typedef struct {
    char path[64];
    TexelSet *s;
    Weights start;
    TexelFitConfig cfg;
} CkptFixture;

/// A 4-epoch fit of the fixture's set with a checkpoint made from inputs {1, 2, 3, 1 rank}.
static void ckpt_fit(CkptFixture *c, TexelStatus want, TexelFitReport *rep, char *why,
                     size_t why_len)
{
    Weights out;
    TexelExec x = {NULL, NULL, 2};
    why[0] = '\0';
    TexelStatus st = texel_fit(c->s, &c->cfg, &c->start, &x, &out, rep, why, why_len);
    if (st != want)
        fail_msg("fit: %s '%s', expected %s", texel_strerror(st), why, texel_strerror(want));
}

static void ckpt_setup(CkptFixture *c, const char *data)
{
    char why[256];
    snprintf(c->path, sizeof c->path, "/tmp/xq-test-texel-%d.ckpt", (int)getpid());
    unlink(c->path);
    assert_int_equal(texel_set_load(data, 0, 1, 2, &c->s, NULL, why, sizeof why), TEXEL_OK);
    weights_default(&c->start);
    c->cfg = (TexelFitConfig){.epochs = 4, .lr = 2, .k = 1.1, .val = 0.2, .checkpoint = c->path};
    c->cfg.inputs = (TexelInputs){1, 2, 3, 1};
    for (int i = 0; i < PARAM_NB; i++)
        c->cfg.tuned[i] = !params_is_psq(i);
}

/// The completed epochs of cfg's checkpoint (0: none there), as texel_checkpoint_check says.
static int ckpt_epoch(const TexelFitConfig *cfg)
{
    bool found = false;
    int epoch = -1;
    char why[256];
    assert_int_equal(texel_checkpoint_check(cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    return epoch;
}

/// A checkpoint resumes only the fit it was made from: a changed dataset, start weights,
/// tuned set, epochs, lr, l2, K, rank count or job is refused naming the difference (on the
/// check and on the fit, which leaves the checkpoint as it was), and --fresh starts over.
static void test_checkpoint_inputs(void **state)
{
    Fixture *f = *state;
    CkptFixture c;
    ckpt_setup(&c, f->path);
    TexelFitReport rep;
    char why[512];
    bool found = true;
    int epoch = -1;
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    assert_false(found);
    ckpt_fit(&c, TEXEL_OK, &rep, why, sizeof why);
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    assert_true(found);
    ckpt_fit(&c, TEXEL_OK, &rep, why, sizeof why);
    assert_int_equal(rep.resumed_from, 4);
    static const struct {
        int field;
        const char *text;
    } changes[] = {{0, "was made from another dataset (hash 0000000000000001, now "
                       "0000000000000009)"},
                   {1, "made from other start weights (hash 0000000000000002, now "
                       "0000000000000009)"},
                   {2, "made tuning another set of weights"},
                   {3, "made for 4 epochs, now 9"},
                   {4, "made with lr 2, l2 0, k 1.1 (0: fitted), now lr 9, l2 0, k 1.1"},
                   {5, "now lr 2, l2 9, k 1.1"},
                   {6, "now lr 2, l2 0, k 9"},
                   {7, "made on 1 rank, now 9"},
                   {8, "made for another job (identity 0000000000000003, now 0000000000000009)"}};
    for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
        CkptFixture d = c;
        TexelFitConfig *g = &d.cfg;
        int k = changes[i].field;
        g->inputs.data = k == 0 ? 9 : g->inputs.data;
        g->inputs.start = k == 1 ? 9 : g->inputs.start;
        g->tuned[0] = k == 2 ? !g->tuned[0] : g->tuned[0];
        g->epochs = k == 3 ? 9 : g->epochs;
        g->lr = k == 4 ? 9 : g->lr;
        g->l2 = k == 5 ? 9 : g->l2;
        g->k = k == 6 ? 9 : g->k;
        g->inputs.ranks = k == 7 ? 9 : g->inputs.ranks;
        g->inputs.job = k == 8 ? 9 : g->inputs.job;
        assert_int_equal(texel_checkpoint_check(g, &found, &epoch, why, sizeof why),
                         TEXEL_ERR_STALE);
        if (!strstr(why, changes[i].text) || !strstr(why, c.path))
            fail_msg("change %d: '%s'", k, why);
        struct stat before, after;
        assert_int_equal(stat(c.path, &before), 0);
        ckpt_fit(&d, TEXEL_ERR_STALE, &rep, why, sizeof why);
        assert_non_null(strstr(why, changes[i].text));
        assert_int_equal(rep.epochs_done, 0);
        assert_int_equal(stat(c.path, &after), 0);
        assert_true(before.st_mtim.tv_nsec == after.st_mtim.tv_nsec &&
                    before.st_ino == after.st_ino);
    }
    // --fresh: the checkpoint is not read, and the fit starts over (and replaces it).
    c.cfg.fresh = true;
    c.cfg.inputs.data = 9;
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    assert_false(found);
    ckpt_fit(&c, TEXEL_OK, &rep, why, sizeof why);
    assert_int_equal(rep.resumed_from, 0);
    assert_int_equal(rep.epochs_done, 4);
    c.cfg.fresh = false;
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    assert_true(found);
    unlink(c.path);
    texel_set_free(c.s);
}

/// A checkpoint file of the format before inputs were recorded, of another program, or cut
/// short is refused with what it is, not resumed nor silently replaced.
static void test_checkpoint_unusable(void **state)
{
    Fixture *f = *state;
    CkptFixture c;
    ckpt_setup(&c, f->path);
    TexelFitReport rep;
    char why[512];
    bool found;
    int epoch;
    static const struct {
        const char *bytes;
        size_t len;
        const char *text;
    } files[] = {{"XQTXCKP\0\1\2\3\4\5\6\7\0", 16, "written by an older xqforge"},
                 {"hello, world\n", 13, "is not a Texel checkpoint"},
                 {"XQTXCK3\0\1\2\3", 11, "older xqforge (no validation games and no best"},
                 {"XQTXCK4\0\1\2\3", 11, "is cut short"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        FILE *fp = fopen(c.path, "wb");
        assert_int_equal(fwrite(files[i].bytes, 1, files[i].len, fp), files[i].len);
        fclose(fp);
        assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &epoch, why, sizeof why),
                         TEXEL_ERR_STALE);
        assert_non_null(strstr(why, files[i].text));
        ckpt_fit(&c, TEXEL_ERR_STALE, &rep, why, sizeof why);
        assert_non_null(strstr(why, files[i].text));
    }
    unlink(c.path);
    texel_set_free(c.s);
}

/// Rewrites len bytes at off of the file at path (a damaged or edited checkpoint).
static void poke(const char *path, long off, const void *bytes, size_t len)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, off, SEEK_SET), 0);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    fclose(fp);
}

/// The checkpoint: "XQTXCK4", the 72-byte id, u32 PARAM_NB, the state (epoch, K, start loss,
/// start validation loss, best epoch, its validation and training loss, w, m, v, the best
/// epoch's w, as doubles) and nothing after it; a file cut in its payload, of another weight count,
/// or holding an epoch outside the fit is refused saying so.
static void test_checkpoint_format(void **state)
{
    Fixture *f = *state;
    CkptFixture c;
    ckpt_setup(&c, f->path);
    TexelFitReport rep;
    char why[512];
    ckpt_fit(&c, TEXEL_OK, &rep, why, sizeof why);
    enum { ID = 72, STATE = (7 + 4 * PARAM_NB) * 8, SIZE = 8 + ID + 4 + STATE };
    struct stat sb;
    assert_int_equal(stat(c.path, &sb), 0);
    assert_int_equal(sb.st_size, SIZE);
    unsigned char head[8 + ID + 4 + 8];
    FILE *fp = fopen(c.path, "rb");
    assert_int_equal(fread(head, 1, sizeof head, fp), sizeof head);
    fclose(fp);
    assert_memory_equal(head, "XQTXCK4", 8);
    uint32_t n;
    double epoch;
    memcpy(&n, head + 8 + ID, 4);
    memcpy(&epoch, head + 8 + ID + 4, 8);
    assert_int_equal(n, PARAM_NB);
    assert_true(epoch == 4);
    assert_int_equal(ckpt_epoch(&c.cfg), 4);
    bool found;
    int at;
    n = PARAM_NB + 1;
    poke(c.path, 8 + ID, &n, 4);
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &at, why, sizeof why), TEXEL_ERR_STALE);
    char want[128];
    snprintf(want, sizeof want, "holds %d weights, this build has %d", PARAM_NB + 1, PARAM_NB);
    assert_non_null(strstr(why, want));
    n = PARAM_NB;
    poke(c.path, 8 + ID, &n, 4);
    epoch = 5; // beyond the fit's 4 epochs
    poke(c.path, 8 + ID + 4, &epoch, 8);
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &at, why, sizeof why), TEXEL_ERR_STALE);
    assert_non_null(strstr(why, "is damaged (epoch 5)"));
    assert_int_equal(truncate(c.path, SIZE - 1), 0);
    assert_int_equal(texel_checkpoint_check(&c.cfg, &found, &at, why, sizeof why), TEXEL_ERR_STALE);
    assert_non_null(strstr(why, "is cut short"));
    unlink(c.path);
    texel_set_free(c.s);
}

/// The material weights (the ones a runaway fit sends to its bounds).
static const int MATERIAL[] = {P_advisor_mg, P_advisor_eg, P_elephant_mg, P_elephant_eg,
                               P_horse_mg,   P_horse_eg,   P_chariot_mg,  P_chariot_eg,
                               P_cannon_mg,  P_cannon_eg,  P_soldier_mg,  P_soldier_eg};

/// How many material weights a fit of the non-psq weights on s ends on their bounds (and the
/// largest change of one of them in *moved) with the given L2 pull.
static int material_on_bounds(const TexelSet *s, double l2, int *moved)
{
    TexelFitConfig cfg = {.epochs = 300, .lr = 4, .l2 = l2, .k = 1.3};
    for (int i = 0; i < PARAM_NB; i++)
        cfg.tuned[i] = !params_is_psq(i);
    Weights start, out;
    weights_default(&start);
    TexelFitReport rep;
    TexelExec x = {NULL, NULL, 2};
    char why[256];
    assert_int_equal(texel_fit(s, &cfg, &start, &x, &out, &rep, why, sizeof why), TEXEL_OK);
    int n = 0;
    *moved = 0;
    for (size_t k = 0; k < sizeof MATERIAL / sizeof *MATERIAL; k++) {
        int id = MATERIAL[k], d = abs(out.v[id] - start.v[id]);
        n += out.v[id] <= params_info[id].min || out.v[id] >= params_info[id].max;
        *moved = d > *moved ? d : *moved;
    }
    return n;
}

/// On a small set whose results follow the default evaluation (so the start is the truth),
/// the default L2 pull keeps every material weight inside its range and near its start,
/// where a fit without it (the old behaviour) runs material to the table's bounds.
static void test_l2_anchors_material(void **state)
{
    (void)state;
    char path[64], why[256];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-l2-%d.xqd", (int)getpid());
    write_set(path, 30, 1.3);
    TexelSet *s;
    assert_int_equal(texel_set_load(path, 0, 1, 2, &s, NULL, why, sizeof why), TEXEL_OK);
    int moved = 0, free_bounds = material_on_bounds(s, 0, &moved);
    if (free_bounds < 1 || moved < 150)
        fail_msg("without L2, %d material weights on a bound (largest change %d): the data no "
                 "longer shows the runaway this test guards against",
                 free_bounds, moved);
    int bounds = material_on_bounds(s, TEXEL_L2_DEFAULT, &moved);
    if (bounds != 0 || moved > 50)
        fail_msg("l2 %d: %d material weights on a bound, largest change %d cp", TEXEL_L2_DEFAULT,
                 bounds, moved);
    texel_set_free(s);
    unlink(path);
}

/// The bounds check names only weights the fit moved onto a bound of their range.
static void test_at_bounds(void **state)
{
    (void)state;
    Weights start, w;
    weights_default(&start);
    w = start;
    bool tuned[PARAM_NB];
    for (int i = 0; i < PARAM_NB; i++)
        tuned[i] = true;
    int ids[PARAM_NB], base = texel_at_bounds(&w, &start, tuned, ids);
    assert_int_equal(base, 0);
    w.v[P_chariot_mg] = params_info[P_chariot_mg].max;
    w.v[P_advisor_eg] = params_info[P_advisor_eg].min;
    w.v[P_horse_mg] = params_info[P_horse_mg].min + 1;
    assert_int_equal(texel_at_bounds(&w, &start, tuned, ids), 2);
    assert_int_equal(ids[0], P_advisor_eg < P_chariot_mg ? P_advisor_eg : P_chariot_mg);
    tuned[P_chariot_mg] = false;
    assert_int_equal(texel_at_bounds(&w, &start, tuned, ids), 1);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return strdup(buf);
}

/// A fit of the fixture's set with checkpoints every 3 epochs, its loss rows into csv (the
/// file prepared as texel_fit_run does: cut back to the checkpoint when resuming).
static TexelStatus csv_fit(CkptFixture *c, const char *csv, Weights *out, TexelFitReport *rep,
                           void (*on_epoch)(void *, int, double, double, const double *))
{
    bool found = false;
    char why[256];
    int epoch = -1;
    assert_int_equal(texel_checkpoint_check(&c->cfg, &found, &epoch, why, sizeof why), TEXEL_OK);
    int kept = -1, from = epoch;
    assert_int_equal(
        fitrun_loss_open(csv, TEXEL_LOSS_HEADER, from, &c->cfg.loss_csv, &kept, why, sizeof why),
        FITRUN_OK);
    assert_int_equal(kept, from);
    c->cfg.on_epoch = on_epoch;
    TexelExec x = {NULL, NULL, 2};
    TexelStatus st = texel_fit(c->s, &c->cfg, &c->start, &x, out, rep, why, sizeof why);
    fclose(c->cfg.loss_csv);
    c->cfg.loss_csv = NULL;
    return st;
}

/// Dies like kill -9 right after the row of epoch 8 is written (the last checkpoint: 6).
static void die_at_8(void *ctx, int epoch, double loss, double val, const double *w)
{
    (void)ctx, (void)loss, (void)val, (void)w;
    if (epoch == 8)
        _exit(9);
}

static atomic_bool stop_now;

/// Asks the fit to stop (as SIGTERM does) once the row of epoch 4 is written.
static void stop_at_4(void *ctx, int epoch, double loss, double val, const double *w)
{
    (void)ctx, (void)loss, (void)val, (void)w;
    if (epoch == 4)
        atomic_store(&stop_now, true);
}

/// A fit killed after its checkpoint and resumed, or stopped by its flag and resumed, writes
/// exactly the weights and the loss CSV (rows 0..epochs, each the loss after that many steps)
/// of an uninterrupted fit: the rows after the checkpoint are cut and written again.
static void test_resume_same_csv(void **state)
{
    Fixture *f = *state;
    CkptFixture c;
    ckpt_setup(&c, f->path);
    c.cfg.epochs = 12;
    c.cfg.checkpoint_every = 3;
    char csv[96], whole[96];
    snprintf(csv, sizeof csv, "%s.csv", c.path);
    snprintf(whole, sizeof whole, "%s.whole.csv", c.path);
    Weights a, b;
    TexelFitReport rep;
    assert_int_equal(csv_fit(&c, whole, &a, &rep, NULL), TEXEL_OK);
    unlink(c.path);
    char *want = slurp(whole);
    assert_non_null(strstr(want, "epoch,loss,val\n0,"));
    assert_non_null(strstr(want, "\n12,"));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        csv_fit(&c, csv, &b, &rep, die_at_8);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 9);
    char *cut = slurp(csv);
    assert_non_null(strstr(cut, "\n8,")); // written after the checkpoint of epoch 6
    assert_int_equal(ckpt_epoch(&c.cfg), 6);
    FILE *fp = fopen(csv, "a");
    fputs("9,0.12", fp); // and a row cut short by the kill
    fclose(fp);
    assert_int_equal(csv_fit(&c, csv, &b, &rep, NULL), TEXEL_OK);
    assert_int_equal(rep.resumed_from, 6);
    char *got = slurp(csv);
    assert_string_equal(got, want);
    assert_memory_equal(&a, &b, sizeof a);
    // Stopped by the flag: a checkpoint at the epoch it stopped, then the same files again.
    unlink(c.path);
    atomic_store(&stop_now, false);
    c.cfg.stop = &stop_now;
    assert_int_equal(csv_fit(&c, csv, &b, &rep, stop_at_4), TEXEL_DRAINED);
    assert_true(rep.drained);
    assert_int_equal(ckpt_epoch(&c.cfg), 5);
    atomic_store(&stop_now, false);
    assert_int_equal(csv_fit(&c, csv, &b, &rep, NULL), TEXEL_OK);
    assert_int_equal(rep.resumed_from, 5);
    free(got);
    got = slurp(csv);
    assert_string_equal(got, want);
    assert_memory_equal(&a, &b, sizeof a);
    // A fresh fit rewrites the file (no second curve appended).
    unlink(c.path);
    assert_int_equal(csv_fit(&c, csv, &b, &rep, NULL), TEXEL_OK);
    free(got);
    got = slurp(csv);
    assert_string_equal(got, want);
    free(want);
    free(cut);
    free(got);
    unlink(csv);
    unlink(whole);
    unlink(c.path);
    texel_set_free(c.s);
}

/// Checkpoints are written at the interval (and at the end), not every epoch.
static void test_checkpoint_interval(void **state)
{
    Fixture *f = *state;
    CkptFixture c;
    ckpt_setup(&c, f->path);
    c.cfg.epochs = 7;
    c.cfg.checkpoint_every = 5;
    c.cfg.on_epoch = NULL;
    char why[256];
    Weights out;
    TexelFitReport rep;
    TexelExec x = {NULL, NULL, 1};
    c.cfg.epochs = 7;
    assert_int_equal(texel_fit(c.s, &c.cfg, &c.start, &x, &out, &rep, why, sizeof why), TEXEL_OK);
    assert_int_equal(ckpt_epoch(&c.cfg), 7); // the end
    unlink(c.path);
    c.cfg.epochs = 9;
    c.cfg.stop = NULL;
    // Killed in epoch 9 (before its end): the checkpoint holds epoch 5, the interval's.
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        c.cfg.on_epoch = die_at_8;
        texel_fit(c.s, &c.cfg, &c.start, &x, &out, &rep, why, sizeof why);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 9);
    assert_int_equal(ckpt_epoch(&c.cfg), 5);
    unlink(c.path);
    texel_set_free(c.s);
}

/// The validation loss and the weights of every row of a fit (rows 0..64).
typedef struct {
    double val[65];
    double w[65][PARAM_NB];
} Rows;

static void keep_row(void *ctx, int epoch, double loss, double val, const double *w)
{
    Rows *r = ctx;
    (void)loss;
    if (epoch <= 64) {
        r->val[epoch] = val;
        memcpy(r->w[epoch], w, sizeof r->w[epoch]);
    }
}

/// One fit of the set at path with the validation rows kept; returns the row of the lowest
/// validation loss (the first of equals) and checks that the fit wrote that row's weights.
static int best_row_fit(const char *path, double lr, double l2, int epochs, bool detune, Rows *rows,
                        TexelFitReport *rep)
{
    TexelSet *s;
    char why[256];
    assert_int_equal(texel_set_load(path, 0, 1, 2, &s, NULL, why, sizeof why), TEXEL_OK);
    Weights start, out;
    weights_default(&start);
    if (detune) // material far off: the first epochs mend it
        start.v[P_horse_mg] = 150, start.v[P_chariot_mg] = 900;
    TexelFitConfig cfg = {.epochs = epochs, .lr = lr, .l2 = l2, .k = 1.3, .val = 0.3};
    cfg.on_epoch = keep_row;
    cfg.ctx = rows;
    for (int i = 0; i < PARAM_NB; i++)
        cfg.tuned[i] = !detune && !params_is_psq(i);
    for (size_t i = 0; detune && i < sizeof MATERIAL / sizeof *MATERIAL; i++)
        cfg.tuned[MATERIAL[i]] = true;
    TexelExec x = {NULL, NULL, 2};
    assert_int_equal(texel_fit(s, &cfg, &start, &x, &out, rep, why, sizeof why), TEXEL_OK);
    int best = 0;
    for (int e = 1; e <= epochs; e++)
        if (rows->val[e] < rows->val[best])
            best = e;
    assert_int_equal(rep->best_epoch, best);
    assert_true(rep->best_val == rows->val[best]);
    for (int i = 0; i < PARAM_NB; i++)
        assert_int_equal(out.v[i], (int32_t)lround(rows->w[best][i]));
    texel_set_free(s);
    return best;
}

/// Games held out: a game's positions (a run of records whose ply bucket does not fall and whose
/// result stays) are numbered alike on every shard, and held out together. The fit writes the
/// weights of its lowest validation loss: a fit on random results only overfits and keeps the
/// start weights; a fit whose validation falls then rises keeps the epoch between.
static void test_validation_best(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/xq-test-texel-val-%d.xqd", (int)getpid());
    int n = write_set(path, 60, 1.3);
    TexelSet *all, *half;
    char why[256];
    assert_int_equal(texel_set_load(path, 0, 1, 1, &all, NULL, why, sizeof why), TEXEL_OK);
    assert_int_equal(texel_set_load(path, 1, 2, 1, &half, NULL, why, sizeof why), TEXEL_OK);
    uint32_t games = texel_set_game(all, (uint64_t)n - 1) + 1;
    assert_true(games >= 60 && games < (uint32_t)n / 4); // games found, not one per position
    int held = 0;
    for (uint64_t i = 0; i < (uint64_t)n; i++) {
        if (i > 0)
            assert_true(texel_set_game(all, i) - texel_set_game(all, i - 1) <= 1);
        if (i % 2 == 1)
            assert_int_equal(texel_set_game(half, i / 2), texel_set_game(all, i));
        held += texel_game_held(texel_set_game(all, i), 0.3);
    }
    assert_true(held > n / 10 && held < n / 2);
    texel_set_free(all);
    texel_set_free(half);
    Rows *rows = calloc(1, sizeof *rows);
    TexelFitReport rep;
    // Detuned material, a large step: validation falls, then rises (the best is epoch 7).
    int best = best_row_fit(path, 20, 0, 60, true, rows, &rep);
    assert_true(best > 0 && best < 60 && rows->val[60] > rows->val[best]);
    assert_true(rows->val[best] < rows->val[0]);
    // The start weights are the ones the results were drawn from: every weight but the
    // squares' tuned from them only fits noise, and the start weights are written.
    best = best_row_fit(path, 5, 0, 30, false, rows, &rep);
    assert_int_equal(best, 0);
    assert_int_equal(rep.best_epoch, 0);
    assert_true(rep.loss_end < rep.loss_start); // the training loss fell all the same
    free(rows);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_trace_equals_eval, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gradient, setup, teardown),
        cmocka_unit_test(test_fit_k),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_record_bytes_checked),
        cmocka_unit_test_setup_teardown(test_stale_traces, setup, teardown),
        cmocka_unit_test(test_retrace_few_positions),
        cmocka_unit_test_setup_teardown(test_bit_flips_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_unusable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_format, setup, teardown),
        cmocka_unit_test(test_l2_anchors_material),
        cmocka_unit_test(test_at_bounds),
        cmocka_unit_test_setup_teardown(test_resume_same_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpoint_interval, setup, teardown),
        cmocka_unit_test(test_validation_best),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
