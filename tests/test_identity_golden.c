// SPDX-License-Identifier: MIT
// The identity text of every job kind, pinned byte for byte: jobs of each kind (the job files
// of jobs/ with overrides, and small job files written here) are loaded with job_load, their
// identity is encoded and compared with tests/data/identity/NAME.txt (the files they hash:
// tests/data/identity/files/). A journal stores this text, so any change to it stops journals in
// use from resuming. What depends on the machine or the checkout is replaced before the comparison:
// an external engine's program hash by <binary>, the test data, jobs and temporary directories by
// <data>, <jobs> and <tmp>. XQ_UPDATE_GOLDEN=1 writes the golden files instead (only when the text
// is meant to change).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "identity.h"

static const uint64_t BENCH = 390621;

enum { OVERRIDES_MAX = 6, TEXT_MAX = 1 << 16 };

/// One job: a file of jobs/ or tests/data ("jobs:NAME", "data:NAME"), or the text of a job
/// file written to a temporary directory; then overrides. @DATA@ and @JOBS@ in the text and
/// the overrides stand for the two directories.
typedef struct {
    const char *name;
    const char *source;
    const char *overrides[OVERRIDES_MAX];
} GoldenCase;

static const GoldenCase CASES[] = {
    {"sprt-weights", "jobs:sprt-weights.ini", {NULL}},
    {"sprt-binaries",
     "jobs:sprt-binaries.ini",
     {"engine.new.cmd=@DATA@/fake-engines/uci.sh", "engine.base.cmd=@DATA@/fake-engines/uci.sh",
      "engine.base.option.Hash=128", "sprt.elo1=3.5"}},
    {"sprt-inline",
     "[job]\nkind = sprt\nrounds = 50\n[engine new]\noption.UseNNUE = false\n"
     "option.horse_mg = 310\n[engine base]\noption.UseNNUE = false\n[time]\nst = 0.05\n"
     "[sprt]\nelo0 = -1.5\nelo1 = 3.25\nalpha = 0.025\nbeta = 0.1\nmodel = logistic\n",
     {"sprt.beta=0.125"}},
    {"gauntlet",
     "jobs:gauntlet.ini",
     {"engine.fsf.cmd=@DATA@/fake-engines/uci.sh", "openings.start=5"}},
    {"roundrobin-data", "data:roundrobin.ini", {NULL}},
    {"roundrobin3",
     "[job]\nkind = match\nrounds = 7\ntournament = roundrobin\nrules = asian\ncounting = 50\n"
     "[engine a]\nproto = builtin\noption.Hash = 32\noption.UseNNUE = false\n"
     "[engine b]\nproto = builtin\nparams = @JOBS@/detuned.txt\noption.UseNNUE = false\n"
     "option.horse_mg = 280\n"
     "[engine c]\ncmd = @DATA@/fake-engines/uci.sh\nargs = --level 3 'two words'\n"
     "env.XQ_FAKE = 1\npassenv = USER HOME\nrlimit_cpu = 100\noption.Threads = 2\n"
     "option.EvalFile = @DATA@/identity/files/a.epd\ntc = 40/60+0.5\n"
     "[time]\ntc = 10+0.1\ntimemargin = 50\n"
     "[openings]\nfile = builtin:unbalanced\norder = random\nseed = 9\nstart = 3\n"
     "[adjudication]\ndraw = on\nresign = on\nresign_twosided = true\nmaxplies = 250\n",
     {NULL}},
    {"gauntlet4",
     "[job]\nkind = match\nrounds = 3\nrepeat = false\ntournament = gauntlet\n"
     "[engine base]\noption.UseNNUE = false\n"
     "[engine w1]\noption.UseNNUE = false\noption.chariot_mg = 900\n"
     "[engine w2]\nst = 0.5\noption.UseNNUE = false\n"
     "[engine x]\ncmd = @DATA@/fake-engines/xboard.sh\nproto = xboard\ndepth = 5\n"
     "[time]\ntc = 5+0.05\nscale = bench\nreference_nps = 1000000\nnps_floor = 1000\n"
     "[openings]\nfile = @DATA@/identity/files/a.epd\n",
     {"adjudication.draw=on", "adjudication.draw_score=4"}},
    {"spsa-detuned", "jobs:spsa-detuned.ini", {NULL}},
    {"spsa-search", "jobs:spsa-search.ini", {"spsa.a_ratio=0.2", "spsa.r_end=0.004"}},
    {"spsa-data", "data:spsa.ini", {"spsa.gamma=0.2", "spsa.alpha=0.7"}},
    {"texel", "jobs:texel.ini", {"texel.data=@DATA@/identity/files/b.txt"}},
    {"texel-inline",
     "[job]\nkind = texel\n[texel]\ndata = @DATA@/identity/files/a.epd\nstart = "
     "@JOBS@/detuned.txt\n"
     "params = psq\nk = 0.7\nepochs = 5\nlr = 0.5\nl2 = 3\n",
     {NULL}},
    {"texel-all", "[job]\nkind = texel\n[texel]\ndata = @DATA@/identity/files/a.epd\n", {NULL}},
    {"book",
     "jobs:book.ini",
     {"book.seed_book=@DATA@/identity/files/a.epd", "book.existing=@DATA@/identity/files/c.txt"}},
    {"book-unbalanced", "jobs:book-unbalanced.ini", {NULL}},
    {"book-inline",
     "[job]\nkind = book\nrules = asian\n[book]\npositions = 12\nmax_candidates = 5000\n"
     "either_side = true\ntemperature = 0\nhash = 8\nunit = 3\nseed = 42\n",
     {NULL}},
    {"datagen", "jobs:datagen.ini", {NULL}},
    {"datagen-inline",
     "[job]\nkind = datagen\n[engine xq]\noption.UseNNUE = false\n[time]\nnodes = 500\n"
     "[datagen]\npositions = 5000\nrandom_plies = 4\nmin_ply = 2\nunit = 4\nmax_games = 77\n"
     "seed = 5\n",
     {NULL}},
    {"train",
     "jobs:train.ini",
     {"train.data=@DATA@/identity/files/a.epd @DATA@/identity/files/b.txt"}},
    {"train-inline",
     "[job]\nkind = train\n[train]\ndata = @DATA@/identity/files/a.epd\nhidden = 32\nepochs = 3\n"
     "batch = 64\nlr = 0.01\nlambda = 0.5\nval = 0.1\nseed = 9\n",
     {NULL}},
    // Values that need every digit of their text form, and the extremes of the ranges.
    {"sprt-precise",
     "[job]\nkind = sprt\nrounds = 100000000\n[engine new]\n[engine base]\n[time]\n"
     "nodes = 2000000000\n[sprt]\nelo0 = -0.123456789012345\nelo1 = 3.14159265358979\n"
     "alpha = 0.0123456789\nbeta = 0.0498765432101\n",
     {NULL}},
    {"spsa-precise",
     "data:spsa.ini",
     {"spsa.a_ratio=0.123456789012345", "spsa.alpha=0.60211111111111", "spsa.gamma=0.10133333333",
      "spsa.r_end=0.00212345678901"}},
    {"texel-precise",
     "[job]\nkind = texel\n[texel]\ndata = @DATA@/identity/files/c.txt\nlr = 1.23456789012345\n"
     "l2 = 0.000123456789\nk = 1.98765432109876\nepochs = 1000000\n",
     {NULL}},
    {"book-precise",
     "[job]\nkind = book\n[book]\ntemperature = 12.3456789012345\npositions = 100000000\n"
     "max_candidates = 4000000000000\nseed = 2000000000\nscore_min = -10000\n",
     {NULL}},
    {"datagen-precise",
     "[job]\nkind = datagen\n[engine xq]\n[time]\ndepth = 100\n[datagen]\n"
     "positions = 268435456\nmax_games = 536870912\nseed = 2000000000\nunit = 16\n",
     {NULL}},
    {"loop", "jobs:loop.ini", {NULL}},
    {"doe", "jobs:doe.ini", {NULL}},
    {"doe-inline",
     "[job]\nkind = doe\nrules = asian\n[doe]\nnodes = 123456\nround = 7\nalpha = "
     "0.123456789012345\nwidth = 3\nwiden = 5\ndepth = 4\nhash = 8\nplies_max = 12\n"
     "plies_min = 3\nscore_min = -20\nmargin = 15\n",
     {NULL}},
    {"train-precise",
     "[job]\nkind = train\n[train]\ndata = @DATA@/identity/files/c.txt\n"
     "lr = 0.00123456789012\nlambda = 0.123456789012345\nval = 0.0123456789012\n"
     "seed = 2000000000\nbatch = 4194304\nhidden = 4096\n",
     {NULL}},
};

enum { CASE_NB = sizeof CASES / sizeof CASES[0] };

/// s with every `from` replaced by `to`, into out.
static void replace_all(const char *s, const char *from, const char *to, char *out, size_t cap)
{
    size_t n = 0, from_len = strlen(from), to_len = strlen(to);
    while (*s && n + 1 < cap) {
        if (from_len && !strncmp(s, from, from_len) && n + to_len < cap) {
            memcpy(out + n, to, to_len);
            n += to_len;
            s += from_len;
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
}

/// @DATA@ and @JOBS@ as the directories.
static void expand(const char *s, char *out, size_t cap)
{
    char *mid = malloc(cap);
    assert_non_null(mid);
    replace_all(s, "@DATA@", XQ_TEST_DATA, mid, cap);
    replace_all(mid, "@JOBS@", XQ_JOBS_DIR, out, cap);
    free(mid);
}

/// The directories in an identity text as placeholders (the longest first).
static void placeholders(const char *s, const char *tmp, char *out, size_t cap)
{
    char *a = malloc(cap), *b = malloc(cap);
    assert_non_null(a);
    assert_non_null(b);
    replace_all(s, XQ_TEST_DATA, "<data>", a, cap);
    replace_all(a, XQ_JOBS_DIR, "<jobs>", b, cap);
    replace_all(b, tmp, "<tmp>", out, cap);
    free(a);
    free(b);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, TEXT_MAX + 1);
    size_t n = buf ? fread(buf, 1, TEXT_MAX, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/// Loads the case's job (a temporary file for an inline one) into job.
static void load_case(const GoldenCase *gc, const char *tmp, JobConfig *job)
{
    char path[1024], *text = malloc(TEXT_MAX);
    assert_non_null(text);
    if (!strncmp(gc->source, "jobs:", 5)) {
        snprintf(path, sizeof path, "%s/%s", XQ_JOBS_DIR, gc->source + 5);
    } else if (!strncmp(gc->source, "data:", 5)) {
        snprintf(path, sizeof path, "%s/%s", XQ_TEST_DATA, gc->source + 5);
    } else {
        snprintf(path, sizeof path, "%s/%s.ini", tmp, gc->name);
        expand(gc->source, text, TEXT_MAX);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(fputs(text, f) >= 0);
        assert_int_equal(fclose(f), 0);
    }
    char over[OVERRIDES_MAX][1024];
    const char *ov[OVERRIDES_MAX];
    int n = 0;
    for (; n < OVERRIDES_MAX && gc->overrides[n]; n++) {
        expand(gc->overrides[n], over[n], sizeof over[n]);
        ov[n] = over[n];
    }
    char why[1024];
    JobStatus st = job_load(path, ov, n, job, why, sizeof why);
    if (st != JOB_OK)
        print_error("%s: %s\n", gc->name, why);
    assert_int_equal(st, JOB_OK);
    if (gc->source[0] == '[')
        unlink(path);
    free(text);
}

/// The case's identity text with the placeholders.
static char *golden_text(const JobConfig *job, const char *tmp)
{
    Identity id;
    char why[512];
    IdentityStatus st = identity_of_job(job, BENCH, &id, why, sizeof why);
    if (st != IDENTITY_OK)
        print_error("identity_of_job: %s (%s)\n", identity_strerror(st), why);
    assert_int_equal(st, IDENTITY_OK);
    for (int i = 0; i < id.count; i++) {
        size_t n = strlen(id.items[i].key);
        if (n >= 7 && !strcmp(id.items[i].key + n - 7, ".binary")) {
            free(id.items[i].value);
            id.items[i].value = strdup("<binary>");
            assert_non_null(id.items[i].value);
        }
    }
    size_t len = identity_encode(&id, NULL, 0);
    char *raw = malloc(len + 1), *out = malloc(TEXT_MAX);
    assert_non_null(raw);
    assert_non_null(out);
    identity_encode(&id, raw, len + 1);
    placeholders(raw, tmp, out, TEXT_MAX);
    free(raw);
    identity_destroy(&id);
    return out;
}

/// Every case's identity text equals its golden file byte for byte, and the cases cover every
/// job kind.
static void test_golden_identities(void **state)
{
    (void)state;
    char tmp[64] = "/tmp/xqgolden-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    JobConfig *job = malloc(sizeof *job);
    assert_non_null(job);
    bool seen[JOB_KIND_NB] = {false};
    bool update = getenv("XQ_UPDATE_GOLDEN") && !strcmp(getenv("XQ_UPDATE_GOLDEN"), "1");
    int mismatches = 0;
    for (int i = 0; i < CASE_NB; i++) {
        load_case(&CASES[i], tmp, job);
        seen[job->kind] = true;
        char *text = golden_text(job, tmp), path[1024];
        snprintf(path, sizeof path, "%s/identity/%s.txt", XQ_TEST_DATA, CASES[i].name);
        if (update) {
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            assert_true(fputs(text, f) >= 0);
            assert_int_equal(fclose(f), 0);
        }
        char *want = read_all(path);
        if (!want || strcmp(want, text)) {
            print_error("%s: the identity text differs from %s:\n%s\n", CASES[i].name, path, text);
            mismatches++;
        }
        free(want);
        free(text);
    }
    free(job);
    rmdir(tmp);
    assert_int_equal(mismatches, 0);
    for (int k = 0; k < JOB_KIND_NB; k++) {
        if (!seen[k])
            print_error("no golden case of kind %s\n", job_kind_name((JobKind)k));
        assert_true(seen[k]);
    }
}

/// Changes the value of row k in j: another number within the range, the other boolean,
/// another file (CONTENT: another file's bytes) or another name.
static void change_row(JobConfig *j, const JobKeyDef *k)
{
    void *p = (char *)j + k->offset;
    switch (k->type) {
    case KEY_INT: {
        int *v = p;
        *v = *v + 1 <= k->hi ? *v + 1 : *v - 1;
        break;
    }
    case KEY_I64: *(int64_t *)p += 1; break;
    case KEY_U64: *(uint64_t *)p += 1; break;
    case KEY_DBL: {
        double *v = p;
        *v = *v + 0.25 <= k->hi ? *v + 0.25 : *v / 2;
        break;
    }
    case KEY_BOOL: *(bool *)p = !*(bool *)p; break;
    case KEY_STR: {
        const char *other = XQ_TEST_DATA "/identity/files/b.txt";
        if (!strcmp(p, other))
            other = XQ_TEST_DATA "/identity/files/c.txt";
        snprintf(p, k->size, "%s", k->flags & KEY_CONTENT ? other : "another-name");
        break;
    }
    }
}

/// Each plain key of a kind's section changes the kind's identity exactly when its row says
/// it is part of the experiment (KEY_IDENTITY or KEY_COMPOSITE); the others (output names,
/// threads, checkpoints, book families) leave it as it is.
static void test_rows_in_identity(void **state)
{
    (void)state;
    static const char *const bases[] = {"sprt-inline", "spsa-data",      "texel-inline",
                                        "book-inline", "datagen-inline", "train-inline",
                                        "doe-inline"};
    char tmp[64] = "/tmp/xqgolden-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    JobConfig *job = malloc(sizeof *job), *other = malloc(sizeof *other);
    assert_non_null(job);
    assert_non_null(other);
    int n = 0, checked = 0;
    const JobKeyDef *keys = job_keys(&n);
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
        int c = 0;
        while (c < CASE_NB && strcmp(CASES[c].name, bases[b]))
            c++;
        assert_true(c < CASE_NB);
        load_case(&CASES[c], tmp, job);
        const char *section = job_kind_name(job->kind);
        char *base = golden_text(job, tmp);
        for (int i = 0; i < n; i++) {
            if (strcmp(keys[i].section, section))
                continue;
            memcpy(other, job, sizeof *other);
            change_row(other, &keys[i]);
            char *text = golden_text(other, tmp);
            bool part = keys[i].flags & (KEY_IDENTITY | KEY_COMPOSITE);
            if (part == !strcmp(base, text))
                fail_msg("[%s] %s: the identity %s", section, keys[i].name,
                         part ? "does not change" : "changes");
            free(text);
            checked++;
        }
        free(base);
    }
    assert_true(checked > 50);
    free(job);
    free(other);
    rmdir(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_identities),
        cmocka_unit_test(test_rows_in_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
