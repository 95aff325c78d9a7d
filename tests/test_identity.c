// SPDX-License-Identifier: MIT
// The identity of a run: unchanged by what does not change the games (option order,
// concurrency, output and report settings, rounds, a comment in a weights file), changed and
// named by what does (a weights file's values, an engine program's bytes, a time control,
// SPRT bounds), and its text form read back item for item.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "identity.h"
#include "openings.h"

static const uint64_t BENCH = 755015;

typedef struct {
    char dir[64];
    char weights[128]; // a weights file of engine 'new'
    char program[128]; // an external engine's program
    JobConfig *job;
} Fixture;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void set_option(PlayerConfig *pc, const char *name, const char *value)
{
    PlayerOption *o = &pc->options[pc->option_count++];
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->value, sizeof o->value, "%s", value);
}

/// A match of two builtin engines, 'base' and 'new' (weights file and options), 10+0.1.
static void job_two_builtins(JobConfig *j, const char *weights)
{
    memset(j, 0, sizeof *j);
    j->kind = JOB_MATCH;
    snprintf(j->name, sizeof j->name, "two builtins");
    j->player_count = 2;
    for (int i = 0; i < 2; i++) {
        PlayerConfig *pc = &j->players[i].cfg;
        snprintf(pc->name, sizeof pc->name, "%s", i ? "new" : "base");
        pc->proto = PROTO_BUILTIN;
        j->players[i].tc = (TimeControl){.base_ms = 10000, .inc_ms = 100, .margin_ms = 100};
    }
    PlayerConfig *nw = &j->players[1].cfg;
    snprintf(nw->weights_file, sizeof nw->weights_file, "%s", weights);
    set_option(nw, "Hash", "64");
    set_option(nw, "Threads", "2");
    char value[16];
    snprintf(value, sizeof value, "%d", params_info[1].def + 3);
    set_option(nw, params_info[1].name, value);
    j->rules = rules_config_default(RULES_SEED);
    j->draw = (DrawAdjudication){true, 40, 8, 10};
    j->resign = (ResignAdjudication){true, false, 3, 600};
    j->seed = 1;
    j->rounds = 100;
    j->repeat = true;
    j->concurrency = 4;
    snprintf(j->output.dir, sizeof j->output.dir, "out");
    snprintf(j->output.journal, sizeof j->output.journal, "journal.xqj");
}

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->job = malloc(sizeof *f->job)))
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/xqidentity-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->weights, sizeof f->weights, "%s/new.txt", f->dir);
    snprintf(f->program, sizeof f->program, "%s/engine.sh", f->dir);
    char text[256];
    snprintf(text, sizeof text, "# tuned\n%s %d\n", params_info[0].name, params_info[0].def + 1);
    write_text(f->weights, text);
    job_two_builtins(f->job, f->weights);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    unlink(f->weights);
    unlink(f->program);
    rmdir(f->dir);
    free(f->job);
    free(f);
    return 0;
}

static void identity_ok(const JobConfig *job, Identity *out)
{
    char why[512];
    IdentityStatus st = identity_of_job(job, BENCH, out, why, sizeof why);
    if (st != IDENTITY_OK)
        print_error("identity_of_job: %s (%s)\n", identity_strerror(st), why);
    assert_int_equal(st, IDENTITY_OK);
}

/// The number of differences between the job's identity and a changed copy's; why gets the
/// line naming them.
static int diff_after(const Fixture *f, void (*change)(JobConfig *), char *why, size_t len)
{
    JobConfig *other = malloc(sizeof *other);
    assert_non_null(other);
    memcpy(other, f->job, sizeof *other);
    change(other);
    Identity a, b;
    identity_ok(f->job, &a);
    identity_ok(other, &b);
    int n = identity_diff(&a, &b, why, len);
    size_t la = identity_encode(&a, NULL, 0), lb = identity_encode(&b, NULL, 0);
    char *ta = malloc(la + 1), *tb = malloc(lb + 1);
    assert_non_null(ta);
    assert_non_null(tb);
    identity_encode(&a, ta, la + 1);
    identity_encode(&b, tb, lb + 1);
    // The text (what a journal compares) differs exactly when diff finds a difference.
    assert_int_equal(n == 0, la == lb && !strcmp(ta, tb));
    assert_int_equal(n == 0, identity_hash(&a) == identity_hash(&b));
    free(ta);
    free(tb);
    identity_destroy(&a);
    identity_destroy(&b);
    free(other);
    return n;
}

static void assert_mentions(const char *why, const char *text)
{
    if (!strstr(why, text)) {
        print_error("\"%s\" does not mention \"%s\"\n", why, text);
        fail();
    }
}

static void change_unrelated(JobConfig *j)
{
    PlayerConfig *nw = &j->players[1].cfg;
    PlayerOption first = nw->options[0];
    nw->options[0] = nw->options[2];
    nw->options[2] = first; // the same options in another order
    nw->options[3] = nw->options[2];
    snprintf(nw->options[2].name, sizeof nw->options[2].name, "hash");
    snprintf(nw->options[2].value, sizeof nw->options[2].value, "1024"); // set again below
    nw->option_count = 4;
    j->concurrency = 16;
    j->rounds = 400;
    snprintf(j->name, sizeof j->name, "renamed");
    snprintf(j->output.dir, sizeof j->output.dir, "/elsewhere");
    snprintf(j->output.pgn, sizeof j->output.pgn, "other.pgn");
    snprintf(j->report.urls[0], sizeof j->report.urls[0], "https://example.org/report");
    j->report.url_count = 1;
    j->report.interval_s = 5;
    j->players[0].tc.margin_ms = 5000; // a tolerance for slow hardware, not the experiment
    snprintf(j->anchor, sizeof j->anchor, "%s", j->players[1].cfg.name); // how ratings read
    j->output.pgn_notation = 2; // WXF in the PGN: how games are written, not which are played
    j->output.pgn_ranks = 1;
}

/// Option order, an option set twice (its last value counts), concurrency, rounds, the job
/// name, output and report settings, the time margin and the rating's anchor leave the
/// identity (its text and hash) unchanged; rounds are kept apart.
static void test_unrelated_changes(void **state)
{
    Fixture *f = *state;
    char why[512] = "";
    assert_int_equal(diff_after(f, change_unrelated, why, sizeof why), 0);
    assert_string_equal(why, "");
    Identity id;
    identity_ok(f->job, &id);
    assert_int_equal(id.rounds, 100);
    assert_null(identity_get(&id, "rounds"));
    identity_destroy(&id);
}

/// A weights file whose values change changes the identity and names the engine; a comment
/// added to it does not; the same value given as an option instead of in the file does not.
static void test_weights_file_content(void **state)
{
    Fixture *f = *state;
    Identity before, after;
    identity_ok(f->job, &before);
    char text[256], why[512];

    snprintf(text, sizeof text, "# tuned, now with a longer comment\n\n%s %d # why\n",
             params_info[0].name, params_info[0].def + 1);
    write_text(f->weights, text);
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 0);
    identity_destroy(&after);

    f->job->players[1].cfg.weights_file[0] = '\0';
    char value[16];
    snprintf(value, sizeof value, "%d", params_info[0].def + 1);
    set_option(&f->job->players[1].cfg, params_info[0].name, value);
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 0);
    identity_destroy(&after);
    f->job->players[1].cfg.option_count--;
    snprintf(f->job->players[1].cfg.weights_file, PLAYER_TEXT_MAX, "%s", f->weights);

    snprintf(text, sizeof text, "# tuned\n%s %d\n", params_info[0].name, params_info[0].def + 2);
    write_text(f->weights, text);
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 1);
    assert_string_equal(why, "engine 'new': weights changed");
    identity_destroy(&after);
    identity_destroy(&before);
}

/// An external engine whose program file changes (same path) changes the identity with the
/// engine named; a bare command name is found through PATH; an unreadable one says so.
static void test_external_program(void **state)
{
    Fixture *f = *state;
    write_text(f->program, "#!/bin/sh\necho version 1\n");
    assert_int_equal(chmod(f->program, 0755), 0);
    PlayerConfig *ext = &f->job->players[0].cfg;
    snprintf(ext->name, sizeof ext->name, "ext");
    ext->proto = PROTO_UCI;
    snprintf(ext->cmd, sizeof ext->cmd, "%s", f->program);
    snprintf(ext->args[0], sizeof ext->args[0], "--quiet mode");
    ext->argc = 1;
    set_option(ext, "Threads", "1");

    Identity before, after;
    char why[512];
    identity_ok(f->job, &before);
    const char *hash = identity_get(&before, "engine.ext.binary");
    assert_non_null(hash);
    assert_int_equal(strlen(hash), 16);
    assert_string_equal(identity_get(&before, "engine.ext.args"), "'--quiet mode'");

    const char *old_path = getenv("PATH");
    char *saved = old_path ? strdup(old_path) : NULL;
    setenv("PATH", f->dir, 1);
    snprintf(ext->cmd, sizeof ext->cmd, "engine.sh");
    identity_ok(f->job, &after);
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 0);
    identity_destroy(&after);
    snprintf(ext->cmd, sizeof ext->cmd, "%s", f->program);

    write_text(f->program, "#!/bin/sh\necho version 2\n");
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 1);
    assert_string_equal(why, "engine 'ext': program file changed");
    identity_destroy(&after);

    snprintf(ext->cmd, sizeof ext->cmd, "%s/missing-engine", f->dir);
    identity_ok(f->job, &after);
    assert_non_null(strstr(identity_get(&after, "engine.ext.binary"), "unreadable"));
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 1);
    assert_mentions(why, "engine 'ext': program file changed (");
    assert_mentions(why, "unreadable");
    identity_destroy(&after);
    identity_destroy(&before);
}

static void make_external(JobConfig *j)
{
    PlayerConfig *ext = &j->players[0].cfg;
    ext->proto = PROTO_UCI;
    snprintf(ext->cmd, sizeof ext->cmd, "/bin/sh");
    snprintf(ext->env[0], sizeof ext->env[0], "EVAL_MODE=fast");
    snprintf(ext->env[1], sizeof ext->env[1], "NNUE=off");
    ext->env_count = 2;
    snprintf(ext->passenv, sizeof ext->passenv, "OMP_NUM_THREADS CUDA_VISIBLE_DEVICES");
}

static void env_reordered(JobConfig *j)
{
    PlayerConfig *ext = &j->players[0].cfg;
    snprintf(ext->env[0], sizeof ext->env[0], "NNUE=off");
    snprintf(ext->env[1], sizeof ext->env[1], "EVAL_MODE=fast");
    snprintf(ext->passenv, sizeof ext->passenv, "CUDA_VISIBLE_DEVICES OMP_NUM_THREADS");
}

static void env_changed(JobConfig *j)
{
    snprintf(j->players[0].cfg.env[1], sizeof j->players[0].cfg.env[1], "NNUE=on");
}

static void limit_added(JobConfig *j) { j->players[0].cfg.rlimit_cpu_s = 60; }

/// An external engine's environment and limits are part of the experiment: a variable the job
/// sets, the names it passes and a resource limit count; their order does not.
static void test_engine_process(void **state)
{
    Fixture *f = *state;
    make_external(f->job);
    char why[512];
    assert_int_equal(diff_after(f, env_reordered, why, sizeof why), 0);
    assert_int_equal(diff_after(f, env_changed, why, sizeof why), 1);
    assert_mentions(why, "env.NNUE");
    assert_int_equal(diff_after(f, limit_added, why, sizeof why), 1);
    assert_mentions(why, "rlimit_cpu");
}

static void change_tc(JobConfig *j)
{
    j->players[0].tc = (TimeControl){.base_ms = 5000, .inc_ms = 50};
}

/// A time control that changes is named with the engine and both values.
static void test_time_control(void **state)
{
    Fixture *f = *state;
    char why[512];
    assert_int_equal(diff_after(f, change_tc, why, sizeof why), 1);
    assert_string_equal(why, "time control of 'base' changed (10+0.1 -> 5+0.05)");
}

static void change_scale(JobConfig *j)
{
    j->scale.bench = true;
    j->scale.reference_nps = 900000;
}

static void change_nps_floor(JobConfig *j) { j->scale.nps_floor = 400000; }

static void change_openings_read(JobConfig *j)
{
    j->openings_format = OPENINGS_FORMAT_PGN;
    j->openings_plies = 8;
}

/// How the openings file is read ([openings] format, plies) is part of the experiment; at
/// the defaults it adds nothing, so identities from before the keys stay the same.
static void test_openings_read(void **state)
{
    Fixture *f = *state;
    char why[512];
    assert_int_equal(diff_after(f, change_openings_read, why, sizeof why), 1);
    assert_string_equal(why, "openings.read added (format=pgn plies=8)");
}

/// [time] scale = bench and its reference are part of the experiment (each rank's clock
/// follows them); nps_floor, which only admits ranks, is not.
static void test_time_scale(void **state)
{
    Fixture *f = *state;
    char why[512];
    assert_int_equal(diff_after(f, change_scale, why, sizeof why), 1);
    assert_string_equal(why, "time.scale added (bench reference_nps=900000)");
    assert_int_equal(diff_after(f, change_nps_floor, why, sizeof why), 0);
}

static void change_sprt(JobConfig *j)
{
    j->kind = JOB_SPRT;
    j->sprt.elo0 = 0;
    j->sprt.elo1 = 3;
}

static void change_game_settings(JobConfig *j)
{
    j->rules = rules_config_default(RULES_ASIAN);
    j->repeat = false;
    j->players[1].cfg.options[0].value[0] = '8'; // Hash=84
    snprintf(j->players[0].cfg.name, sizeof j->players[0].cfg.name, "base.v2");
}

/// The kind, SPRT bounds, rules, repeat, a non-weight option and an engine's name (with a
/// dot in it) all count, and the line names each.
static void test_game_settings(void **state)
{
    Fixture *f = *state;
    char why[1024];
    int n = diff_after(f, change_sprt, why, sizeof why);
    assert_true(n >= 2);
    assert_mentions(why, "kind changed (match -> sprt)");
    assert_mentions(why, "sprt.elo1 added (3)");

    n = diff_after(f, change_game_settings, why, sizeof why);
    assert_true(n >= 4);
    assert_mentions(why, "rules changed (seed");
    assert_mentions(why, "repeat changed (true -> false)");
    assert_mentions(why, "engine 'new': option Hash changed (64 -> 84)");
    assert_mentions(why, "engine 'base' removed");
    assert_mentions(why, "engine 'base.v2' added");
}

/// The text form reads back to the same items, whatever the keys and values hold; a bad
/// escape or a line without '=' is refused.
static void test_text_roundtrip(void **state)
{
    (void)state;
    Identity id, back;
    identity_init(&id);
    assert_int_equal(identity_add(&id, "plain", "value"), IDENTITY_OK);
    assert_int_equal(identity_add(&id, "a=b\\c\nd", "x=y\\z\nw"), IDENTITY_OK);
    assert_int_equal(identity_add(&id, "empty", ""), IDENTITY_OK);
    size_t len = identity_encode(&id, NULL, 0);
    char text[256];
    assert_true(len < sizeof text);
    assert_int_equal(identity_encode(&id, text, sizeof text), len);
    assert_string_equal(text, "plain=value\na\\=b\\\\c\\nd=x=y\\\\z\\nw\nempty=\n");
    assert_int_equal(identity_decode(text, len, &back), IDENTITY_OK);
    assert_int_equal(back.count, 3);
    assert_string_equal(back.items[1].key, "a=b\\c\nd");
    assert_string_equal(back.items[1].value, "x=y\\z\nw");
    assert_int_equal(identity_diff(&id, &back, NULL, 0), 0);
    assert_int_equal(identity_hash(&id), identity_hash(&back));
    identity_destroy(&back);

    char small[8];
    assert_int_equal(identity_encode(&id, small, sizeof small), len); // cut, length still whole
    assert_string_equal(small, "plain=v");
    identity_destroy(&id);

    assert_int_equal(identity_decode("k=v\\q\n", 6, &back), IDENTITY_ERR_SYNTAX);
    assert_int_equal(back.count, 0);
    assert_int_equal(identity_decode("no equals sign\n", 15, &back), IDENTITY_ERR_SYNTAX);
    assert_int_equal(identity_decode("=empty key\n", 11, &back), IDENTITY_ERR_SYNTAX);
}

/// The same items in another order are a difference (the journal compares text), named so.
static void test_order_counts(void **state)
{
    (void)state;
    Identity a, b;
    identity_init(&a);
    identity_init(&b);
    assert_int_equal(identity_add(&a, "x", "1"), IDENTITY_OK);
    assert_int_equal(identity_add(&a, "y", "2"), IDENTITY_OK);
    assert_int_equal(identity_add(&b, "y", "2"), IDENTITY_OK);
    assert_int_equal(identity_add(&b, "x", "1"), IDENTITY_OK);
    char why[128];
    assert_int_equal(identity_diff(&a, &b, why, sizeof why), 1);
    assert_mentions(why, "another order");
    identity_destroy(&a);
    identity_destroy(&b);
}

/// A net (option.EvalFile) counts by its bytes: the same path with another net changes the
/// identity and names EvalFile; the same net under another path does not; the embedded net's
/// special value is kept as written.
static void test_evalfile_content(void **state)
{
    Fixture *f = *state;
    char net[128], moved[128], why[512];
    snprintf(net, sizeof net, "%s/gen.nnue", f->dir);
    snprintf(moved, sizeof moved, "%s/gen-copy.nnue", f->dir);
    write_text(net, "generation 1 weights");
    write_text(moved, "generation 1 weights");
    set_option(&f->job->players[1].cfg, "EvalFile", net);
    Identity before, after;
    identity_ok(f->job, &before);
    const char *v = identity_get(&before, "engine.new.option.EvalFile");
    assert_non_null(v);
    assert_null(strstr(v, "gen.nnue")); // by content, not by name
    assert_int_equal(strlen(v), 16);

    write_text(net, "generation 2 weights"); // retrained to the same path
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 1);
    assert_string_equal(why, "engine 'new': option EvalFile changed");
    identity_destroy(&after);

    PlayerOption *o = &f->job->players[1].cfg.options[f->job->players[1].cfg.option_count - 1];
    snprintf(o->value, sizeof o->value, "%s", moved);
    identity_ok(f->job, &after);
    assert_int_equal(identity_diff(&before, &after, why, sizeof why), 0);
    identity_destroy(&after);

    snprintf(o->value, sizeof o->value, "<default>");
    identity_ok(f->job, &after);
    assert_string_equal(identity_get(&after, "engine.new.option.EvalFile"), "<default>");
    identity_destroy(&after);
    identity_destroy(&before);
}

/// A weights file that cannot be read is an error naming the engine.
static void test_bad_weights_file(void **state)
{
    Fixture *f = *state;
    snprintf(f->job->players[1].cfg.weights_file, PLAYER_TEXT_MAX, "%s/none.txt", f->dir);
    Identity id;
    char why[512];
    assert_int_equal(identity_of_job(f->job, BENCH, &id, why, sizeof why), IDENTITY_ERR_ENGINE);
    assert_mentions(why, "engine 'new'");
    identity_destroy(&id);
}

/// A different bench signature (another build of the search) changes every builtin engine.
static void test_bench_signature(void **state)
{
    Fixture *f = *state;
    Identity a, b;
    identity_ok(f->job, &a);
    char why[512];
    assert_int_equal(identity_of_job(f->job, BENCH + 1, &b, why, sizeof why), IDENTITY_OK);
    assert_int_equal(identity_diff(&a, &b, why, sizeof why), 2);
    assert_mentions(why, "engine 'base': bench signature changed (755015 -> 755016)");
    identity_destroy(&a);
    identity_destroy(&b);
}

/// Every status has its own message.
static void test_strerror(void **state)
{
    (void)state;
    for (int i = 0; i < IDENTITY_STATUS_NB; i++)
        for (int k = 0; k < i; k++)
            assert_string_not_equal(identity_strerror((IdentityStatus)i),
                                    identity_strerror((IdentityStatus)k));
    assert_non_null(strstr(identity_strerror(IDENTITY_STATUS_NB), "unknown"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unrelated_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_weights_file_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_external_program, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_control, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_scale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openings_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_game_settings, setup, teardown),
        cmocka_unit_test(test_text_roundtrip),
        cmocka_unit_test(test_order_counts),
        cmocka_unit_test_setup_teardown(test_evalfile_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_weights_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bench_signature, setup, teardown),
        cmocka_unit_test(test_strerror),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
