// SPDX-License-Identifier: MIT
// The training loop's record (run/loop.c: loop_record, loop_train_done) driven on real step
// result files in a temporary directory, as the loop's driver leaves them: the next step found
// from the finished ones; a generation whose gate accepted H1 promotes its net (nets/nn-<sha256
// [:12]>.nnue, best.nnue, its history.json row) and the next step plays with it; one whose gate
// accepted H0 keeps the old best.
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "engine_build.h"
#include "files.h"
#include "job_loop.h"
#include "loop.h"
#include "nnue.h"
#include "scratch.h"

typedef struct {
    char dir[64], out[96];
    JobConfig *job; // the loop: 2 generations, output.dir = out
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    scratch_make(f->dir, sizeof f->dir, "loop");
    snprintf(f->out, sizeof f->out, "%s/out", f->dir);
    assert_int_equal(files_mkdir_p(f->out), 0);
    char path[128], text[512], why[1024];
    snprintf(path, sizeof path, "%s/loop.ini", f->dir);
    snprintf(text, sizeof text,
             "[job]\nname = record\nkind = loop\n[engine e]\noption.Hash = 4\n[time]\nnodes = "
             "300\n[loop]\ngenerations = 2\nkeep = 1\ngate_nodes = 500\ngate_games = 60\n"
             "[output]\ndir = %s\n",
             f->out);
    scratch_write(path, text);
    f->job = calloc(1, sizeof *f->job);
    assert_non_null(f->job);
    JobStatus st = job_load(path, NULL, 0, f->job, why, sizeof why);
    if (st != JOB_OK)
        fail_msg("the loop job: %s", why);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    scratch_remove(f->dir);
    free(f->job);
    free(f);
    return 0;
}

/// The step's job as the driver makes it (job_loop_make), its output directory made.
static JobConfig *step_job(const Fixture *f, int gen, JobLoopStep s, const char *best)
{
    JobConfig *j = malloc(sizeof *j);
    assert_non_null(j);
    char why[1024];
    assert_true(job_loop_make(f->job, gen, s, best, j, why, sizeof why));
    assert_int_equal(files_mkdir_p(j->output.dir), 0);
    return j;
}

/// A finished step's result.json (in the step's directory).
static void write_result(const Fixture *f, int gen, JobLoopStep s, const char *json)
{
    JobConfig *j = step_job(f, gen, s, "");
    char path[JOB_TEXT_MAX + 16];
    snprintf(path, sizeof path, "%s/result.json", j->output.dir);
    scratch_write(path, json);
    free(j);
}

/// What loop_record says runs next (asserted to succeed).
static LoopNext record(const Fixture *f)
{
    LoopNext next;
    char why[1024] = "";
    if (!loop_record(f->job, &next, why, sizeof why))
        fail_msg("loop_record: %s", why);
    return next;
}

/// Generation gen's data and train steps finished: the trainer's net (a real one, its weights
/// from seed) and result.json by loop_train_done. The net's sha256 into sha.
static void data_and_train(const Fixture *f, int gen, uint64_t seed, char sha[JOB_NET_HASH_MAX])
{
    write_result(f, gen, JOB_LOOP_DATA, "{\"state\": \"complete\", \"positions\": 1000}");
    JobConfig *tr = step_job(f, gen, JOB_LOOP_TRAIN, "");
    char net_path[2 * JOB_TEXT_MAX + 8], why[1024] = "";
    snprintf(net_path, sizeof net_path, "%s/%s", tr->output.dir, tr->train.net);
    NnueNet net;
    assert_int_equal(nnue_alloc(&net, 32), NNUE_OK);
    nnue_randomize(&net, seed);
    assert_int_equal(nnue_save_file(&net, net_path), NNUE_OK);
    nnue_free(&net);
    if (!loop_train_done(tr, why, sizeof why))
        fail_msg("loop_train_done: %s", why);
    assert_true(engine_build_sha256(net_path, sha));
    free(tr);
}

/// The gate's verdict, as an SPRT's result.json says it.
static void gate(const Fixture *f, int gen, const char *state)
{
    char json[256];
    snprintf(json, sizeof json,
             "{\"state\": \"%s\", \"games\": 60, \"wins\": 20, \"losses\": 15, \"draws\": 25, "
             "\"elo\": 29.0, \"error\": 60.0, \"llr\": 2.95, \"lower\": -2.94, \"upper\": 2.94}",
             state);
    write_result(f, gen, JOB_LOOP_GATE, json);
}

static json_t *history(const Fixture *f)
{
    char path[128];
    snprintf(path, sizeof path, "%s/history.json", f->out);
    json_error_t err;
    json_t *h = json_load_file(path, 0, &err);
    if (!h)
        fail_msg("%s: %s", path, err.text);
    return h;
}

static const char *text_of(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    assert_non_null(s);
    return s;
}

/// Whether file a holds the bytes whose sha256 is sha.
static bool has_sha(const char *path, const char *sha)
{
    char got[JOB_NET_HASH_MAX];
    return engine_build_sha256(path, got) && !strcmp(got, sha);
}

/// The next step is the first one not finished, in order (data, train, gate), with the
/// engine's own net as best until a gate promotes one; a failed step is run again.
static void test_next_step(void **state)
{
    Fixture *f = *state;
    LoopNext nx = record(f);
    assert_false(nx.done);
    assert_int_equal(nx.gen, 1);
    assert_int_equal(nx.step, JOB_LOOP_DATA);
    assert_string_equal(nx.best, "");
    write_result(f, 1, JOB_LOOP_DATA, "{\"state\": \"failed\"}");
    assert_int_equal(record(f).step, JOB_LOOP_DATA);
    char sha[JOB_NET_HASH_MAX];
    data_and_train(f, 1, 1, sha);
    nx = record(f);
    assert_int_equal(nx.gen, 1);
    assert_int_equal(nx.step, JOB_LOOP_GATE);
    json_t *h = history(f);
    assert_string_equal(text_of(h, "next"), "gen 1 gate");
    json_t *row = json_array_get(json_object_get(h, "rows"), 0);
    assert_string_equal(text_of(row, "verdict"), "running");
    char id[16];
    snprintf(id, sizeof id, "%.12s", sha);
    assert_string_equal(text_of(row, "net"), id);
    json_decref(h);
}

/// A gate that accepted H1 promotes its net: nets/nn-<sha256[:12]>.nnue and best.nnue hold its
/// bytes, its row says promoted, the record names it best, and generation 2's data step plays
/// with it (its EvalFile).
static void test_promote(void **state)
{
    Fixture *f = *state;
    char sha[JOB_NET_HASH_MAX], kept[JOB_TEXT_MAX + 32], copy[128];
    data_and_train(f, 1, 1, sha);
    gate(f, 1, "H1 accepted");
    LoopNext nx = record(f);
    snprintf(kept, sizeof kept, "%s/nets/nn-%.12s.nnue", f->out, sha);
    snprintf(copy, sizeof copy, "%s/best.nnue", f->out);
    assert_true(has_sha(kept, sha));
    assert_true(has_sha(copy, sha));
    assert_false(nx.done);
    assert_int_equal(nx.gen, 2);
    assert_int_equal(nx.step, JOB_LOOP_DATA);
    assert_string_equal(nx.best, kept);
    JobConfig *data = step_job(f, nx.gen, (JobLoopStep)nx.step, nx.best);
    const PlayerConfig *pc = &data->players[0].cfg;
    const char *eval_file = NULL;
    for (int i = 0; i < pc->option_count; i++)
        if (!strcmp(pc->options[i].name, "EvalFile"))
            eval_file = pc->options[i].value;
    assert_non_null(eval_file);
    assert_string_equal(eval_file, kept);
    free(data);
    char id[16];
    snprintf(id, sizeof id, "%.12s", sha);
    json_t *h = history(f), *rows = json_object_get(h, "rows");
    assert_string_equal(text_of(h, "best"), id);
    assert_string_equal(text_of(h, "best_file"), kept);
    assert_string_equal(text_of(json_array_get(rows, 0), "verdict"), "promoted");
    assert_string_equal(text_of(json_array_get(rows, 0), "best_before"), "embedded");
    assert_int_equal(json_array_size(rows), 1); // generation 2 has no data yet
    json_decref(h);
}

/// A gate that accepted H0 keeps the old best: generation 2's net is neither kept in nets/
/// nor copied to best.nnue, its row says rejected, and the loop is complete with generation
/// 1's net the best.
static void test_reject(void **state)
{
    Fixture *f = *state;
    char sha1[JOB_NET_HASH_MAX], sha2[JOB_NET_HASH_MAX], kept[JOB_TEXT_MAX + 32], path[128];
    data_and_train(f, 1, 1, sha1);
    gate(f, 1, "H1 accepted");
    record(f);
    data_and_train(f, 2, 2, sha2);
    assert_string_not_equal(sha1, sha2);
    gate(f, 2, "H0 accepted");
    LoopNext nx = record(f);
    assert_true(nx.done);
    snprintf(kept, sizeof kept, "%s/nets/nn-%.12s.nnue", f->out, sha1);
    assert_string_equal(nx.best, kept);
    snprintf(path, sizeof path, "%s/best.nnue", f->out);
    assert_true(has_sha(path, sha1));
    snprintf(path, sizeof path, "%s/nets/nn-%.12s.nnue", f->out, sha2);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    char id1[16];
    snprintf(id1, sizeof id1, "%.12s", sha1);
    json_t *h = history(f), *rows = json_object_get(h, "rows");
    assert_string_equal(text_of(h, "next"), "complete");
    assert_string_equal(text_of(h, "best"), id1);
    assert_int_equal(json_array_size(rows), 2);
    json_t *row = json_array_get(rows, 1);
    assert_string_equal(text_of(row, "verdict"), "rejected");
    assert_string_equal(text_of(row, "best_before"), id1);
    assert_string_equal(text_of(json_object_get(row, "gate"), "state"), "H0 accepted");
    json_decref(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_next_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_promote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
