// SPDX-License-Identifier: MIT
// The report model: the JSON record round-trips (schema checked), reserved keys and limits
// are enforced, long series are thinned to bounded memory, the page is self-contained
// with one inline SVG per plot, and files are replaced atomically.
#include <math.h>
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

#include "report.h"

static Report *sample(void)
{
    Report *r = report_new("00ff00ff00ff00ff", "sprt: a <b> test", "0.1.0");
    assert_non_null(r);
    report_set_version(r, 3, false);
    assert_int_equal(report_set(r, "totals", json_pack("{s:i, s:i}", "games", 24, "wins", 9)),
                     REPORT_OK);
    assert_int_equal(report_fact(r, "Result", "Elo", "%.1f", 12.5), REPORT_OK);
    assert_int_equal(report_plot(r, "llr", REPORT_PLOT_LINE, "LLR", "games", "LLR"), REPORT_OK);
    assert_int_equal(report_plot_bound(r, "llr", "H1", 2.94), REPORT_OK);
    assert_int_equal(report_plot_bound(r, "llr", "H0", -2.94), REPORT_OK);
    for (int i = 1; i <= 12; i++)
        assert_int_equal(report_series_add(r, "llr", "LLR", 2 * i, 0.1 * i), REPORT_OK);
    assert_int_equal(report_plot(r, "elo", REPORT_PLOT_LINE, "Elo", "games", "Elo"), REPORT_OK);
    assert_int_equal(report_series_add_band(r, "elo", "Elo", 2, 5, -100, 110), REPORT_OK);
    assert_int_equal(report_series_add_band(r, "elo", "Elo", 4, NAN, -50, 60), REPORT_OK);
    assert_int_equal(report_plot_settle(r, "elo", true), REPORT_OK);
    assert_int_equal(report_plot(r, "terms", REPORT_PLOT_BARS, "Terminations", "games", ""),
                     REPORT_OK);
    assert_int_equal(report_bar_set(r, "terms", "checkmate", 10), REPORT_OK);
    assert_int_equal(report_bar_set(r, "terms", "resign", 14), REPORT_OK);
    return r;
}

/// Record -> text -> record gives an equal record, and a Report equal to the first.
static void test_round_trip(void **state)
{
    (void)state;
    Report *r = sample();
    json_t *j = report_to_json(r);
    char *text = json_dumps(j, JSON_INDENT(2));
    json_error_t err;
    json_t *back = json_loads(text, 0, &err);
    assert_non_null(back);
    Report *r2;
    char why[256] = "";
    assert_int_equal(report_from_json(back, &r2, why, sizeof why), REPORT_OK);
    json_t *j2 = report_to_json(r2);
    assert_true(json_equal(j, j2));
    assert_int_equal(json_integer_value(json_object_get(j2, "schema_version")),
                     REPORT_SCHEMA_VERSION);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j2, "totals"), "games")),
                     24);
    assert_true(json_is_null(json_array_get(
        json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(j2, "plots"), 1), "series"), 0),
            "y"),
        1))); // the NaN point is null
    // The Elo plot's y range follows the run; the LLR plot's holds every point.
    json_t *plots = json_object_get(j2, "plots");
    assert_string_equal(json_string_value(json_object_get(json_array_get(plots, 1), "y_range")),
                        "settled");
    assert_string_equal(json_string_value(json_object_get(json_array_get(plots, 0), "y_range")),
                        "all");
    SvgBuf page;
    svg_buf_init(&page, 0);
    assert_int_equal(report_html(r2, &page), REPORT_OK);
    svg_buf_destroy(&page);
    free(text);
    json_decref(j);
    json_decref(j2);
    json_decref(back);
    report_free(r);
    report_free(r2);
}

/// A record of another schema, a later version, or with a broken plot is refused with a
/// reason.
static void test_schema_refused(void **state)
{
    (void)state;
    Report *r = sample(), *out = (Report *)1;
    char why[256];
    json_t *j = report_to_json(r);
    json_object_set_new(j, "schema_version", json_integer(REPORT_SCHEMA_VERSION + 1));
    assert_int_equal(report_from_json(j, &out, why, sizeof why), REPORT_ERR_SCHEMA);
    assert_null(out);
    assert_non_null(strstr(why, "version"));
    json_object_set_new(j, "schema_version", json_integer(REPORT_SCHEMA_VERSION));
    json_t *series = json_object_get(json_array_get(json_object_get(j, "plots"), 0), "series");
    json_array_append_new(json_object_get(json_array_get(series, 0), "x"), json_integer(99));
    assert_int_equal(report_from_json(j, &out, why, sizeof why), REPORT_ERR_SCHEMA);
    assert_non_null(strstr(why, "llr"));
    json_decref(j);
    j = json_pack("{s:s}", "schema", "something-else");
    assert_int_equal(report_from_json(j, &out, why, sizeof why), REPORT_ERR_SCHEMA);
    json_decref(j);
    j = report_to_json(r);
    json_object_set_new(json_array_get(json_object_get(j, "plots"), 1), "y_range",
                        json_string("some"));
    assert_int_equal(report_from_json(j, &out, why, sizeof why), REPORT_ERR_SCHEMA);
    assert_non_null(strstr(why, "y_range"));
    json_decref(j);
    report_free(r);
}

/// Keys the report writes itself cannot be overwritten; wrong plot kinds are refused.
static void test_reserved_and_kinds(void **state)
{
    (void)state;
    Report *r = sample();
    assert_int_equal(report_set(r, "schema", json_string("x")), REPORT_ERR_ARG);
    assert_int_equal(report_set(r, "plots", json_array()), REPORT_ERR_ARG);
    assert_int_equal(report_bar_set(r, "llr", "x", 1), REPORT_ERR_ARG);
    assert_int_equal(report_series_add(r, "terms", "x", 1, 1), REPORT_ERR_ARG);
    assert_int_equal(report_series_add(r, "nosuch", "x", 1, 1), REPORT_ERR_ARG);
    assert_int_equal(report_plot(r, "llr", REPORT_PLOT_BARS, "t", "x", "y"), REPORT_ERR_ARG);
    report_free(r);
}

/// A series keeps at most REPORT_POINTS_MAX points, the first one and the newest among
/// them, however long the run.
static void test_series_bounded(void **state)
{
    (void)state;
    Report *r = report_new("id", "t", "v");
    report_plot(r, "p", REPORT_PLOT_LINE, "t", "x", "y");
    const int n = 10 * REPORT_POINTS_MAX + 3;
    for (int i = 0; i < n; i++)
        assert_int_equal(report_series_add(r, "p", "s", i, i), REPORT_OK);
    json_t *j = report_to_json(r);
    json_t *x = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(j, "plots"), 0), "series"),
                       0),
        "x");
    assert_true(json_array_size(x) <= REPORT_POINTS_MAX);
    assert_true(json_array_size(x) >= REPORT_POINTS_MAX / 2);
    assert_true(json_real_value(json_array_get(x, 0)) == 0);
    assert_true(json_real_value(json_array_get(x, json_array_size(x) - 1)) == n - 1);
    json_decref(j);
    // report_series_set thins the same way and keeps the last point.
    SvgPoint *pts = malloc(sizeof *pts * (size_t)n);
    for (int i = 0; i < n; i++)
        pts[i] = (SvgPoint){i, -i};
    assert_int_equal(report_series_set(r, "p", "traj", pts, (size_t)n), REPORT_OK);
    j = report_to_json(r);
    x = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(j, "plots"), 0), "series"),
                       1),
        "x");
    assert_true(json_array_size(x) <= REPORT_POINTS_MAX + 1);
    assert_true(json_real_value(json_array_get(x, json_array_size(x) - 1)) == n - 1);
    json_decref(j);
    free(pts);
    report_free(r);
}

/// The page is self-contained (no script, no external reference), escapes names, and has
/// one inline SVG per plot and the facts.
static void test_html(void **state)
{
    (void)state;
    Report *r = sample();
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(report_html(r, &o), REPORT_OK);
    int svgs = 0;
    for (const char *p = o.data; (p = strstr(p, "<svg ")); p++)
        svgs++;
    assert_int_equal(svgs, 3);
    assert_null(strstr(o.data, "<script"));
    assert_null(strstr(o.data, "src="));
    assert_null(strstr(o.data, "href="));
    assert_null(strstr(o.data, "<b>"));
    assert_non_null(strstr(o.data, "a &lt;b&gt; test"));
    assert_non_null(strstr(o.data, "<meta name=\"viewport\""));
    assert_non_null(strstr(o.data, "@media print"));
    assert_non_null(strstr(o.data, "<th>Elo</th><td>12.5</td>"));
    svg_buf_destroy(&o);
    report_free(r);
}

/// A table is a record field ("tables") that survives the round trip, and the page shows it
/// with its header and escaped cells; the same id replaces it.
static void test_table(void **state)
{
    (void)state;
    Report *r = report_new("run-t", "tables", "0.1");
    assert_int_equal(report_table(r, "p", "Params", json_pack("[s, s]", "name", "value"),
                                  json_pack("[[s, s]]", "old", "1")),
                     REPORT_OK);
    assert_int_equal(report_table(r, "p", "Params", json_pack("[s, s]", "name", "value"),
                                  json_pack("[[s, s], [s, s]]", "x<y>", "2.50", "z", "3")),
                     REPORT_OK);
    assert_int_equal(report_table(r, "q", "Bad", json_string("no"), json_array()), REPORT_ERR_ARG);
    json_t *j = report_to_json(r);
    Report *back = NULL;
    char why[256];
    assert_int_equal(report_from_json(j, &back, why, sizeof why), REPORT_OK);
    json_t *rows = json_object_get(json_object_get(report_get(back, "tables"), "p"), "rows");
    assert_int_equal(json_array_size(rows), 2);
    assert_null(json_object_get(report_get(back, "tables"), "q"));
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(report_html(back, &o), REPORT_OK);
    assert_non_null(strstr(o.data, "<h2>Params</h2><table class=\"grid\"><tr><th>name</th>"
                                   "<th>value</th></tr><tr><td>x&lt;y&gt;</td><td>2.50</td>"));
    assert_null(strstr(o.data, ">old<"));
    svg_buf_destroy(&o);
    json_decref(j);
    report_free(back);
    report_free(r);
}

/// report_write leaves exactly report.json and report.html (no temporary files), and the
/// JSON file parses back to the same record.
static void test_write_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/xq-report-XXXXXX";
    assert_non_null(mkdtemp(dir));
    Report *r = sample();
    char why[256] = "";
    assert_int_equal(report_write(r, dir, why, sizeof why), REPORT_OK);
    report_set_version(r, 4, true);
    assert_int_equal(report_write(r, dir, why, sizeof why), REPORT_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "final")));
    assert_int_equal(json_integer_value(json_object_get(j, "report_version")), 4);
    json_decref(j);
    snprintf(path, sizeof path, "ls -A %s | wc -l | grep -qx 2", dir);
    assert_int_equal(system(path), 0);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    assert_int_equal(system(path), 0);
    // An unwritable directory is an error with the path, never a crash.
    assert_int_equal(report_write(r, "/nonexistent/dir", why, sizeof why), REPORT_ERR_IO);
    assert_non_null(strstr(why, "/nonexistent/dir/report.json"));
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_schema_refused),
        cmocka_unit_test(test_reserved_and_kinds),
        cmocka_unit_test(test_series_bounded),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_write_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
