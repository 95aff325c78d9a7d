// SPDX-License-Identifier: MIT
// The training loop's page (run/loop_report.c) made from a hand-written history.json:
// the Elo against generation 0 chains the promoted gates only (Elo summed, 95% errors added in
// quadrature), a rejected generation keeps the best's figure, a running one has none, and the
// table, the record and the plots say the same figures.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop_report.h"

// Four generations: promoted (+30 +- 12), rejected (-5 +- 10), promoted (+20 +- 9), and one
// whose data is made but whose train step runs.
static const char HISTORY[] =
    "{\"schema\": 1, \"kind\": \"loop\", \"job\": \"hand\", \"run_id\": \"0123456789abcdef\","
    " \"generations\": 5, \"next\": \"gen 4 train\", \"best\": \"cccccccccccc\", \"rows\": ["
    "{\"generation\": 1, \"best_before\": \"embedded\", \"positions\": 1000,"
    " \"filters\": {\"capture\": 30, \"in_check\": 7, \"kept\": 1000, \"seen\": 1100},"
    " \"train\": {\"best_epoch\": 3, \"epochs\": 4, \"loss\": 0.25, \"val_loss\": 0.5,"
    "  \"quant_mean_cp\": 0.993, \"quant_max_cp\": 2.8},"
    " \"gate\": {\"state\": \"H1 accepted\", \"games\": 200, \"wins\": 70, \"losses\": 50,"
    "  \"draws\": 80, \"elo\": 30.0, \"error\": 12.0, \"llr\": 2.95, \"lower\": -2.94,"
    "  \"upper\": 2.94}, \"net\": \"aaaaaaaaaaaa\", \"verdict\": \"promoted\"},"
    "{\"generation\": 2, \"best_before\": \"aaaaaaaaaaaa\", \"positions\": 1001,"
    " \"filters\": {\"capture\": 31, \"in_check\": 8, \"kept\": 1001, \"seen\": 1101, \"wdl\": 2},"
    " \"train\": {\"best_epoch\": 1, \"epochs\": 4, \"loss\": 0.125, \"val_loss\": 0.375,"
    "  \"note\": \"the validation loss never improved after epoch 1\","
    "  \"quant_mean_cp\": null, \"quant_max_cp\": null},"
    " \"gate\": {\"state\": \"H0 accepted\", \"games\": 300, \"wins\": 60, \"losses\": 64,"
    "  \"draws\": 176, \"elo\": -5.0, \"error\": 10.0, \"llr\": -2.96, \"lower\": -2.94,"
    "  \"upper\": 2.94}, \"net\": \"bbbbbbbbbbbb\", \"verdict\": \"rejected\"},"
    "{\"generation\": 3, \"best_before\": \"aaaaaaaaaaaa\", \"positions\": 1002,"
    " \"train\": {\"best_epoch\": 2, \"epochs\": 2, \"loss\": 0.0625, \"val_loss\": 0.25},"
    " \"gate\": {\"state\": \"H1 accepted\", \"games\": 400, \"wins\": 120, \"losses\": 97,"
    "  \"draws\": 183, \"elo\": 20.0, \"error\": 9.0, \"llr\": 2.99, \"lower\": -2.94,"
    "  \"upper\": 2.94}, \"net\": \"cccccccccccc\", \"verdict\": \"promoted\"},"
    "{\"generation\": 4, \"best_before\": \"cccccccccccc\", \"positions\": 1003,"
    " \"verdict\": \"running\"}]}";

static json_t *history(void)
{
    json_error_t err;
    json_t *h = json_loads(HISTORY, 0, &err);
    if (!h)
        fail_msg("the test's history: %s (line %d)", err.text, err.line);
    return h;
}

static JobConfig *job(void)
{
    JobConfig *t = calloc(1, sizeof *t);
    assert_non_null(t);
    snprintf(t->name, sizeof t->name, "hand");
    t->loop.generations = 5;
    t->loop.keep = 2;
    t->loop.gate_nodes = 300;
    t->loop.gate_games = 400;
    t->loop.elo0 = 0, t->loop.elo1 = 10, t->loop.alpha = 0.05, t->loop.beta = 0.05;
    t->datagen.positions = 1000;
    return t;
}

static Report *filled(json_t **record)
{
    JobConfig *t = job();
    json_t *h = history();
    Report *r = report_new("0123456789abcdef", "loop: hand", "0.1.0");
    assert_non_null(r);
    assert_int_equal(loop_report_fill(r, t, h), REPORT_OK);
    json_decref(h);
    free(t);
    *record = report_to_json(r);
    assert_non_null(*record);
    return r;
}

static const char *cell(const json_t *table, size_t row, size_t col)
{
    const char *s =
        json_string_value(json_array_get(json_array_get(json_object_get(table, "rows"), row), col));
    assert_non_null(s);
    return s;
}

/// The chained Elo: +30 +- 12 after generation 1, unchanged by the rejection, +50 +- 15 (sqrt
/// of 12^2 + 9^2) after generation 3, null for the running generation 4.
static void test_chain(void **state)
{
    (void)state;
    json_t *rec;
    Report *r = filled(&rec);
    const json_t *gens = json_object_get(rec, "generations");
    assert_int_equal(json_array_size(gens), 4);
    static const double ELO[] = {30, 30, 50}, ERR[] = {12, 12, 15};
    size_t i;
    for (i = 0; i < 3; i++) {
        const json_t *g = json_array_get(gens, i);
        assert_int_equal(json_integer_value(json_object_get(g, "generation")), (int)i + 1);
        assert_true(fabs(json_number_value(json_object_get(g, "elo_vs_gen0")) - ELO[i]) < 1e-9);
        assert_true(fabs(json_number_value(json_object_get(g, "elo_vs_gen0_error")) - ERR[i]) <
                    1e-9);
    }
    assert_true(json_is_null(json_object_get(json_array_get(gens, 3), "elo_vs_gen0")));
    assert_true(json_is_null(json_object_get(json_array_get(gens, 3), "elo_vs_gen0_error")));
    const json_t *loop = json_object_get(rec, "loop");
    assert_true(fabs(json_number_value(json_object_get(loop, "elo_vs_gen0")) - 50) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(loop, "elo_vs_gen0_error")) - 15) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(loop, "promoted")), 2);
    assert_int_equal(json_integer_value(json_object_get(loop, "rejected")), 1);
    assert_string_equal(json_string_value(json_object_get(rec, "state")), "running");
    // The train step's note on its kept epoch is said, once, for its generation.
    int notes = 0;
    const json_t *f;
    json_array_foreach(json_object_get(rec, "facts"), i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "group")), "Training notes"))
            continue;
        notes++;
        assert_string_equal(json_string_value(json_object_get(f, "label")), "generation 2");
        assert_string_equal(json_string_value(json_object_get(f, "text")),
                            "the validation loss never improved after epoch 1");
    }
    assert_int_equal(notes, 1);
    json_decref(rec);
    report_free(r);
}

/// The generations' table: a row per generation with the figures of the record; "-" for what
/// a generation has not done; the filters' table with seen and kept first and every count.
static void test_table(void **state)
{
    (void)state;
    json_t *rec;
    Report *r = filled(&rec);
    const json_t *t = json_object_get(json_object_get(rec, "tables"), "generations");
    assert_int_equal(json_array_size(json_object_get(t, "rows")), 4);
    assert_int_equal(json_array_size(json_object_get(t, "columns")), 12);
    static const char *const ROW1[] = {"1",
                                       "1000",
                                       "0.250000",
                                       "0.500000",
                                       "3 of 4",
                                       "0.993 / 2.8",
                                       "200",
                                       "70 / 50 / 80",
                                       "+30.0 ± 12.0",
                                       "2.95 [-2.94, 2.94]",
                                       "promoted (H1 accepted)",
                                       "+30.0 ± 12.0"};
    for (size_t c = 0; c < 12; c++)
        assert_string_equal(cell(t, 0, c), ROW1[c]);
    assert_string_equal(cell(t, 1, 5), "-"); // no quantization recorded
    assert_string_equal(cell(t, 1, 8), "-5.0 ± 10.0");
    assert_string_equal(cell(t, 1, 10), "rejected (H0 accepted)");
    assert_string_equal(cell(t, 1, 11), "+30.0 ± 12.0");
    assert_string_equal(cell(t, 2, 11), "+50.0 ± 15.0");
    static const char *const ROW4[] = {"4", "1003", "-", "-", "-",       "-",
                                       "-", "-",    "-", "-", "running", "-"};
    for (size_t c = 0; c < 12; c++)
        assert_string_equal(cell(t, 3, c), ROW4[c]);
    const json_t *f = json_object_get(json_object_get(rec, "tables"), "filters");
    static const char *const COLS[] = {"gen", "seen", "kept", "capture", "in_check", "wdl"};
    for (size_t c = 0; c < 6; c++)
        assert_string_equal(json_string_value(json_array_get(json_object_get(f, "columns"), c)),
                            COLS[c]);
    assert_int_equal(json_array_size(json_object_get(f, "rows")), 2); // generations with data
    assert_string_equal(cell(f, 0, 5), "-");
    assert_string_equal(cell(f, 1, 5), "2");
    assert_string_equal(cell(f, 1, 1), "1101");
    json_decref(rec);
    report_free(r);
}

/// The plots: the kept epoch's losses per generation, and the chained Elo from generation 0
/// with its 95% band, a point per decided generation.
static void test_plots(void **state)
{
    (void)state;
    json_t *rec;
    Report *r = filled(&rec);
    const json_t *plots = json_object_get(rec, "plots"), *elo = NULL, *loss = NULL, *p;
    size_t i;
    json_array_foreach(plots, i, p)
    {
        const char *id = json_string_value(json_object_get(p, "id"));
        if (!strcmp(id, "elo"))
            elo = p;
        else if (!strcmp(id, "loss"))
            loss = p;
    }
    assert_non_null(elo);
    assert_non_null(loss);
    const json_t *s = json_array_get(json_object_get(elo, "series"), 0);
    static const double X[] = {0, 1, 2, 3}, Y[] = {0, 30, 30, 50}, LO[] = {0, 18, 18, 35};
    assert_int_equal(json_array_size(json_object_get(s, "x")), 4);
    for (size_t k = 0; k < 4; k++) {
        assert_true(json_number_value(json_array_get(json_object_get(s, "x"), k)) == X[k]);
        assert_true(json_number_value(json_array_get(json_object_get(s, "y"), k)) == Y[k]);
        assert_true(json_number_value(json_array_get(json_object_get(s, "lo"), k)) == LO[k]);
    }
    const json_t *val = json_array_get(json_object_get(loss, "series"), 1);
    assert_string_equal(json_string_value(json_object_get(val, "name")), "validation");
    assert_int_equal(json_array_size(json_object_get(val, "y")), 3);
    assert_true(json_number_value(json_array_get(json_object_get(val, "y"), 2)) == 0.25);
    json_decref(rec);
    report_free(r);
}

/// A promoted gate without an Elo (or error) leaves the chain unknown from there on: no
/// figure is made up.
static void test_unknown(void **state)
{
    (void)state;
    JobConfig *t = job();
    json_t *h = history();
    json_t *gate = json_object_get(json_array_get(json_object_get(h, "rows"), 0), "gate");
    json_object_set_new(gate, "elo", json_null());
    Report *r = report_new("0123456789abcdef", "loop: hand", "0.1.0");
    assert_int_equal(loop_report_fill(r, t, h), REPORT_OK);
    json_t *rec = report_to_json(r);
    const json_t *gens = json_object_get(rec, "generations");
    for (size_t i = 0; i < 4; i++)
        assert_true(json_is_null(json_object_get(json_array_get(gens, i), "elo_vs_gen0")));
    assert_true(json_is_null(json_object_get(json_object_get(rec, "loop"), "elo_vs_gen0")));
    json_decref(rec);
    json_decref(h);
    report_free(r);
    free(t);
}

/// loop_report_write puts report.json and report.html in output.dir: the page with both plots,
/// the record with the history's run id and a version that counts the finished steps.
static void test_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-loop-report-XXXXXX", path[64], why[1024] = "";
    assert_non_null(mkdtemp(dir));
    JobConfig *t = job();
    snprintf(t->output.dir, sizeof t->output.dir, "%s", dir);
    json_t *h = history();
    assert_true(loop_report_write(t, h, why, sizeof why));
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_error_t err;
    json_t *rec = json_load_file(path, 0, &err);
    assert_non_null(rec);
    assert_string_equal(json_string_value(json_object_get(rec, "run_id")), "0123456789abcdef");
    assert_int_equal(json_integer_value(json_object_get(rec, "report_version")), 1 + 3 + 3 + 3 + 1);
    assert_false(json_is_true(json_object_get(rec, "final")));
    snprintf(path, sizeof path, "%s/report.html", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char page[1 << 20];
    size_t n = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    page[n] = '\0';
    int svgs = 0;
    for (const char *p = page; (p = strstr(p, "<svg")); p++)
        svgs++;
    assert_int_equal(svgs, 2);
    assert_non_null(strstr(page, "+50.0 ± 15.0"));
    unlink(path);
    snprintf(path, sizeof path, "%s/report.json", dir);
    unlink(path);
    rmdir(dir);
    json_decref(rec);
    json_decref(h);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain),   cmocka_unit_test(test_table), cmocka_unit_test(test_plots),
        cmocka_unit_test(test_unknown), cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
