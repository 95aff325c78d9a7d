// SPDX-License-Identifier: MIT
// Job files: the shipped examples load, overrides change values, every error names the file
// (or override), the line and the key; relative paths come from the job file's directory,
// output names are distinct, sizes are bounded; engine settings mean the same in a job file
// and on `xqforge play`'s command line (engine_spec).
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine_spec.h"
#include "identity.h"
#include "job.h"
#include "job_kinds.h"
#include "job_loop.h"
#include "job_verify.h"
#include "match.h"
#include "nnue.h"

// A valid SPRT job; its lines are numbered 1..7, so appended text starts at line 8.
static const char *const BASE = "[job]\n"
                                "kind = sprt\n"
                                "rounds = 10\n"
                                "[engine a]\n"
                                "[engine b]\n"
                                "[time]\n"
                                "nodes = 1000\n";

typedef struct {
    char path[64];
    JobConfig *job;
    char why[1024];
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->job = malloc(sizeof *f->job)))
        return -1;
    snprintf(f->path, sizeof f->path, "/tmp/xq-test-job-XXXXXX");
    int fd = mkstemp(f->path);
    if (fd < 0)
        return -1;
    close(fd);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    unlink(f->path);
    free(f->job);
    free(f);
    return 0;
}

static void write_text(Fixture *f, const char *a, const char *b)
{
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    fputs(a, fp);
    fputs(b, fp);
    fclose(fp);
}

static JobStatus load(Fixture *f, const char *extra, const char *const *ovr, int n)
{
    write_text(f, BASE, extra);
    return job_load(f->path, ovr, n, f->job, f->why, sizeof f->why);
}

/// Checks the status, and that the message starts with the file path (unless override is
/// set) followed by the expected text.
static void expect(Fixture *f, JobStatus got, JobStatus want, bool override, const char *text)
{
    char exp[1024];
    snprintf(exp, sizeof exp, "%s%s", override ? "" : f->path, text);
    if (strncmp(f->why, exp, strlen(exp)) != 0)
        fail_msg("message '%s'\n   expected '%s...'", f->why, exp);
    assert_int_equal(got, want);
}

static void expect_file_error(void **state, const char *extra, JobStatus want, const char *text)
{
    Fixture *f = *state;
    expect(f, load(f, extra, NULL, 0), want, false, text);
}

static void expect_override_error(void **state, const char *ovr, JobStatus want, const char *text)
{
    Fixture *f = *state;
    expect(f, load(f, "", &ovr, 1), want, true, text);
}

static const PlayerOption *option_of(const PlayerConfig *pc, const char *name)
{
    for (int i = 0; i < pc->option_count; i++)
        if (!strcmp(pc->options[i].name, name))
            return &pc->options[i];
    return NULL;
}

/// Every example in jobs/ loads without error, with the engines and settings it documents.
static void test_examples_load(void **state)
{
    Fixture *f = *state;
    const char *names[] = {"sprt-weights.ini", "sprt-binaries.ini",
                           "gauntlet.ini",     "book.ini",
                           "spsa-detuned.ini", "texel.ini",
                           "selfplay.ini",     "sprt-tuned.ini",
                           "spsa-search.ini",  "datagen.ini",
                           "train.ini",        "loop.ini",
                           "loop-xq2.ini",     "doe.ini"};
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", XQ_JOBS_DIR, names[i]);
        JobStatus st = job_load(path, NULL, 0, f->job, f->why, sizeof f->why);
        if (st != JOB_OK)
            fail_msg("%s: %s", path, f->why);
    }
    snprintf(path, sizeof path, "%s/sprt-weights.ini", XQ_JOBS_DIR);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    JobConfig *j = f->job;
    assert_int_equal(j->kind, JOB_SPRT);
    assert_true(j->sprt.enabled);
    assert_int_equal(j->player_count, 2);
    assert_string_equal(j->players[0].cfg.name, "new");
    assert_int_equal(j->players[0].cfg.proto, PROTO_BUILTIN);
    assert_string_equal(option_of(&j->players[0].cfg, "horse_mg")->value, "300");
    assert_null(option_of(&j->players[1].cfg, "horse_mg"));
    assert_int_equal(j->players[1].tc.nodes, 2000);
    snprintf(path, sizeof path, "%s/gauntlet.ini", XQ_JOBS_DIR);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(j->kind, JOB_MATCH);
    assert_false(j->sprt.enabled);
    assert_int_equal(j->player_count, 4);
    assert_int_equal(j->players[3].cfg.proto, PROTO_UCI);
    assert_int_equal(j->players[3].tc.depth, 6);
    assert_int_equal(j->players[3].tc.base_ms, 0);
    assert_int_equal(j->players[0].tc.base_ms, 5000);
    // Their paths are the job directory's: jobs/detuned.txt, and out/ beside jobs/.
    char *dir = realpath(XQ_JOBS_DIR, NULL), want[1200];
    assert_non_null(dir);
    snprintf(path, sizeof path, "%s/sprt-tuned.ini", XQ_JOBS_DIR);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    snprintf(want, sizeof want, "%s/detuned.txt", dir);
    assert_string_equal(j->players[1].cfg.weights_file, want);
    snprintf(want, sizeof want, "%.*s/out/sprt-tuned", (int)(strrchr(dir, '/') - dir), dir);
    assert_string_equal(j->output.dir, want);
    free(dir);
}

/// A minimal job gets the documented defaults, and the engines play under the shared control.
static void test_defaults(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    const JobConfig *j = f->job;
    assert_int_equal(j->rounds, 10);
    assert_true(j->repeat);
    assert_int_equal(j->concurrency, 0);
    assert_int_equal(j->rules.set, RULES_SEED);
    assert_int_equal(j->rules.counting_default, 60);
    assert_string_equal(j->openings_file, ""); // builtin:balanced, for SPRT too (README.md)
    assert_true(j->sprt.elo1 == 2.0);
    assert_string_equal(j->output.pgn, "games.pgn");
    assert_int_equal(j->report.url_count, 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(j->players[i].tc.nodes, 1000);
        assert_int_equal(j->players[i].tc.margin_ms, 100);
    }
    GameConfig g;
    job_game_config(j, 1, 0, &g);
    assert_int_equal(g.tc[0].nodes, 1000);
    assert_int_equal(g.rules.set, RULES_SEED);
}

/// Engine settings apply [time], then [each], then the engine's section, wherever they stand
/// in the file; a later option of the same name replaces the earlier one.
static void test_engine_precedence(void **state)
{
    Fixture *f = *state;
    const char *extra = "[engine c]\n"
                        "depth = 4\n"
                        "option.Hash = 8\n"
                        "cmd = /bin/true\n"
                        "args = uci  -x\n"
                        "[each]\n"
                        "depth = 9\n"
                        "option.Hash = 32\n";
    // Not a second [job] section (refused): the job's keys as overrides.
    const char *const ovr[] = {"job.kind=match", "job.rules=asian", "job.counting=50"};
    assert_int_equal(load(f, extra, ovr, 3), JOB_OK);
    const JobConfig *j = f->job;
    assert_int_equal(j->player_count, 3);
    assert_int_equal(j->players[0].tc.depth, 9);
    assert_int_equal(j->players[2].tc.depth, 4);
    assert_int_equal(j->players[2].tc.nodes, 1000);
    assert_int_equal(j->players[2].cfg.option_count, 1);
    assert_string_equal(option_of(&j->players[2].cfg, "Hash")->value, "8");
    assert_int_equal(j->players[2].cfg.proto, PROTO_UCI);
    assert_int_equal(j->players[2].cfg.argc, 2);
    assert_string_equal(j->players[2].cfg.args[1], "-x");
    assert_int_equal(j->rules.set, RULES_ASIAN);
    assert_int_equal(j->rules.counting_default, 50);
}

/// Overrides are applied after the file, in order, and can add an engine.
static void test_overrides(void **state)
{
    Fixture *f = *state;
    const char *ovr[] = {"sprt.elo1=5",
                         "engine.a.option.Hash=32",
                         "engine.a.option.Hash=64",
                         "job.kind=match",
                         "engine.c.depth=3",
                         "time.nodes=500",
                         "openings.file=x.epd",
                         "report.urls=http://a https://b",
                         "adjudication.draw=on"};
    assert_int_equal(load(f, "", ovr, 9), JOB_OK);
    const JobConfig *j = f->job;
    assert_true(j->sprt.elo1 == 5.0);
    assert_int_equal(j->kind, JOB_MATCH);
    assert_int_equal(j->player_count, 3);
    assert_int_equal(j->players[0].cfg.option_count, 1);
    assert_string_equal(option_of(&j->players[0].cfg, "Hash")->value, "64");
    assert_int_equal(j->players[1].tc.nodes, 500);
    assert_int_equal(j->players[2].tc.depth, 3);
    assert_string_equal(j->openings_file, "x.epd");
    assert_int_equal(j->report.url_count, 2);
    assert_string_equal(j->report.urls[1], "https://b");
    assert_true(j->draw.enabled);
}

/// An unknown section is an error at its header line, even when empty.
static void test_unknown_section(void **state)
{
    expect_file_error(state, "[jobs]\n", JOB_ERR_KEY, ":8: [jobs] unknown section");
}

/// An unknown key is an error naming its section and line.
static void test_unknown_key(void **state)
{
    expect_file_error(state, "[sprt]\n\nelo2 = 5\n", JOB_ERR_KEY, ":10: [sprt] elo2: unknown key");
    expect_file_error(state, "[engine c]\nflavour = mint\n", JOB_ERR_KEY,
                      ":9: [engine c] flavour: unknown engine setting");
    expect_file_error(state, "[time]\nproto = uci\n", JOB_ERR_KEY, ":9: [time] proto: unknown key");
}

/// A value that is not a number is refused with the number rule (no partial parses).
static void test_bad_number(void **state)
{
    expect_file_error(state, "[sprt]\nelo1 = abc\n", JOB_ERR_VALUE,
                      ":9: [sprt] elo1: 'abc' is not a number");
    expect_file_error(state, "[job]\nrounds = 12x\n", JOB_ERR_VALUE,
                      ":9: [job] rounds: '12x' is not an integer");
    expect_file_error(state, "[sprt]\nalpha = nan\n", JOB_ERR_VALUE,
                      ":9: [sprt] alpha: 'nan' is not a number");
}

/// A number outside its range is refused with the range.
static void test_out_of_range(void **state)
{
    expect_file_error(state, "[job]\ncounting = 5000\n", JOB_ERR_VALUE,
                      ":9: [job] counting: 5000 is out of range 1..1000");
    expect_file_error(state, "[each]\nranks = 2\n", JOB_ERR_VALUE,
                      ":9: [each] ranks: 2 is out of range 0..1");
    expect_file_error(state, "[sprt]\nelo0 = 10\nelo1 = 5\n", JOB_ERR_VALUE,
                      ": [sprt] elo1: elo0 (10) must be below elo1 (5)");
}

/// A report URL with credentials in it (user:password@) is refused, from the file and from an
/// override, without repeating the password; an '@' after the host (path, query) is fine.
static void test_report_url_credentials(void **state)
{
    Fixture *f = *state;
    expect_file_error(state, "[report]\nurls = https://alice:hunter2@example.org/r\n",
                      JOB_ERR_VALUE,
                      ":9: [report] urls: 'https://...@example.org/r' has credentials in it");
    assert_null(strstr(f->why, "hunter2"));
    const char *bad = "report.urls=http://a http://tok@127.0.0.1:8080/x";
    assert_int_equal(load(f, "", &bad, 1), JOB_ERR_VALUE);
    assert_non_null(
        strstr(f->why, "[report] urls: 'http://...@127.0.0.1:8080/x' has credentials in it"));
    const char *ok = "report.urls=https://example.org/u@v?who=a@b";
    assert_int_equal(load(f, "", &ok, 1), JOB_OK);
    assert_string_equal(f->job->report.urls[0], "https://example.org/u@v?who=a@b");
}

/// A time control play would refuse is refused here.
static void test_bad_tc(void **state)
{
    expect_file_error(state, "[each]\ntc = 10+x\n", JOB_ERR_VALUE,
                      ":9: [each] tc: expected base+inc in seconds (10+0.1), moves/base+inc "
                      "(40/60+0.5) or inf, not '10+x'");
}

/// Only the rule sets of RULES.md are accepted.
static void test_bad_rules(void **state)
{
    expect_file_error(state, "[job]\nrules = western\n", JOB_ERR_VALUE,
                      ":9: [job] rules: 'western': expected seed or asian");
}

/// Two engine sections of one name are an error naming the first.
static void test_duplicate_engine(void **state)
{
    expect_file_error(state, "[engine.a]\n", JOB_ERR_VALUE,
                      ":8: [engine a] duplicate engine name (first on line 4)");
}

/// A job needs two engines, each with a time control, and rounds.
static void test_missing(void **state)
{
    Fixture *f = *state;
    write_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\n", "[time]\ntc = 10+0.1\n");
    expect(f, job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_MISSING, false,
           ": [engine NAME] at least two engines are needed (found 1)");
    write_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\n", "[engine b]\ndepth = 3\n");
    expect(f, job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_MISSING, false,
           ":4: [engine a] no time control");
    write_text(f, "[job]\nkind = match\n[engine a]\n[engine b]\n", "[time]\ndepth = 3\n");
    expect(f, job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_MISSING, false,
           ": [job] rounds: missing");
    write_text(f, "[job]\nrounds = 2\n[engine a]\n[engine b]\n", "[time]\ndepth = 3\n");
    expect(f, job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_MISSING, false,
           ": [job] kind: missing");
    expect_file_error(state, "[engine c]\nproto = uci\n", JOB_ERR_MISSING,
                      ":8: [engine c] cmd: proto uci needs cmd = PATH");
}

/// A line longer than inih's buffer is reported, not cut.
static void test_long_line(void **state)
{
    char extra[400];
    memcpy(extra, "; ", 2);
    memset(extra + 2, 'x', 248);
    memcpy(extra + 250, "\n", 2);
    expect_file_error(state, extra, JOB_ERR_SYNTAX,
                      ":8: line too long (250 characters, at most 198)");
}

/// A file over the size cap is refused before parsing.
static void test_oversized(void **state)
{
    size_t n = JOB_FILE_MAX + 1;
    char *big = malloc(n + 1);
    assert_non_null(big);
    for (size_t i = 0; i < n; i++)
        big[i] = i % 64 == 63 ? '\n' : ';';
    big[n] = '\0';
    expect_file_error(state, big, JOB_ERR_TOO_BIG, ": larger than 1048576 bytes");
    free(big);
}

/// A line that is neither a section nor key = value is a syntax error at that line.
static void test_syntax(void **state)
{
    expect_file_error(state, "\n# fine\nnot a setting\n", JOB_ERR_SYNTAX,
                      ":10: expected 'key = value' or '[section]'");
}

/// A bad override is named in the message, like a file line.
static void test_override_errors(void **state)
{
    expect_override_error(state, "sprt.elo1=abc", JOB_ERR_VALUE,
                          "override 'sprt.elo1=abc': [sprt] elo1: 'abc' is not a number");
    expect_override_error(state, "rounds=3", JOB_ERR_OVERRIDE,
                          "override 'rounds=3': expected section.key=value");
    expect_override_error(state, "engine.a=3", JOB_ERR_OVERRIDE,
                          "override 'engine.a=3': expected engine.NAME.key=value");
    expect_override_error(state, "job.colour=red", JOB_ERR_KEY,
                          "override 'job.colour=red': [job] colour: unknown key");
    expect_override_error(state, "jobb.rounds=3", JOB_ERR_KEY,
                          "override 'jobb.rounds=3': [jobb] rounds: unknown section");
    expect_override_error(state, "engine.a.tc=fast", JOB_ERR_VALUE,
                          "override 'engine.a.tc=fast': [engine a] tc: expected base+inc");
}

/// Planned kinds parse but are refused as not supported yet; an SPRT needs two engines.
static void test_unsupported_kind(void **state)
{
    expect_file_error(state, "[job]\nkind = spsa\n", JOB_ERR_VALUE,
                      ": [engine NAME] an spsa job tunes one builtin engine against itself "
                      "(found 2 engines)");
    expect_file_error(state, "[job]\nkind = perft\n", JOB_ERR_VALUE,
                      ":9: [job] kind: 'perft': expected one of sprt, match");
    expect_file_error(state, "[engine c]\n", JOB_ERR_VALUE,
                      ": [job] kind: sprt needs exactly two engines (found 3)");
}

static JobStatus load_text(Fixture *f, const char *text)
{
    write_text(f, text, "");
    return job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why);
}

/// A loop's steps (job_loop_make): generation 3 with keep = 2 makes its data with the best net
/// and seed + 2, trains on generations 2 and 3, and gates "new" (its net) against "best" at
/// the gate's nodes, bounds and games; without a best net the engine keeps its own. A loop
/// with two engines, rounds or [train] data is refused, naming the key.
static void test_loop_steps(void **state)
{
    Fixture *f = *state;
    const char *base = "[job]\nkind = loop\n[engine e]\noption.Hash = 4\noption.EvalFile = x.nnue\n"
                       "[time]\nnodes = 300\n[datagen]\nseed = 7\n[loop]\ngenerations = 3\n"
                       "keep = 2\ngate_nodes = 500\ngate_games = 61\nelo0 = -5\nelo1 = 5\n"
                       "[output]\ndir = /o\n";
    assert_int_equal(load_text(f, base), JOB_OK);
    JobConfig *out = malloc(sizeof *out);
    assert_non_null(out);
    char why[256];
    assert_true(
        job_loop_make(f->job, 3, JOB_LOOP_DATA, "/o/nets/nn-abc.nnue", out, why, sizeof why));
    assert_int_equal(out->kind, JOB_DATAGEN);
    assert_int_equal(out->datagen.seed, 9);
    assert_string_equal(out->output.dir, "/o/gen-003/data");
    assert_true(out->resume_auto);
    assert_int_equal(out->players[0].cfg.option_count, 2);
    assert_string_equal(out->players[0].cfg.options[1].name, "EvalFile");
    assert_string_equal(out->players[0].cfg.options[1].value, "/o/nets/nn-abc.nnue");
    assert_true(job_loop_make(f->job, 3, JOB_LOOP_TRAIN, "", out, why, sizeof why));
    assert_int_equal(out->kind, JOB_TRAIN);
    assert_int_equal(out->train.data_count, 2);
    assert_string_equal(out->train.data[0], "/o/gen-002/data/positions.xqp");
    assert_string_equal(out->train.data[1], "/o/gen-003/data/positions.xqp");
    assert_string_equal(out->train.init, ""); // from_scratch = true: fresh weights
    assert_true(job_loop_make(f->job, 1, JOB_LOOP_TRAIN, "", out, why, sizeof why));
    assert_int_equal(out->train.data_count, 1);
    f->job->loop.from_scratch = false; // from the best net, when there is one
    assert_true(job_loop_make(f->job, 3, JOB_LOOP_TRAIN, "/o/b.nnue", out, why, sizeof why));
    assert_string_equal(out->train.init, "/o/b.nnue");
    f->job->loop.from_scratch = true;
    assert_true(job_loop_make(f->job, 3, JOB_LOOP_GATE, "", out, why, sizeof why));
    assert_int_equal(out->kind, JOB_SPRT);
    assert_int_equal(out->player_count, 2);
    assert_string_equal(out->players[0].cfg.name, "new");
    assert_string_equal(out->players[0].cfg.options[1].value, "/o/gen-003/train/net.nnue");
    assert_string_equal(out->players[1].cfg.name, "best");
    assert_int_equal(out->players[1].cfg.option_count, 1); // the engine's own net
    assert_int_equal(out->players[0].tc.nodes, 500);
    assert_int_equal(out->rounds, 31);
    assert_true(out->sprt.enabled && out->sprt.elo0 == -5 && out->sprt.elo1 == 5);
    free(out);
    char text[1024];
    snprintf(text, sizeof text, "%s[engine f]\n", base);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "a loop job's one builtin engine"));
    snprintf(text, sizeof text, "%s[train]\ndata = a.xqp\n", base);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[train] data: a loop trains on its own"));
    snprintf(text, sizeof text, "%s[sprt]\n[loop]\n", base);
    assert_int_not_equal(load_text(f, text), JOB_OK);
}

/// A net file (option.EvalFile) named by a relative path is the job file's, like params, so a
/// job runs the same net from any working directory; absolute paths and the embedded net's
/// names (empty, <default>) are kept as written.
static void test_evalfile_relative_to_job(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = match\nrounds = 2\n"
                                  "[engine a]\noption.EvalFile = nets/x.nnue\n"
                                  "option.UseNNUE = true\n"
                                  "[engine b]\noption.evalfile = <default>\n"
                                  "[engine c]\noption.EvalFile = /abs/y.nnue\n"
                                  "[time]\nnodes = 100\n"),
                     JOB_OK);
    char *dir = strdup(f->path), want[1100];
    *strrchr(dir, '/') = 0;
    snprintf(want, sizeof want, "%s/nets/x.nnue", dir);
    assert_string_equal(option_of(&f->job->players[0].cfg, "EvalFile")->value, want);
    assert_string_equal(option_of(&f->job->players[0].cfg, "UseNNUE")->value, "true");
    assert_string_equal(option_of(&f->job->players[1].cfg, "evalfile")->value, "<default>");
    assert_string_equal(option_of(&f->job->players[2].cfg, "EvalFile")->value, "/abs/y.nnue");
    free(dir);
}

/// An engine built from source: its keys from [each] and its own section (the later wins), a
/// relative source taken from the job file's directory, the engine speaking UCI; a URL, a
/// missing commit, both cmd and source, and a bad bench are refused naming the key.
static void test_source_keys(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = match\nrounds = 2\n"
                                  "[each]\nsource = repo\nbuild = make\nbinary = engine\n"
                                  "bench = auto\nbuild_env.CC = gcc\n"
                                  "[engine a]\ncommit = HEAD~1\nbench = 1234\n"
                                  "[engine b]\ncommit = HEAD\nbuild_env.CC = clang\n"
                                  "bench_cmd = bench 13\n[time]\nnodes = 100\n"),
                     JOB_OK);
    const JobSource *a = &f->job->sources[0], *b = &f->job->sources[1];
    char *dir = strdup(f->path), want[1100];
    *strrchr(dir, '/') = 0;
    snprintf(want, sizeof want, "%s/repo", dir);
    assert_string_equal(a->source, want);
    assert_string_equal(a->commit, "HEAD~1");
    assert_int_equal(a->bench_mode, JOB_BENCH_VALUE);
    assert_true(a->bench == 1234);
    assert_int_equal(b->bench_mode, JOB_BENCH_AUTO);
    assert_string_equal(b->bench_cmd, "bench 13");
    assert_string_equal(a->bench_cmd, "bench");
    assert_int_equal(b->env_count, 1);
    assert_string_equal(b->env[0], "CC=clang");
    assert_int_equal(a->build_timeout_s, 1800);
    assert_int_equal(f->job->players[0].cfg.proto, PROTO_UCI);
    free(dir);
    const char *url = "engine.a.source=https://example.org/x.git";
    expect(f, load(f, "", &url, 1), JOB_ERR_VALUE, true,
           "override 'engine.a.source=https://example.org/x.git': [engine a] source: "
           "'https://example.org/x.git' is not a local path: builds never fetch");
    url = "engine.a.source=git@example.org:x.git";
    assert_int_equal(load(f, "", &url, 1), JOB_ERR_VALUE);
    expect(f,
           load_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\nsource = r\n"
                        "build = make\nbinary = e\n[engine b]\n[time]\nnodes = 100\n"),
           JOB_ERR_VALUE, false, ":4: [engine a] commit: an engine built from source needs commit");
    expect(f,
           load_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\nsource = r\ncommit = c\n"
                        "build = make\nbinary = e\ncmd = x\n[engine b]\n[time]\nnodes = 100\n"),
           JOB_ERR_VALUE, false, ":4: [engine a] cmd: give cmd or source, not both");
    expect(f,
           load_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\nbench = many\n"
                        "[engine b]\n[time]\nnodes = 100\n"),
           JOB_ERR_VALUE, false, ":5: [engine a] bench: 'many': expected the bench signature");
}

/// A section written twice (it was merged silently: a second [job] changed the first's
/// settings) is refused naming both lines; an engine's section written twice, too.
static void test_repeated_section(void **state)
{
    expect_file_error(state, "[job]\nname = again\n", JOB_ERR_SYNTAX,
                      ":8: [job] written twice (lines 1 and 8): give each section once");
    expect_file_error(state, "[sprt]\nelo1 = 5\n[time]\n[sprt]\n", JOB_ERR_SYNTAX,
                      ":10: [time] written twice (lines 6 and 10)");
    expect_file_error(state, "[engine b]\n", JOB_ERR_VALUE,
                      ":8: [engine b] duplicate engine name (first on line 5)");
}

/// A value that is not UTF-8 (it would make report.json unreadable) is refused with its line
/// and key, from the file or an override; UTF-8 text of any length per character is kept.
static void test_value_not_utf8(void **state)
{
    Fixture *f = *state;
    expect_file_error(state, "[output]\npgn = g\xff.pgn\n", JOB_ERR_VALUE,
                      ":9: [output] pgn: not UTF-8 text (byte 0xff at position 2)");
    assert_int_equal(load_text(f, "[job]\nkind = texel\nname = caf\xc3\n[texel]\ndata = x\n"),
                     JOB_ERR_VALUE);
    if (!strstr(f->why, ":3: [job] name: not UTF-8 text (byte 0xc3 at position 4)"))
        fail_msg("'%s'", f->why);
    expect_override_error(state, "job.name=a\xed\xa0\x80", JOB_ERR_VALUE,
                          "override 'job.name=a\xed\xa0\x80': [job] name: not UTF-8 text (byte "
                          "0xed at position 2)");
    const char *const ok = "job.name=caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e";
    assert_int_equal(load(f, "", &ok, 1), JOB_OK);
    assert_string_equal(f->job->name, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e");
    // Overlong forms, a lone continuation byte, above U+10FFFF, cut short: all refused.
    static const char *const bad[] = {"\xc0\xaf",        "\x80",         "\xf4\x90\x80\x80",
                                      "\xe2\x9c",        "\xe0\x80\xaf", "\xf0\x80\x80\xaf",
                                      "\xf5\x80\x80\x80"};
    char why[128];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (inifile_utf8(bad[i], why, sizeof why))
            fail_msg("bad sequence %zu accepted", i);
}

/// A two-engine match job, "new" and "base" with the given lines, at 100 nodes a move.
static JobStatus load_pair(Fixture *f, const char *new_lines, const char *base_lines)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[job]\nkind = match\nrounds = 2\n[engine new]\n%s[engine base]\n%s"
             "[time]\nnodes = 100\n",
             new_lines, base_lines);
    return load_text(f, text);
}

/// The engine at players[idx] of the loaded job, with its node limit.
static void assert_player(const Fixture *f, int idx, const char *name, int64_t nodes)
{
    assert_string_equal(f->job->players[idx].cfg.name, name);
    assert_int_equal(f->job->players[idx].tc.nodes, nodes);
}

/// Roles by name, never by the order of sections: the engine tested (new, players[0], whose
/// figures every output shows) is [sprt] new (or not [sprt] base), else the engine called
/// "new", else the first engine; each engine keeps its own settings and source through the
/// move, and the identity of a job written new-first is unchanged by naming the roles.
static void test_roles_by_name(void **state)
{
    Fixture *f = *state;
    static const char *const kinds[] = {"sprt", "match"};
    for (int k = 0; k < 2; k++) {
        char text[1024];
        // base written first, in a sprt and a two-engine match
        snprintf(text, sizeof text,
                 "[job]\nkind = %s\nrounds = 2\n[engine base]\nnodes = 200\n"
                 "source = /nonexistent/base\ncommit = b1\nbuild = make\nbinary = e\n"
                 "[engine new]\nnodes = 5000\n",
                 kinds[k]);
        assert_int_equal(load_text(f, text), JOB_OK);
        assert_int_equal(f->job->roles, JOB_ROLES_NAMES);
        assert_player(f, 0, "new", 5000);
        assert_player(f, 1, "base", 200);
        assert_string_equal(f->job->sources[1].commit, "b1"); // the source moved with its engine
        assert_string_equal(f->job->sources[0].source, "");
    }
    // Other names: the first engine is new, unless [sprt] names a role (either one is enough).
    static const char *const two = "[job]\nkind = sprt\nrounds = 2\n[engine master]\nnodes = 1\n"
                                   "[engine dev]\nnodes = 2\n%s";
    char text[1024];
    snprintf(text, sizeof text, two, "");
    assert_int_equal(load_text(f, text), JOB_OK);
    assert_int_equal(f->job->roles, JOB_ROLES_FIRST);
    assert_player(f, 0, "master", 1);
    static const char *const named[] = {"[sprt]\nnew = dev\n", "[sprt]\nbase = master\n",
                                        "[sprt]\nbase = master\nnew = dev\n"};
    for (int i = 0; i < 3; i++) {
        snprintf(text, sizeof text, two, named[i]);
        assert_int_equal(load_text(f, text), JOB_OK);
        assert_int_equal(f->job->roles, JOB_ROLES_NAMED);
        assert_player(f, 0, "dev", 2);
        assert_player(f, 1, "master", 1);
    }
    // [sprt] overrides the names: an engine called new can be the base.
    assert_int_equal(load_pair(f, "nodes = 7\n[sprt]\nnew = base\n", ""), JOB_OK);
    assert_player(f, 0, "base", 100);
    assert_player(f, 1, "new", 7);
    // Refused, naming the key: an unknown engine, one engine in both roles, roles of three.
    snprintf(text, sizeof text, two, "[sprt]\nnew = devv\n");
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[sprt] new: 'devv' is not one of the engines (master, dev)"));
    snprintf(text, sizeof text, two, "[sprt]\nnew = dev\nbase = dev\n");
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "the two roles need two engines"));
    assert_int_equal(load_text(f, "[job]\nkind = match\nrounds = 1\n[engine a]\n[engine b]\n"
                                  "[engine c]\n[time]\nnodes = 1\n[sprt]\nbase = a\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "roles are for two engines (found 3)"));
    // The identity: new first whatever the file's order; naming the roles already in that
    // order changes nothing (an old journal of a new-first job resumes).
    Identity a, b;
    assert_int_equal(load_pair(f, "", ""), JOB_OK);
    assert_int_equal(identity_of_job(f->job, 1, &a, NULL, 0), IDENTITY_OK);
    assert_int_equal(load_pair(f, "[sprt]\nnew = new\nbase = base\n", ""), JOB_OK);
    assert_int_equal(identity_of_job(f->job, 1, &b, NULL, 0), IDENTITY_OK);
    assert_int_equal(identity_diff(&a, &b, NULL, 0), 0);
    assert_string_equal(identity_get(&a, "engines"), "new,base");
    identity_destroy(&b);
    // The journal of a base-first job written before roles (engines=base,new): swapped roles,
    // named both ways; any other difference is not a swap.
    assert_int_equal(load_pair(f, "[sprt]\nnew = base\n", ""), JOB_OK);
    assert_int_equal(identity_of_job(f->job, 1, &b, NULL, 0), IDENTITY_OK);
    char was[64], is[64];
    assert_true(identity_roles_swapped(&b, &a, was, is, sizeof was));
    assert_string_equal(was, "base");
    assert_string_equal(is, "new");
    identity_destroy(&b);
    assert_int_equal(load_pair(f, "[sprt]\nnew = base\n", "nodes = 101\n"), JOB_OK);
    assert_int_equal(identity_of_job(f->job, 1, &b, NULL, 0), IDENTITY_OK);
    assert_false(identity_roles_swapped(&b, &a, was, is, sizeof was));
    identity_destroy(&a);
    identity_destroy(&b);
}

/// The NNUE net (on by default when the build embeds one) never reads evaluation weights, so a
/// job whose engine changes one (option.NAME, params = FILE) or whose SPSA tunes evaluation
/// rows must set UseNNUE, and two builtin engines either both set it or neither: otherwise
/// the job is refused with a sentence naming the weight or the engines. Search rows need
/// nothing: the net searches with them too.
static void test_eval_weights_need_use_nnue(void **state)
{
    Fixture *f = *state;
    if (!nnue_default())
        skip(); // without an embedded net the linear evaluation is the default
    assert_int_equal(load_pair(f, "option.horse_mg = 301\n", ""), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "horse_mg 301"));
    assert_non_null(strstr(f->why, "set option.UseNNUE=false"));
    // Both on the linear evaluation: accepted.
    assert_int_equal(load_pair(f, "option.horse_mg = 301\n", "[each]\noption.UseNNUE = false\n"),
                     JOB_OK);
    // One engine on the linear evaluation, the other on the net by default: refused.
    assert_int_equal(load_pair(f, "option.horse_mg = 301\noption.UseNNUE = off\n", ""),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "'new' sets UseNNUE=false and engine 'base' evaluates with "
                                   "the NNUE net by default"));
    // Search rows alone, and the net named on both engines: accepted.
    assert_int_equal(load_pair(f, "option.search_rfp_depth = 5\n", ""), JOB_OK);
    // A weights file: refused when it changes an evaluation row, named by the file.
    char dir[1024], wpath[1100];
    snprintf(dir, sizeof dir, "%s", f->path);
    *strrchr(dir, '/') = 0;
    snprintf(wpath, sizeof wpath, "%s/w.txt", dir);
    FILE *w = fopen(wpath, "w");
    assert_non_null(w);
    fputs("cannon_mg 333\n", w);
    fclose(w);
    assert_int_equal(load_pair(f, "params = w.txt\n", ""), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "cannon_mg 333"));
    assert_non_null(strstr(f->why, wpath));
    w = fopen(wpath, "w");
    assert_non_null(w);
    fprintf(w, "cannon_mg %d\nsearch_rfp_depth 5\n", params_info[params_find("cannon_mg")].def);
    fclose(w);
    assert_int_equal(load_pair(f, "params = w.txt\n", ""), JOB_OK);
    unlink(wpath);
    char text[1024];
    // SPSA on evaluation rows: refused unless UseNNUE is false, even with UseNNUE true.
    static const char *const spsa = "[job]\nkind = spsa\nrounds = 5\n[engine e]\n%s[time]\n"
                                    "nodes = 100\n[spsa]\nparams = %s\n";
    snprintf(text, sizeof text, spsa, "", "search_rfp_depth horse_mg");
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "spsa tunes evaluation rows"));
    snprintf(text, sizeof text, spsa, "option.UseNNUE = true\n", "horse_mg");
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "UseNNUE is true"));
    snprintf(text, sizeof text, spsa, "option.UseNNUE = false\n", "horse_mg");
    assert_int_equal(load_text(f, text), JOB_OK);
    snprintf(text, sizeof text, spsa, "", "search");
    assert_int_equal(load_text(f, text), JOB_OK);
}

/// An SPSA job over the search: "search" lists exactly the search rows (search_params.def),
/// each with the table's range and step, as jobs/spsa-search.ini does; mixed with eval names
/// each comes once; a list longer than the cap is refused naming the table's size.
static void test_spsa_search_rows(void **state)
{
    Fixture *f = *state;
    static const char *const head =
        "[job]\nkind = spsa\nrounds = 50\n[engine e]\noption.UseNNUE = false\n"
        "[time]\ntc = 2+0.02\n[spsa]\n";
    char text[1024], path[1024];
    snprintf(text, sizeof text, "%sparams = search horse_mg search_lmr_base\n", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    const JobConfig *j = f->job;
    assert_int_equal(j->spsa.param_count, PARAM_SEARCH_NB + 1);
    for (int k = 0; k < PARAM_SEARCH_NB; k++) {
        const JobSpsaParam *sp = &j->spsa.params[k];
        assert_true(params_is_search(sp->id));
        assert_false(sp->has_start);
        assert_true(sp->min == params_info[sp->id].min && sp->max == params_info[sp->id].max);
        assert_true(sp->c_end == params_info[sp->id].step);
    }
    assert_int_equal(j->spsa.params[PARAM_SEARCH_NB].id, params_find("horse_mg"));
    snprintf(text, sizeof text, "%sparam = tm_hard, 400, 200, 600, 25, 0.002\n", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    assert_int_equal(f->job->spsa.params[0].id, P_tm_hard);
    snprintf(path, sizeof path, "%s/spsa-search.ini", XQ_JOBS_DIR);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(f->job->kind, JOB_SPSA);
    assert_int_equal(f->job->spsa.param_count, PARAM_SEARCH_NB);
    assert_true(f->job->players[0].tc.base_ms > 0); // a clock: the tm_* rows act
    // `all` is every row, evaluation and search, each once.
    snprintf(text, sizeof text, "%sparams = all\n", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    assert_int_equal(f->job->spsa.param_count, PARAM_NB);
}

/// An SPSA job: table groups and names add each weight once with the table's range and step,
/// fishtest lines set everything, r_end defaults to the section's; faults are named.
/// [verify]: an empty section takes fishtest's defaults; an unknown key, bounds out of order,
/// alpha + beta of 1 or more, a bad clock and the section in a job that tunes nothing are
/// refused by name; job_verify_make turns the tuning into the SPRT of "tuned" (the tuning's
/// weights file) against "start" (verify/start-weights.txt), weight options left out, at
/// [verify]'s limit, in output.dir/verify.
static void test_verify_section(void **state)
{
    Fixture *f = *state;
    static const char *const head =
        "[job]\nkind = spsa\nrounds = 50\n[engine e]\noption.UseNNUE = false\n"
        "option.horse_mg = 200\noption.Hash = 8\n[time]\nnodes = 500\n[spsa]\n"
        "params = horse_mg\n[output]\ndir = out\n[verify]\n";
    char text[1024];
    snprintf(text, sizeof text, "%s", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    const JobConfig *j = f->job;
    assert_true(j->verify.enabled);
    assert_string_equal(j->verify.tc, "10+0.1");
    assert_true(j->verify.elo0 == 0 && j->verify.elo1 == 2 && j->verify.alpha == 0.05 &&
                j->verify.beta == 0.05 && j->verify.max_games == 20000 && !j->verify.nodes);
    JobConfig *v = malloc(sizeof *v);
    assert_non_null(v);
    char why[256];
    assert_true(job_verify_make(j, v, why, sizeof why));
    assert_int_equal(v->kind, JOB_SPRT);
    assert_true(v->sprt.enabled && !v->verify.enabled && v->player_count == 2);
    assert_int_equal(v->rounds, 10000);
    assert_string_equal(v->players[0].cfg.name, "tuned");
    assert_string_equal(v->players[1].cfg.name, "start");
    char want[2 * JOB_TEXT_MAX];
    snprintf(want, sizeof want, "%s/spsa-weights.txt", j->output.dir);
    assert_string_equal(v->players[0].cfg.weights_file, want);
    snprintf(want, sizeof want, "%s/verify/start-weights.txt", j->output.dir);
    assert_string_equal(v->players[1].cfg.weights_file, want);
    snprintf(want, sizeof want, "%s/verify", j->output.dir);
    assert_string_equal(v->output.dir, want);
    // UseNNUE and Hash stay; horse_mg is in the files, not an option.
    assert_int_equal(v->players[1].cfg.option_count, 2);
    assert_int_equal(v->players[0].tc.base_ms, 10000);
    assert_int_equal(v->players[0].tc.inc_ms, 100);
    snprintf(text, sizeof text, "%snodes = 300\nmax_games = 7\nelo1 = 5\n", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    assert_true(job_verify_make(f->job, v, why, sizeof why));
    assert_true(v->players[0].tc.nodes == 300 && !v->players[0].tc.base_ms);
    assert_true(v->rounds == 4 && v->sprt.elo1 == 5);
    free(v);
    static const struct {
        const char *lines, *error;
    } bad[] = {
        {"tcc = 10+0.1\n", "[verify] tcc: unknown"},
        {"elo0 = 3\nelo1 = 1\n", "[verify] elo1: elo0 (3) must be below elo1 (1)"},
        {"alpha = 0.5\nbeta = 0.5\n", "[verify] beta: alpha + beta must be below 1"},
        {"tc = fast\n", "[verify] tc: "},
        {"max_games = 1\n", "[verify] max_games"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s", head, bad[i].lines);
        assert_int_not_equal(load_text(f, text), JOB_OK);
        if (!strstr(f->why, bad[i].error))
            fail_msg("'%s' gave '%s'", bad[i].lines, f->why);
    }
    assert_int_not_equal(load_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\n[engine b]\n"
                                      "[time]\nnodes = 100\n[verify]\n"),
                         JOB_OK);
    assert_non_null(strstr(f->why, "[verify] verifies a tuning: only spsa and texel jobs"));
}

static void test_spsa_section(void **state)
{
    Fixture *f = *state;
    static const char *const head =
        "[job]\nkind = spsa\nrounds = 50\n[engine e]\noption.UseNNUE = false\n"
        "[time]\nnodes = 500\n[spsa]\nr_end = 0.005\n";
    char text[1024];
    snprintf(text, sizeof text,
             "%sparams = horse_mg chariot_eg horse_mg\n"
             "param = cannon_mg, 300, 200, 400, 10, 0.003\n",
             head);
    assert_int_equal(load_text(f, text), JOB_OK);
    const JobConfig *j = f->job;
    assert_int_equal(j->kind, JOB_SPSA);
    assert_int_equal(j->spsa.param_count, 3);
    assert_int_equal(j->spsa.params[0].id, params_find("horse_mg"));
    assert_false(j->spsa.params[0].has_start);
    assert_true(j->spsa.params[0].c_end == params_info[params_find("horse_mg")].step);
    assert_true(j->spsa.params[0].r_end == 0.005);
    assert_true(j->spsa.params[2].has_start && j->spsa.params[2].start == 300);
    assert_true(j->spsa.params[2].r_end == 0.003);
    snprintf(text, sizeof text, "%sparams = psq\n", head);
    assert_int_equal(load_text(f, text), JOB_OK);
    int psq = 0;
    for (int id = 0; id < PARAM_NB; id++)
        psq += params_is_psq(id);
    assert_int_equal(f->job->spsa.param_count, psq);

    snprintf(text, sizeof text, "%sparams = horse_mgx\n", head);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, ":10: [spsa] params: 'horse_mgx' is not an engine weight"));
    snprintf(text, sizeof text, "%sparam = horse_mg, 900, 100, 600, 10, 0.002\n", head);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[spsa] param: horse_mg: need"));
    snprintf(text, sizeof text, "%sparam = horse_mg, 300, 200\n", head);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "expected NAME, start, min, max, c_end, r_end"));
    snprintf(text, sizeof text, "%s", head);
    assert_int_equal(load_text(f, text), JOB_ERR_MISSING);
    assert_non_null(strstr(f->why, "[spsa] params: no parameters"));
    snprintf(text, sizeof text, "%sparams = eval\n[job]\nrepeat = false\n", head);
    assert_int_equal(load_text(f, text), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "repeat = true"));
}

/// A book job: no engines and no rounds; [book] keys with their defaults; an engine section,
/// an inverted ply range or window, and a bad value are refused with the line and key.
static void test_book_section(void **state)
{
    Fixture *f = *state;
    write_text(f, "[job]\nkind = book\n[book]\npositions = 500\nplies_max = 12\n",
               "score_min = 80\nscore_max = 150\neither_side = yes\nmoves =\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    const JobConfig *j = f->job;
    assert_int_equal(j->kind, JOB_BOOK);
    assert_int_equal(j->book.positions, 500);
    assert_int_equal(j->book.plies_min, 6);
    assert_int_equal(j->book.plies_max, 12);
    assert_int_equal(j->book.score_min, 80);
    assert_true(j->book.either_side);
    assert_string_equal(j->book.epd, "book.epd");
    assert_string_equal(j->book.moves, "");
    write_text(f, "[job]\nkind = book\n[engine a]\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "builtin engine"));
    write_text(f, "[job]\nkind = book\n[book]\nplies_min = 9\n", "plies_max = 8\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[book] plies_max: plies_min (9) is above plies_max (8)"));
    write_text(f, "[job]\nkind = book\n[book]\n", "unit = 300\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, ":4: [book] unit: 300 is out of range 1..256"));
}

/// [book] score_view, family_plies and family_cap are read (defaults: red, 2, no cap); an
/// unknown view is refused.
static void test_book_variety_keys(void **state)
{
    Fixture *f = *state;
    write_text(f, "[job]\nkind = book\n[book]\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_false(f->job->book.side_to_move);
    assert_int_equal(f->job->book.family_plies, 2);
    assert_int_equal(f->job->book.family_cap, 0);
    write_text(f, "[job]\nkind = book\n[book]\nscore_view = side_to_move\n",
               "family_plies = 3\nfamily_cap = 7\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_true(f->job->book.side_to_move);
    assert_int_equal(f->job->book.family_plies, 3);
    assert_int_equal(f->job->book.family_cap, 7);
    write_text(f, "[job]\nkind = book\n[book]\n", "score_view = black\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[book] score_view"));
}

/// Builtin set names are kept as written (not taken as paths), for any kind; an unknown one
/// is refused.
static void test_openings_builtin(void **state)
{
    Fixture *f = *state;
    const char *match[] = {"job.kind=match"};
    assert_int_equal(load(f, "", match, 1), JOB_OK);
    assert_string_equal(f->job->openings_file, "");
    assert_int_equal(load(f, "[openings]\nfile = builtin:balanced\n", NULL, 0), JOB_OK);
    assert_string_equal(f->job->openings_file, "builtin:balanced");
    assert_int_equal(load(f, "[openings]\nfile = builtin:unbalanced\n", match, 1), JOB_OK);
    assert_string_equal(f->job->openings_file, "builtin:unbalanced");
    expect_file_error(state, "[openings]\nfile = builtin:lopsided\n", JOB_ERR_VALUE,
                      ":9: [openings] file: 'builtin:lopsided': no such embedded set");
}

/// Output files are plain names inside [output] dir: a job file cannot write elsewhere.
static void test_output_names_confined(void **state)
{
    expect_file_error(state, "[output]\npgn = ../games.pgn\n", JOB_ERR_VALUE,
                      ":9: [output] pgn: '../games.pgn': a file name in [output] dir, not a path");
    expect_file_error(state, "[output]\njournal = /etc/x\n", JOB_ERR_VALUE,
                      ":9: [output] journal: '/etc/x': a file name");
    expect_file_error(state, "[output]\nresult = ..\n", JOB_ERR_VALUE,
                      ":9: [output] result: '..': a file name");
    Fixture *f = *state;
    assert_int_equal(load(f, "[output]\ndir = /tmp/somewhere/deep\npgn = g.pgn\n", NULL, 0),
                     JOB_OK);
}

/// A Texel job: no engines, a dataset; `params` limits the fitted weights.
static void test_texel_section(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = texel\n[texel]\ndata = x.xqd\nepochs = 5\n"
                                  "params = horse_mg psq\n"),
                     JOB_OK);
    assert_int_equal(f->job->kind, JOB_TEXEL);
    assert_int_equal(f->job->texel.epochs, 5);
    assert_true(f->job->texel.tuned[params_find("horse_mg")]);
    assert_false(f->job->texel.tuned[params_find("horse_eg")]);
    assert_int_equal(load_text(f, "[job]\nkind = texel\n[texel]\nepochs = 5\n"), JOB_ERR_MISSING);
    assert_non_null(strstr(f->why, "[texel] data: missing"));
    assert_int_equal(load_text(f, "[job]\nkind = texel\n[engine a]\n[texel]\ndata = x\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "remove the engine sections"));
}

/// [datagen] keys take their values and defaults; a datagen job has one builtin engine with
/// a depth or nodes limit and no rounds, and each fault is named by its key.
static void test_datagen_section(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\nnodes = 500\n"
                                  "[datagen]\npositions = 300\nmin_ply = 4\nunit = 2\n"),
                     JOB_OK);
    JobConfig *j = f->job;
    assert_int_equal(j->kind, JOB_DATAGEN);
    assert_int_equal(j->datagen.positions, 300);
    assert_int_equal(j->datagen.random_plies, 8);
    assert_int_equal(j->datagen.min_ply, 4);
    assert_int_equal(j->datagen.unit, 2);
    assert_string_equal(j->datagen.file, "positions.xqp");
    assert_int_equal(j->players[0].tc.nodes, 500);
    assert_int_equal(job_pairing_count(j), 0);
    // The filters: the anchors' two on, the early-ply and WDL ones off, until set.
    assert_true(j->datagen.skip_capture && j->datagen.skip_in_check);
    assert_int_equal(j->datagen.skip_early_plies, 0);
    assert_int_equal(j->datagen.skip_wdl, 0);
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\nnodes = 500\n"
                                  "[datagen]\nskip_capture = false\nskip_in_check = false\n"
                                  "skip_early_plies = 12\nskip_wdl = 400\n"),
                     JOB_OK);
    assert_true(!j->datagen.skip_capture && !j->datagen.skip_in_check);
    assert_int_equal(j->datagen.skip_early_plies, 12);
    assert_int_equal(j->datagen.skip_wdl, 400);
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\nnodes = 500\n"
                                  "[datagen]\nskip_wdl = -1\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[datagen] skip_wdl"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\ntc = 10+0.1\n"),
                     JOB_ERR_MISSING);
    assert_non_null(strstr(f->why, "[time] depth: datagen searches each move"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine a]\n[engine b]\n[time]\n"
                                  "depth = 3\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "plays itself (found 2 engines)"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\nrounds = 5\n[engine e]\n[time]\n"
                                  "depth = 3\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[job] rounds: a datagen job ends at"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 3\n"
                                  "[datagen]\npositions = 0\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, ":7: [datagen] positions:"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 3\n"
                                  "[datagen]\nfile = ../x.xqp\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[datagen] file: '../x.xqp': a file name"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 3\n"
                                  "[datagen]\nfile = journal.xqj\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "every output file needs its own name"));
    assert_int_equal(load_text(f, "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 3\n"
                                  "[datagen]\nplies = 3\n"),
                     JOB_ERR_KEY);
    assert_non_null(strstr(f->why, "[datagen] plies: unknown key"));
}

/// [doe] root: a FEN written back as the board writes it (one identity for every spelling),
/// part of the identity only when set; a malformed FEN or a position without a legal move
/// refused, naming the key and what is wrong.
static void test_doe_root(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = doe\n"), JOB_OK);
    Identity id;
    assert_int_equal(identity_of_job(f->job, 1, &id, NULL, 0), IDENTITY_OK);
    assert_null(identity_get(&id, "doe.root"));
    identity_destroy(&id);
    assert_int_equal(load_text(f, "[job]\nkind = doe\n[doe]\nroot = rnbakabnr/9/1c5c1/p1p1p1p1p/"
                                  "9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR   b  -  -  3  2\n"),
                     JOB_OK);
    char fen[JOB_TEXT_MAX];
    snprintf(fen, sizeof fen, "%s", f->job->doe.root);
    assert_int_equal(
        strncmp(fen, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b ", 62), 0);
    assert_int_equal(identity_of_job(f->job, 1, &id, NULL, 0), IDENTITY_OK);
    assert_string_equal(identity_get(&id, "doe.root"), fen);
    identity_destroy(&id);
    assert_int_equal(load_text(f, "[job]\nkind = doe\n[doe]\nroot = rnbakabnr/9/9 w\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[doe] root: 'rnbakabnr/9/9 w': "));
    assert_int_equal(
        load_text(f, "[job]\nkind = doe\n[doe]\nroot = 3k5/3R5/3R5/9/9/9/9/9/9/4K4 b\n"),
        JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "the side to move has no legal move"));
}

/// [train] keys: data is one or more paths from the job file's directory; defaults for the
/// rest; no engines, a data line required, ranges and unknown feature sets refused by key.
static void test_train_section(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = a.xqp /abs/b.xqp\n"
                                  "hidden = 256\nlambda = 0.5\n"),
                     JOB_OK);
    JobConfig *j = f->job;
    assert_int_equal(j->kind, JOB_TRAIN);
    assert_int_equal(j->train.data_count, 2);
    assert_string_equal(j->train.data[1], "/abs/b.xqp");
    char want[JOB_TEXT_MAX + 16];
    snprintf(want, sizeof want, "%s/a.xqp", j->file_dir);
    assert_string_equal(j->train.data[0], want);
    assert_int_equal(j->train.hidden, 256);
    assert_true(j->train.lambda == 0.5);
    assert_int_equal(j->train.epochs, 10);
    assert_true(j->train.val > 0 && j->train.val < 0.5);
    assert_string_equal(j->train.net, "net.nnue");
    assert_string_equal(j->train.loss, "train-loss.csv");
    assert_string_equal(j->train.features, "xq1");
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = x\nfeatures = xq2\n"),
                     JOB_OK);
    assert_string_equal(f->job->train.features, "xq2");
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = x\nfeatures = xq3\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[train] features: 'xq3': xq1"));
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\nepochs = 3\n"), JOB_ERR_MISSING);
    assert_non_null(strstr(f->why, "[train] data: missing"));
    assert_int_equal(load_text(f, "[job]\nkind = train\n[engine a]\n[train]\ndata = x\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "remove the engine sections"));
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = x\nlambda = 2\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, ":5: [train] lambda:"));
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = x\nnet = a/b\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[train] net: 'a/b': a file name"));
    assert_int_equal(load_text(f, "[job]\nkind = train\n[train]\ndata = x\nloss = net.nnue\n"),
                     JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "every output file needs its own name"));
}

/// The shared engine parser gives play's words and a job file's keys the same meanings.
static void test_engine_spec(void **state)
{
    (void)state;
    PlayerConfig *pc = calloc(1, sizeof *pc);
    TimeControl tc = {0};
    char why[256];
    assert_non_null(pc);
    assert_int_equal(
        engine_spec_set(pc, &tc, "cmd", "/usr/games/fairy-stockfish", NULL, why, sizeof why),
        ENGINE_SPEC_OK);
    assert_int_equal(pc->proto, PROTO_UCI);
    assert_int_equal(engine_spec_word(pc, &tc, "proto=ucci", why, sizeof why), ENGINE_SPEC_OK);
    assert_int_equal(pc->proto, PROTO_UCCI);
    assert_int_equal(engine_spec_word(pc, &tc, "st=0.5", why, sizeof why), ENGINE_SPEC_OK);
    assert_int_equal(tc.movetime_ms, 500);
    assert_int_equal(engine_spec_set(pc, &tc, "tc", "40/60+0.5", NULL, why, sizeof why),
                     ENGINE_SPEC_OK);
    assert_int_equal(tc.moves, 40);
    assert_int_equal(tc.base_ms, 60000);
    assert_int_equal(engine_spec_word(pc, &tc, "builtin", why, sizeof why), ENGINE_SPEC_OK);
    assert_int_equal(pc->proto, PROTO_BUILTIN);
    assert_int_equal(engine_spec_set(pc, &tc, "nodes", "0", NULL, why, sizeof why),
                     ENGINE_SPEC_ERR_VALUE);
    assert_string_equal(why, "0 is out of range 1..2000000000");
    assert_int_equal(engine_spec_word(pc, &tc, "colour=red", why, sizeof why), ENGINE_SPEC_ERR_KEY);
    assert_string_equal(why, "unknown engine setting 'colour'");
    assert_int_equal(engine_spec_word(pc, &tc, "depth", why, sizeof why), ENGINE_SPEC_ERR_KEY);
    assert_int_equal(engine_spec_word(pc, &tc, "option.=3", why, sizeof why),
                     ENGINE_SPEC_ERR_VALUE);
    free(pc);
}

/// A repeated option.NAME replaces the earlier value (the last wins), on play's command line
/// as in a job file, and other options keep their order.
static void test_option_last_wins(void **state)
{
    Fixture *f = *state;
    PlayerConfig *pc = calloc(1, sizeof *pc);
    TimeControl tc = {0};
    char why[256];
    assert_non_null(pc);
    const char *words[] = {"option.Hash=16", "option.Threads=2", "option.Hash=64"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(engine_spec_word(pc, &tc, words[i], why, sizeof why), ENGINE_SPEC_OK);
    assert_int_equal(pc->option_count, 2);
    assert_string_equal(pc->options[0].name, "Hash");
    assert_string_equal(pc->options[0].value, "64");
    assert_string_equal(pc->options[1].value, "2");
    free(pc);
    const char *const match = "job.kind=match"; // not a second [job] section (refused)
    assert_int_equal(load(f,
                          "[engine c]\noption.Hash = 16\n"
                          "option.Threads = 2\noption.Hash = 64\n[each]\noption.Hash = 8\n",
                          &match, 1),
                     JOB_OK);
    const PlayerConfig *c = &f->job->players[2].cfg;
    assert_int_equal(c->option_count, 2);
    assert_string_equal(option_of(c, "Hash")->value, "64");
    assert_string_equal(option_of(&f->job->players[0].cfg, "Hash")->value, "8");
}

/// Makes dir (mode 0700); the directory must not exist yet.
static void make_dir(const char *dir) { assert_int_equal(mkdir(dir, 0700), 0); }

/// Relative paths in a job file are taken from the file's directory, wherever the job is
/// loaded from; absolute paths and bare command names stay; override paths stay as typed.
static void test_relative_paths(void **state)
{
    Fixture *f = *state;
    char root[] = "/tmp/xq-test-jobdir-XXXXXX", sub[64], path[128], want[1200];
    assert_non_null(mkdtemp(root));
    snprintf(sub, sizeof sub, "%s/jobs", root);
    make_dir(sub);
    char *real = realpath(sub, NULL), *real_root = realpath(root, NULL);
    assert_non_null(real);
    assert_non_null(real_root);
    snprintf(path, sizeof path, "%s/game.ini", sub);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("[job]\nkind = match\nrounds = 2\n"
          "[engine a]\nparams = w/a.txt\ndir = ./run\n"
          "[engine b]\ncmd = ../engines/fsf\n"
          "[engine c]\ncmd = stockfish\nparams = /abs/w.txt\n"
          "[time]\nnodes = 100\n"
          "[openings]\nfile = ./book.epd\n"
          "[report]\ntoken_file = secret/token\nca_file = ../ca.pem\n"
          "[output]\ndir = ../out/x\n",
          fp);
    fclose(fp);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    const JobConfig *j = f->job;
    assert_string_equal(j->file_dir, real);
    snprintf(want, sizeof want, "%s/w/a.txt", real);
    assert_string_equal(j->players[0].cfg.weights_file, want);
    snprintf(want, sizeof want, "%s/run", real);
    assert_string_equal(j->players[0].cfg.workdir, want);
    snprintf(want, sizeof want, "%s/engines/fsf", real_root);
    assert_string_equal(j->players[1].cfg.cmd, want);
    assert_string_equal(j->players[2].cfg.cmd, "stockfish"); // looked up as before
    assert_string_equal(j->players[2].cfg.weights_file, "/abs/w.txt");
    snprintf(want, sizeof want, "%s/book.epd", real);
    assert_string_equal(j->openings_file, want);
    snprintf(want, sizeof want, "%s/secret/token", real);
    assert_string_equal(j->report.token_file, want);
    snprintf(want, sizeof want, "%s/ca.pem", real_root);
    assert_string_equal(j->report.ca_file, want);
    snprintf(want, sizeof want, "%s/out/x", real_root);
    assert_string_equal(j->output.dir, want);

    // The same keys given as overrides are the shell's: kept as typed.
    const char *ovr[] = {"output.dir=out/y", "openings.file=o.epd", "engine.a.params=p.txt",
                         "engine.b.cmd=./fsf", "report.ca_file=ca.pem"};
    assert_int_equal(job_load(path, ovr, 5, f->job, f->why, sizeof f->why), JOB_OK);
    assert_string_equal(j->output.dir, "out/y");
    assert_string_equal(j->openings_file, "o.epd");
    assert_string_equal(j->players[0].cfg.weights_file, "p.txt");
    assert_string_equal(j->players[1].cfg.cmd, "./fsf");
    assert_string_equal(j->report.ca_file, "ca.pem");

    // [texel] data and start, [book] seed_book and existing.
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("[job]\nkind = texel\n[texel]\ndata = d.xqd\nstart = ../w.txt\n", fp);
    fclose(fp);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    snprintf(want, sizeof want, "%s/d.xqd", real);
    assert_string_equal(j->texel.data, want);
    snprintf(want, sizeof want, "%s/w.txt", real_root);
    assert_string_equal(j->texel.start, want);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("[job]\nkind = book\n[book]\nseed_book = s.epd\nexisting = old/b.epd\n", fp);
    fclose(fp);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    snprintf(want, sizeof want, "%s/s.epd", real);
    assert_string_equal(j->book.seed_book, want);
    snprintf(want, sizeof want, "%s/old/b.epd", real);
    assert_string_equal(j->book.existing, want);

    unlink(path);
    rmdir(sub);
    rmdir(root);
    free(real);
    free(real_root);
}

/// Two output keys naming one file are refused with both keys named; so are the report's own
/// names; names a kind does not write do not count.
static void test_output_names_distinct(void **state)
{
    expect_file_error(state, "[output]\nresult = journal.xqj\n", JOB_ERR_VALUE,
                      ": [output] result: 'journal.xqj' is also the name of [output] journal");
    expect_file_error(state, "[output]\npositions = games.pgn\n", JOB_ERR_VALUE,
                      ": [output] positions: 'games.pgn' is also the name of [output] pgn");
    expect_file_error(state, "[output]\npgn = report.html\n", JOB_ERR_VALUE,
                      ": [output] pgn: 'report.html' is the name of the run report's page");
    expect_file_error(state, "[output]\nresult = report.json\n", JOB_ERR_VALUE,
                      ": [output] result: 'report.json' is the name of the run report");
    Fixture *f = *state;
    write_text(f, "[job]\nkind = book\n[book]\nhtml = book.epd\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[book] html: 'book.epd' is also the name of [book] epd"));
    write_text(f, "[job]\nkind = texel\n[texel]\ndata = x\nloss = texel-weights.txt\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(strstr(f->why, "[texel] loss: 'texel-weights.txt' is also the name of "
                                   "[texel] weights"));
    write_text(
        f, "[job]\nkind = spsa\nrounds = 5\n[engine e]\noption.UseNNUE = 0\n[time]\nnodes = 9\n",
        "[spsa]\nparams = horse_mg\ntrajectory = result.json\n");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE);
    assert_non_null(
        strstr(f->why, "[spsa] trajectory: 'result.json' is also the name of [output] result"));
    // A book job writes no PGN: its pgn name may be anything.
    write_text(f, "[job]\nkind = book\n[output]\npgn = book.epd\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    // An override is checked as well.
    const char *ovr = "output.journal=games.pgn";
    assert_int_equal(load(f, "", &ovr, 1), JOB_ERR_VALUE);
    assert_non_null(
        strstr(f->why, "[output] journal: 'games.pgn' is also the name of [output] pgn"));
}

/// Pairings: one for two engines, N-1 in a gauntlet, N(N-1)/2 in a round robin; a job whose
/// rounds x pairings exceeds JOB_PAIRS_MAX is refused with the limit named.
static void test_job_size(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    assert_int_equal(job_pairing_count(f->job), 1);
    assert_int_equal(job_pairs_total(f->job), 10);
    char text[512] = "[job]\nkind = match\nrounds = 100000000\n[time]\nnodes = 9\n";
    for (int i = 0; i < 8; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "[engine e%d]\n", i);
    write_text(f, text, "");
    const char *small = "job.rounds=1000";
    assert_int_equal(job_load(f->path, &small, 1, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_pairing_count(f->job), 7);
    assert_int_equal(job_pairs_total(f->job), 7000);
    const char *rr[] = {"job.rounds=1000", "job.tournament=roundrobin"};
    assert_int_equal(job_load(f->path, rr, 2, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_pairing_count(f->job), 28);
    assert_int_equal(job_pairs_total(f->job), 28000);
    const char *big = "job.tournament=roundrobin";
    expect(f, job_load(f->path, &big, 1, f->job, f->why, sizeof f->why), JOB_ERR_VALUE, false,
           ": [job] rounds: 100000000 rounds x 28 pairings = 2800000000 game pairs, above the "
           "limit of 536870912 (JOB_PAIRS_MAX)");
    assert_int_equal(load_text(f, "[job]\nkind = texel\n[texel]\ndata = x\n"), JOB_OK);
    assert_int_equal(job_pairing_count(f->job), 0);
    assert_int_equal(job_pairs_total(f->job), 0);
}

/// [time] scale = bench with reference_nps and nps_floor loads, from the file (beside the
/// time control, which they leave alone) and from overrides; scale = none is the default.
static void test_time_scale_keys(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    assert_false(f->job->scale.bench);
    assert_int_equal(f->job->scale.reference_nps, 0);
    assert_int_equal(load_text(f, "[job]\nkind = match\nrounds = 2\n[engine a]\n[engine b]\n"
                                  "[time]\ntc = 2+0.02\nscale = bench\nreference_nps = 900000\n"
                                  "nps_floor = 150000\n"),
                     JOB_OK);
    const JobConfig *j = f->job;
    assert_true(j->scale.bench);
    assert_int_equal(j->scale.reference_nps, 900000);
    assert_int_equal(j->scale.nps_floor, 150000);
    assert_int_equal(j->players[1].tc.base_ms, 2000);
    assert_int_equal(j->players[1].tc.inc_ms, 20);
    const char *ovr[] = {"time.scale=bench", "time.reference_nps=2000000", "time.scale=none",
                         "time.scale=bench"};
    assert_int_equal(load(f, "", ovr, 4), JOB_OK);
    assert_true(f->job->scale.bench);
    assert_int_equal(f->job->scale.reference_nps, 2000000);
    assert_int_equal(f->job->players[0].tc.nodes, 1000);
}

/// scale = bench without reference_nps, an unknown scale, a reference of 0, a negative
/// floor, a non-number, and scale = bench in a job without games are refused, each naming
/// its key.
/// [openings] format and [output] pgn_notation take their names only (an unknown value is
/// refused, naming it and the choices); [openings] plies is 0..64.
static void test_openings_pgn_keys(void **state)
{
    Fixture *f = *state;
    expect_override_error(state, "openings.format=foo", JOB_ERR_VALUE,
                          "override 'openings.format=foo': [openings] format: 'foo': expected one "
                          "of epd, pgn");
    expect_override_error(state, "output.pgn_notation=san", JOB_ERR_VALUE,
                          "override 'output.pgn_notation=san': [output] pgn_notation: 'san': "
                          "expected one of coordinate, iccs, wxf");
    expect_override_error(state, "openings.plies=65", JOB_ERR_VALUE,
                          "override 'openings.plies=65': [openings] plies: 65 is out of range "
                          "0..64");
    const char *ovr[] = {"openings.format=pgn", "openings.plies=6", "output.pgn_notation=wxf"};
    assert_int_equal(load(f, "", ovr, 3), JOB_OK);
    assert_int_equal(f->job->openings_format, OPENINGS_FORMAT_PGN);
    assert_int_equal(f->job->openings_plies, 6);
    assert_int_equal(f->job->output.pgn_notation, PGN_NOTATION_WXF);
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    assert_int_equal(f->job->openings_format, OPENINGS_FORMAT_EPD);
    assert_int_equal(f->job->openings_plies, 0);
    assert_int_equal(f->job->output.pgn_notation, PGN_NOTATION_COORDINATE);
}

static void test_time_scale_errors(void **state)
{
    Fixture *f = *state;
    const char *bench = "time.scale=bench";
    expect(f, load(f, "", &bench, 1), JOB_ERR_MISSING, false,
           ": [time] reference_nps: missing: scale = bench needs the bench nodes/s of the "
           "machine the time control is meant for");
    expect_override_error(state, "time.scale=fast", JOB_ERR_VALUE,
                          "override 'time.scale=fast': [time] scale: 'fast': expected one of "
                          "none, bench");
    expect_override_error(state, "time.reference_nps=0", JOB_ERR_VALUE,
                          "override 'time.reference_nps=0': [time] reference_nps: 0 is out of "
                          "range 1..1000000000000");
    expect_override_error(state, "time.nps_floor=-5", JOB_ERR_VALUE,
                          "override 'time.nps_floor=-5': [time] nps_floor: -5 is out of range "
                          "0..1000000000000");
    expect_override_error(state, "time.reference_nps=1e6", JOB_ERR_VALUE,
                          "override 'time.reference_nps=1e6': [time] reference_nps: '1e6' is "
                          "not an integer");
    expect(f,
           load_text(f, "[job]\nkind = texel\n[texel]\ndata = x\n[time]\nscale = bench\n"
                        "reference_nps = 5\n"),
           JOB_ERR_VALUE, false,
           ": [time] scale: bench scales the clocks of games: a texel job plays none");
}

/// A worker's scale is reference / its own nps (2x slower: twice the time), 1 without a
/// reference, clamped to [1/JOB_SCALE_MAX, JOB_SCALE_MAX]; scaling a time control multiplies
/// base, increment and movetime (never down to 0) and keeps depth, nodes and the margin.
static void test_time_scale_math(void **state)
{
    (void)state;
    assert_true(job_time_scale(1000000, 500000) == 2.0);
    assert_true(job_time_scale(1000000, 4000000) == 0.25);
    assert_true(job_time_scale(0, 123456) == 1.0);
    assert_true(job_time_scale(1000000, 0) == JOB_SCALE_MAX);
    assert_true(job_time_scale(1000000000, 10) == JOB_SCALE_MAX);
    assert_true(job_time_scale(10, 1000000000) == 1.0 / JOB_SCALE_MAX);
    TimeControl tc = {2000, 20, 40, 0, 7, 5000, 100, 3000};
    TimeControl s = job_scale_time_control(&tc, 3.0);
    assert_int_equal(s.base_ms, 6000);
    assert_int_equal(s.inc_ms, 60);
    assert_int_equal(s.moves, 40);
    assert_int_equal(s.movetime_ms, 0);
    assert_int_equal(s.depth, 7);
    assert_int_equal(s.nodes, 5000);
    assert_int_equal(s.margin_ms, 100);
    assert_int_equal(s.fixed_deadline_ms, 3000);
    TimeControl st = {0, 0, 0, 333, 0, 0, 100, 0};
    assert_int_equal(job_scale_time_control(&st, 0.5).movetime_ms, 167);
    assert_int_equal(job_scale_time_control(&tc, 0.01).inc_ms, 1);
    assert_int_equal(job_scale_time_control(&tc, 0.01).base_ms, 20);
}

/// [job] resume, drain_grace and coordinator_plays (how a run starts and stops) default to
/// off, take their values, and refuse bad ones naming the key.
static void test_run_control_keys(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    assert_false(f->job->resume_auto);
    assert_int_equal(f->job->drain_grace, 0);
    assert_false(f->job->coordinator_plays);
    const char *const on[] = {"job.resume=auto", "job.drain_grace=25",
                              "job.coordinator_plays=true"};
    assert_int_equal(load(f, "", on, 3), JOB_OK);
    assert_true(f->job->resume_auto);
    assert_int_equal(f->job->drain_grace, 25);
    assert_true(f->job->coordinator_plays);
    const char *const off[] = {"job.resume=off"};
    assert_int_equal(load(f, "", off, 1), JOB_OK);
    assert_false(f->job->resume_auto);
    expect_override_error(state, "job.resume=yes", JOB_ERR_VALUE,
                          "override 'job.resume=yes': [job] resume: 'yes': expected auto or off");
    expect_override_error(state, "job.drain_grace=-1", JOB_ERR_VALUE,
                          "override 'job.drain_grace=-1': [job] drain_grace:");
    expect_override_error(state, "job.drain_grace=3601", JOB_ERR_VALUE,
                          "override 'job.drain_grace=3601': [job] drain_grace:");
}

/// Every plain key (a row of job/job_keys.def) is documented in jobs/README.md: named there in
/// backquotes: alone (`name`), as a setting (`name = ...`) or with its section (`section.name`,
/// `[section] name`).
static void test_keys_documented(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/README.md", XQ_JOBS_DIR);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    enum { README_MAX = 1 << 20 };
    char *text = calloc(1, README_MAX + 1);
    assert_non_null(text);
    text[fread(text, 1, README_MAX, fp)] = '\0';
    fclose(fp);
    int n = 0, missing = 0;
    const JobKeyDef *keys = job_keys(&n);
    assert_true(n > 90);
    for (int i = 0; i < n; i++) {
        char a[128], b[128], c[128], d[128];
        snprintf(a, sizeof a, "`%s`", keys[i].name);
        snprintf(b, sizeof b, "`%s =", keys[i].name);
        snprintf(c, sizeof c, "`%s.%s", keys[i].section, keys[i].name);
        snprintf(d, sizeof d, "`[%s] %s", keys[i].section, keys[i].name);
        if (!strstr(text, a) && !strstr(text, b) && !strstr(text, c) && !strstr(text, d)) {
            print_error("jobs/README.md does not document [%s] %s\n", keys[i].section,
                        keys[i].name);
            missing++;
        }
    }
    free(text);
    assert_int_equal(missing, 0);
}

/// Every numeric row refuses a value below its range and one above it, and every string row
/// that may not be empty refuses an empty value, each time naming the row's section and key.
static void test_key_rows_refuse(void **state)
{
    Fixture *f = *state;
    int n = 0;
    const JobKeyDef *keys = job_keys(&n);
    for (int i = 0; i < n; i++) {
        const JobKeyDef *k = &keys[i];
        char ovr[3][256], want[1024];
        int count = 0;
        if (k->type == KEY_INT || k->type == KEY_I64 || k->type == KEY_U64) {
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=%.0f", k->section, k->name, k->lo - 1);
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=%.0f", k->section, k->name, k->hi + 1);
        } else if (k->type == KEY_DBL) {
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=%.17g", k->section, k->name, k->lo - 1);
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=%.17g", k->section, k->name,
                     2 * k->hi + 1);
        } else if (k->type == KEY_BOOL) {
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=maybe", k->section, k->name);
        } else if (k->flags & KEY_REQUIRED) {
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=", k->section, k->name);
        }
        if (k->flags & KEY_FILE_NAME)
            snprintf(ovr[count++], sizeof ovr[0], "%s.%s=a/b", k->section, k->name);
        for (int m = 0; m < count; m++) {
            const char *o = ovr[m];
            snprintf(want, sizeof want, "override '%s': [%s] %s: ", o, k->section, k->name);
            JobStatus st = load(f, "", &o, 1);
            if (st != JOB_ERR_VALUE || strncmp(f->why, want, strlen(want)))
                fail_msg("%s: got %d '%s'", o, st, f->why);
        }
    }
}

/// The defaults of the plain keys as the job model has always had them (job_keys.def's
/// default column, before any file is read).
static void test_key_defaults(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    const JobConfig *j = f->job;
    assert_true(j->repeat);
    assert_int_equal(j->rules.counting_default, 60);
    assert_false(j->draw.enabled);
    assert_int_equal(j->draw.movenumber, 40);
    assert_int_equal(j->draw.movecount, 8);
    assert_int_equal(j->draw.score, 10);
    assert_false(j->resign.enabled);
    assert_false(j->resign.twosided);
    assert_int_equal(j->resign.movecount, 3);
    assert_int_equal(j->resign.score, 600);
    assert_int_equal(j->seed, 1);
    assert_true(j->sprt.elo0 == 0 && j->sprt.elo1 == 2);
    assert_true(j->sprt.alpha == 0.05 && j->sprt.beta == 0.05);
    assert_string_equal(j->output.pgn, "games.pgn");
    assert_string_equal(j->output.journal, "journal.xqj");
    assert_string_equal(j->output.result, "result.json");
    assert_string_equal(j->output.positions, "");
    assert_int_equal(j->report.interval_s, 60);
    assert_int_equal(j->report.connect_timeout_s, 10);
    assert_int_equal(j->report.timeout_s, 60);
    assert_int_equal(j->report.attempts, 5);
    assert_true(j->report.backoff_s == 1 && j->report.backoff_max_s == 60);
    assert_true(j->report.final_wait_s == 30);
    assert_string_equal(j->report.spool, "spool");
    assert_int_equal(j->book.positions, 1000);
    assert_int_equal(j->book.plies_min, 6);
    assert_int_equal(j->book.plies_max, 10);
    assert_int_equal(j->book.multipv, 6);
    assert_int_equal(j->book.select_depth, 3);
    assert_int_equal(j->book.margin, 40);
    assert_int_equal(j->book.verify_depth, 7);
    assert_int_equal(j->book.score_min, -60);
    assert_int_equal(j->book.score_max, 60);
    assert_int_equal(j->book.family_plies, 2);
    assert_int_equal(j->book.family_cap, 0);
    assert_int_equal(j->book.unit, 16);
    assert_int_equal(j->book.hash_mb, 4);
    assert_int_equal(j->book.seed, 1);
    assert_int_equal(j->book.max_candidates, 0);
    assert_string_equal(j->book.epd, "book.epd");
    assert_string_equal(j->book.moves, "book.xqb");
    assert_string_equal(j->book.html, "book.html");
    assert_true(j->spsa.a_ratio == 0.1 && j->spsa.alpha == 0.602);
    assert_true(j->spsa.gamma == 0.101 && j->spsa.r_end == 0.002);
    assert_string_equal(j->spsa.weights, "spsa-weights.txt");
    assert_string_equal(j->spsa.trajectory, "spsa.csv");
    assert_int_equal(j->texel.epochs, 200);
    assert_true(j->texel.lr == 2.0 && j->texel.l2 == 10 && j->texel.k == 0);
    assert_int_equal(j->texel.checkpoint_every, 25);
    assert_true(j->texel.checkpoint_seconds == 60);
    assert_string_equal(j->texel.weights, "texel-weights.txt");
    assert_string_equal(j->texel.loss, "texel-loss.csv");
    assert_int_equal(j->datagen.positions, 100000);
    assert_int_equal(j->datagen.random_plies, 8);
    assert_int_equal(j->datagen.unit, 1);
    assert_int_equal(j->datagen.seed, 1);
    assert_string_equal(j->datagen.file, "positions.xqp");
    assert_int_equal(j->train.hidden, 128);
    assert_int_equal(j->train.epochs, 10);
    assert_int_equal(j->train.batch, 16384);
    assert_true(j->train.lr == 0.001 && j->train.lambda == 0.75 && j->train.val == 0.05);
    assert_int_equal(j->train.seed, 1);
    assert_string_equal(j->train.net, "net.nnue");
    assert_string_equal(j->train.loss, "train-loss.csv");
}

static int text_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/// Loads text (or fails the test) and checks that job_output_files gives the names of want,
/// a comma-separated list (empty names written as nothing), in any order.
static void expect_output_files(Fixture *f, const char *text, const char *want)
{
    write_text(f, text, "");
    if (job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why) != JOB_OK)
        fail_msg("%s", f->why);
    const char *names[JOB_OUTPUTS_MAX], *expected[JOB_OUTPUTS_MAX];
    char scratch[JOB_TEXT_MAX + 8], list[512];
    int n = job_output_files(f->job, names, JOB_OUTPUTS_MAX, scratch, sizeof scratch), m = 0;
    snprintf(list, sizeof list, "%s", want);
    for (char *p = list, *comma;; p = comma + 1) {
        comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        expected[m++] = p;
        if (!comma)
            break;
    }
    qsort(names, (size_t)n, sizeof *names, text_cmp);
    qsort(expected, (size_t)m, sizeof *expected, text_cmp);
    assert_int_equal(n, m);
    for (int i = 0; i < n; i++)
        assert_string_equal(names[i], expected[i]);
}

/// Every kind has its row (name, engines rule, collective, checkpoint); the files a run of each
/// kind writes in output.dir are the set that --fresh moved aside before the table (the report
/// spool not among them); the state file is the journal or the collective kind's checkpoint.
static void test_kind_rows(void **state)
{
    Fixture *f = *state;
    for (int k = 0; k < JOB_KIND_NB; k++) {
        const JobKindDef *d = job_kind_def((JobKind)k);
        assert_non_null(d);
        assert_string_equal(d->name, job_kind_name((JobKind)k));
        assert_non_null(d->validate);
        assert_non_null(d->outputs);
        assert_int_equal(d->collective, d->checkpoint != NULL);
        assert_true(!d->collective || !d->plays_games);
    }
    assert_null(job_kind_def(JOB_KIND_NB));
    assert_true(job_kind_def(JOB_TEXEL)->collective && job_kind_def(JOB_TRAIN)->collective);
    assert_string_equal(job_kind_def(JOB_TRAIN)->checkpoint, "train.ckpt");
    const char *const games = "[engine a]\n[engine b]\n[time]\nnodes = 9\n[job]\nrounds = 3\n";
    char text[512];
    snprintf(text, sizeof text, "%s%s", games, "kind = sprt\n[output]\npositions = p.xqd\n");
    expect_output_files(f, text, "report.json,report.html,journal.xqj,result.json,games.pgn,p.xqd");
    assert_string_equal(job_state_file(f->job), "journal.xqj");
    snprintf(text, sizeof text, "%s%s", games,
             "kind = match\n[report]\nurls = http://localhost:1/x\n[output]\njournal = j\n");
    expect_output_files(f, text, "report.json,report.html,j,result.json,games.pgn,");
    assert_string_equal(job_state_file(f->job), "j");
    expect_output_files(f,
                        "[job]\nkind = spsa\nrounds = 5\n[engine e]\noption.UseNNUE = 0\n[time]\n"
                        "nodes = 9\n[spsa]\nparams = horse_mg\n",
                        "report.json,report.html,journal.xqj,result.json,games.pgn,,"
                        "spsa-weights.txt,spsa.csv");
    expect_output_files(f, "[job]\nkind = texel\n[texel]\ndata = x\nweights = w.txt\n",
                        "report.json,report.html,texel.ckpt,w.txt,texel-loss.csv,w.txt.diff");
    assert_string_equal(job_state_file(f->job), "texel.ckpt");
    expect_output_files(f, "[job]\nkind = train\n[train]\ndata = x.xqp\n",
                        "report.json,report.html,train.ckpt,net.nnue,train-loss.csv");
    assert_string_equal(job_state_file(f->job), "train.ckpt");
    expect_output_files(f, "[job]\nkind = book\n[book]\nhtml =\n",
                        "report.json,report.html,journal.xqj,result.json,book.epd,book.xqb,");
    expect_output_files(f, "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 2\n",
                        "report.json,report.html,journal.xqj,result.json,positions.xqp");
}

/// The work units of a run: game pairs for game kinds (rounds x pairings), candidates / unit
/// rounded up for a book, games / unit rounded up for datagen, none for texel and train.
static void test_units_total(void **state)
{
    Fixture *f = *state;
    write_text(f,
               "[job]\nkind = match\nrounds = 7\ntournament = roundrobin\n[engine a]\n"
               "[engine b]\n[engine c]\n[engine d]\n[time]\nnodes = 9\n",
               "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_pairing_count(f->job), 6);
    assert_int_equal(job_units_total(f->job), 42);
    assert_int_equal(job_units_total(f->job), (uint64_t)job_pairs_total(f->job));
    write_text(f, "[job]\nkind = book\n[book]\npositions = 10\nunit = 3\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_units_total(f->job), 334); // 1000 candidates in units of 3
    const char *ovr = "book.max_candidates=30";
    assert_int_equal(job_load(f->path, &ovr, 1, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_units_total(f->job), 10);
    write_text(f,
               "[job]\nkind = datagen\n[engine e]\n[time]\ndepth = 2\n[datagen]\n"
               "positions = 100\nunit = 16\n",
               "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_units_total(f->job), 7);
    ovr = "datagen.max_games=33";
    assert_int_equal(job_load(f->path, &ovr, 1, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_units_total(f->job), 3);
    write_text(f, "[job]\nkind = texel\n[texel]\ndata = x\n", "");
    assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    assert_int_equal(job_units_total(f->job), 0);
    assert_int_equal(job_pairing_count(f->job), 0);
}

/// The row named NAME: in SECTION when given (NULL: not a plain key there), else the one in
/// CONTEXT (the section the text last named), else the only row of that name (in a table,
/// only a [job] row: tables name other sections' keys `[section] name`); *ambiguous says a
/// name that matched several rows and none in CONTEXT.
static const JobKeyDef *doc_key(const char *section, const char *context, const char *name,
                                bool table, bool *ambiguous)
{
    int n = 0, found = 0;
    const JobKeyDef *keys = job_keys(&n), *only = NULL, *in_context = NULL;
    *ambiguous = false;
    for (int i = 0; i < n; i++) {
        if (strcmp(keys[i].name, name) || (section && strcmp(keys[i].section, section)))
            continue;
        found++;
        only = &keys[i];
        if (context && !strcmp(keys[i].section, context))
            in_context = &keys[i];
    }
    if (section || in_context || found == 0)
        return section ? only : in_context;
    if (found == 1)
        return !table || !strcmp(only->section, "job") ? only : NULL;
    *ambiguous = true;
    return NULL;
}

/// The section jobs/README.md last names before POS, written `[section]` or `[section] key`.
static void doc_context(const char *text, const char *pos, char *out, size_t len)
{
    out[0] = '\0';
    for (const char *p = pos; p-- > text;) {
        size_t w = 0;
        if (p[0] != '`' || p[1] != '[')
            continue;
        while (p[2 + w] >= 'a' && p[2 + w] <= 'z')
            w++;
        if (w && p[2 + w] == ']') {
            snprintf(out, len, "%.*s", (int)w, p + 2);
            return;
        }
    }
}

/// Whether README's default TEXT (a table cell, or a number, boolean or file name in
/// brackets) is row K's. A number row whose text is not a number (`(required)`, `none`,
/// `100 x positions`) must default to 0: a value the code fills in; a string row whose
/// default is empty is written `empty`, `none` or not at all.
static bool doc_default_agrees(const JobKeyDef *k, const char *text)
{
    char *end = NULL;
    double v = strtod(text, &end);
    bool number = end != text && *end == '\0';
    switch (k->type) {
    case KEY_BOOL:
        return (!strcmp(text, "true") && k->def != 0) || (!strcmp(text, "false") && k->def == 0);
    case KEY_STR:
        if (!k->def_text[0])
            return !text[0] || !strcmp(text, "empty") || !strcmp(text, "none");
        return !strcmp(text, k->def_text);
    default:
        if (!number)
            return k->def == 0;
        return v == k->def || (k->def != 0 && fabs(v / k->def - 1) < 1e-9);
    }
}

/// Row K's default as text, for a message.
static const char *doc_code_default(const JobKeyDef *k, char *buf, size_t len)
{
    if (k->type == KEY_STR)
        snprintf(buf, len, "'%s'", k->def_text);
    else if (k->type == KEY_BOOL)
        snprintf(buf, len, "%s", k->def != 0 ? "true" : "false");
    else
        snprintf(buf, len, "%.17g", k->def);
    return buf;
}

/// Copies s[0..n) trimmed of blanks into out.
static void doc_trim(const char *s, size_t n, char *out, size_t len)
{
    while (n && (*s == ' ' || *s == '\n'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        n--;
    snprintf(out, len, "%.*s", (int)n, s);
}

/// One row of a `| key | default | meaning |` table: the keys of the first cell (`name`,
/// `[section] name`; a section carries on to the names after it), each paired with the
/// default in the same place of the second cell (one default for all of them if only one is
/// given). Returns the mismatches; *checked counts the plain keys compared.
static int doc_table_row(const char *line, const char *context, int *checked)
{
    char cell[2][512], names[8][128], sections[8][128], values[8][512], section[128] = "";
    const char *p = line + 1;
    for (int c = 0; c < 2; c++) {
        const char *bar = strchr(p, '|');
        if (!bar)
            return 0;
        doc_trim(p, (size_t)(bar - p), cell[c], sizeof cell[c]);
        p = bar + 1;
    }
    int nn = 0, nv = 0, bad = 0;
    for (const char *q = cell[0]; (q = strchr(q, '`')) && nn < 8;) {
        const char *close = strchr(q + 1, '`');
        if (!close)
            break;
        char word[128];
        doc_trim(q + 1, (size_t)(close - q - 1), word, sizeof word);
        char *name = word;
        if (word[0] == '[' && strchr(word, ']')) {
            *strchr(word, ']') = '\0';
            snprintf(section, sizeof section, "%s", word + 1);
            name = word + strlen(word) + 1;
            while (*name == ' ')
                name++;
        }
        snprintf(sections[nn], sizeof sections[nn], "%s", section);
        snprintf(names[nn++], sizeof names[0], "%s", name);
        q = close + 1;
    }
    for (const char *q = cell[1]; nv < 8;) {
        const char *comma = strstr(q, ", ");
        size_t len = comma ? (size_t)(comma - q) : strlen(q);
        doc_trim(q, len, values[nv++], sizeof values[0]);
        if (!comma)
            break;
        q = comma + 2;
    }
    for (int i = 0; i < nn; i++) {
        bool ambiguous = false;
        const JobKeyDef *k =
            doc_key(sections[i][0] ? sections[i] : NULL, context, names[i], true, &ambiguous);
        if (ambiguous || (k && nv != nn && nv != 1)) {
            print_error("jobs/README.md: cannot tell the default of `%s` in '%s'\n", names[i],
                        line);
            bad++;
        } else if (k) {
            const char *v = values[nv == 1 ? 0 : i];
            (*checked)++;
            if (!doc_default_agrees(k, v)) {
                char code[600];
                print_error("jobs/README.md: [%s] %s defaults to '%s', the code to %s\n",
                            k->section, k->name, v, doc_code_default(k, code, sizeof code));
                bad++;
            }
        }
    }
    return bad;
}

/// The defaults written in prose: `name` (VALUE, ...) where the first part in the brackets
/// that is a number or a boolean, or the whole of them when it is a file name, is the default
/// (`draw_movenumber` (40), `lr` (Adam step, 2), `weights` (spsa-weights.txt)).
static int doc_prose(const char *text, int *checked)
{
    int bad = 0;
    for (const char *p = text; (p = strchr(p, '`'));) {
        const char *close = strchr(p + 1, '`');
        if (!close)
            break;
        size_t w = (size_t)(close - p - 1);
        bool word = w > 0 && w < 64 && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_0123456789") == w;
        if (!word || strncmp(close + 1, " (", 2) || !strchr(close + 3, ')')) {
            p = close + 1;
            continue;
        }
        char name[64], inside[512], context[64], value[512] = "";
        snprintf(name, sizeof name, "%.*s", (int)w, p + 1);
        doc_trim(close + 3, (size_t)(strchr(close + 3, ')') - close - 3), inside, sizeof inside);
        doc_context(text, p, context, sizeof context);
        bool ambiguous = false;
        const JobKeyDef *k = doc_key(NULL, context, name, false, &ambiguous);
        p = close + 1;
        if (!k || ambiguous)
            continue;
        if (k->type == KEY_STR) {
            if (!strchr(inside, ' ') && !strchr(inside, '`'))
                snprintf(value, sizeof value, "%s", inside);
        } else {
            for (const char *q = inside; *q && !value[0];) {
                size_t len = strcspn(q, ",;");
                char part[512];
                doc_trim(q, len, part, sizeof part);
                char *end = NULL;
                (void)strtod(part, &end);
                if (!strncmp(part, "true", 4) || !strncmp(part, "false", 5))
                    snprintf(value, sizeof value, "%s", part[0] == 't' ? "true" : "false");
                else if (end != part && (*end == '\0' || *end == ' ' || *end == ':'))
                    snprintf(value, sizeof value, "%.*s", (int)(end - part), part);
                q += len + (q[len] != '\0');
            }
        }
        if (!value[0])
            continue;
        (*checked)++;
        if (!doc_default_agrees(k, value)) {
            char code[600];
            print_error("jobs/README.md: `%s` (%s): the code's [%s] %s defaults to %s\n", name,
                        inside, k->section, k->name, doc_code_default(k, code, sizeof code));
            bad++;
        }
    }
    return bad;
}

/// Every default jobs/README.md names, in its `| key | default |` tables and in prose, is the
/// code's (job_keys.def, what ctx_key_defaults sets before a file is read).
static void test_readme_defaults(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/README.md", XQ_JOBS_DIR);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    enum { README_MAX = 1 << 20 };
    char *text = calloc(1, README_MAX + 1);
    assert_non_null(text);
    text[fread(text, 1, README_MAX, fp)] = '\0';
    fclose(fp);
    int bad = 0, in_table = 0, table_checked = 0, prose_checked = 0;
    char context[64] = "";
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char row[1024];
        snprintf(row, sizeof row, "%.*s", (int)len, line);
        if (!strncmp(row, "| key | default |", 17)) {
            in_table = 1;
            doc_context(text, line, context, sizeof context);
        } else if (in_table && row[0] == '|') {
            if (strncmp(row, "|---", 4))
                bad += doc_table_row(row, context, &table_checked);
        } else {
            in_table = 0;
        }
        line += len + (nl != NULL);
    }
    bad += doc_prose(text, &prose_checked);
    free(text);
    assert_int_equal(bad, 0);
    assert_true(table_checked >= 60); // the tables were read, not skipped (70 rows)
    assert_true(prose_checked >= 15);
}

/// No shipped job file uploads its reports anywhere: an example with a report URL would make
/// every run spool an upload that cannot go; the URL and token stay commented out.
static void test_examples_no_upload(void **state)
{
    Fixture *f = *state;
    const char *names[] = {"sprt-weights.ini", "sprt-binaries.ini",   "gauntlet.ini",
                           "book.ini",         "book-unbalanced.ini", "spsa-detuned.ini",
                           "texel.ini",        "selfplay.ini",        "sprt-tuned.ini",
                           "spsa-search.ini",  "datagen.ini",         "train.ini"};
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", XQ_JOBS_DIR, names[i]);
        JobStatus st = job_load(path, NULL, 0, f->job, f->why, sizeof f->why);
        if (st != JOB_OK)
            fail_msg("%s: %s", path, f->why);
        if (f->job->report.url_count != 0)
            fail_msg("%s uploads to %s", names[i], f->job->report.urls[0]);
    }
}

/// The main job's line in jobs/README.md states its concurrency as the file sets it, and per
/// rank (it is per worker rank: `mpirun -np 3` plays twice as many games at once).
static void test_readme_main_job(void **state)
{
    Fixture *f = *state;
    char path[1024], want[64];
    snprintf(path, sizeof path, "%s/sprt-weights.ini", XQ_JOBS_DIR);
    assert_int_equal(job_load(path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
    snprintf(want, sizeof want, "`concurrency = %d`", f->job->concurrency);
    snprintf(path, sizeof path, "%s/README.md", XQ_JOBS_DIR);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char line[4096];
    bool found = false;
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, "| `sprt-weights.ini` |", 22)) {
            found = true;
            if (!strstr(line, want) || !strstr(line, "per worker rank"))
                fail_msg("jobs/README.md's main job does not say %s per worker rank: %s", want,
                         line);
        }
    fclose(fp);
    assert_true(found);
}

/// [job] anchor names an engine of the job (empty: the first); an unknown name is refused with
/// the key and the engines; it is not part of the run's identity (only how ratings read).
static void test_anchor(void **state)
{
    Fixture *f = *state;
    assert_int_equal(load(f, "", NULL, 0), JOB_OK);
    assert_string_equal(f->job->anchor, "");
    const char *ovr = "job.anchor=b";
    assert_int_equal(load(f, "", &ovr, 1), JOB_OK);
    assert_string_equal(f->job->anchor, "b");
    // BASE has [job] already (a repeated section is refused): the key comes as an override.
    ovr = "job.anchor=B"; // names are case-sensitive
    expect(f, load(f, "", &ovr, 1), JOB_ERR_VALUE, false,
           ": [job] anchor: 'B' is not one of the engines (a, b)");
    // From the file, in a gauntlet of three.
    write_text(f, "[job]\nkind = match\nrounds = 2\nanchor = d\n[engine a]\n[engine b]\n",
               "[engine c]\n[time]\nnodes = 1000\n");
    expect(f, job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_ERR_VALUE, false,
           ": [job] anchor: 'd' is not one of the engines (a, b, c)");
}

/// The time control against 10+0.1 as fishtest's get_tc_ratio: STC 1, LTC 60+0.6 6, SMP-STC
/// 5+0.05 at 8 threads 4, moves/time, a node limit at the nominal speed, a depth limit 1.
static void test_tc_ratio(void **state)
{
    Fixture *f = *state;
    static const struct {
        const char *time;
        double ratio;
    } cases[] = {
        {"tc = 10+0.1\n", 1},
        {"tc = 60+0.6\n", 6},
        {"tc = 5+0.05\n[each]\noption.Threads = 8\n", 4},
        {"tc = 40/60\n", 60.0 * 68 / 40 / 16.8},
        {"nodes = 100000\n", 68 * 0.1 / 16.8},
        {"depth = 9\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_text(f, "[job]\nkind = sprt\nrounds = 10\n[engine a]\n[engine b]\n[time]\n",
                   cases[i].time);
        assert_int_equal(job_load(f->path, NULL, 0, f->job, f->why, sizeof f->why), JOB_OK);
        assert_float_equal(job_tc_ratio(f->job), cases[i].ratio, 1e-9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_examples_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_evalfile_relative_to_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_engine_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overrides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_number, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_url_credentials, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_tc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_engine, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_value_not_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized, setup, teardown),
        cmocka_unit_test_setup_teardown(test_syntax, setup, teardown),
        cmocka_unit_test_setup_teardown(test_override_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsupported_kind, setup, teardown),
        cmocka_unit_test(test_engine_spec),
        cmocka_unit_test_setup_teardown(test_option_last_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relative_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_names_distinct, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spsa_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spsa_search_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_names_confined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_texel_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book_variety_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openings_builtin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_scale_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_time_scale_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openings_pgn_keys, setup, teardown),
        cmocka_unit_test(test_time_scale_math),
        cmocka_unit_test_setup_teardown(test_run_control_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_datagen_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_doe_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_train_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eval_weights_need_use_nnue, setup, teardown),
        cmocka_unit_test(test_keys_documented),
        cmocka_unit_test_setup_teardown(test_loop_steps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_rows_refuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kind_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_total, setup, teardown),
        cmocka_unit_test(test_readme_defaults),
        cmocka_unit_test_setup_teardown(test_examples_no_upload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readme_main_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_anchor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roles_by_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tc_ratio, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
