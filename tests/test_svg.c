// SPDX-License-Identifier: MIT
// The SVG plot generator: axes cover every value and bound, ranges are round and never
// empty, empty and one-point series still make a valid chart, text is escaped, the
// buffer refuses to pass its limit.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "svg.h"

/// The number in attribute `name="..."` of the first element that has it.
static double attr(const char *svg, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s=\"", name);
    const char *p = strstr(svg, key);
    assert_non_null(p);
    return strtod(p + strlen(key), NULL);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/// Every opened element is closed: a cheap well-formedness check of the chart's text.
static void assert_balanced(const char *svg)
{
    assert_int_equal(count(svg, "<svg "), 1);
    assert_int_equal(count(svg, "</svg>"), 1);
    assert_int_equal(count(svg, "<g "), count(svg, "</g>"));
    assert_int_equal(count(svg, "<text "), count(svg, "</text>"));
}

/// A round axis contains the data range, starts and ends on multiples of its step, and
/// has 1, 2 or 5 times a power of ten as step.
static void test_axis_round(void **state)
{
    (void)state;
    double lo = -2.7, hi = 3.1, step;
    svg_axis(&lo, &hi, 5, false, &step);
    assert_true(lo <= -2.7 && hi >= 3.1);
    assert_true(fabs(step - 1) < 1e-12 || fabs(step - 2) < 1e-12);
    assert_true(fabs(lo / step - round(lo / step)) < 1e-9);
    assert_true(fabs(hi / step - round(hi / step)) < 1e-9);
    lo = 0, hi = 1234;
    svg_axis(&lo, &hi, 6, false, &step);
    assert_true(fabs(step - 200) < 1e-9);
    assert_true(lo == 0 && hi == 1400);
}

/// A single value and a non-finite range both become non-empty ranges.
static void test_axis_degenerate(void **state)
{
    (void)state;
    double lo = 5, hi = 5, step;
    svg_axis(&lo, &hi, 5, false, &step);
    assert_true(lo < 5 && hi > 5 && step > 0);
    lo = NAN, hi = INFINITY;
    svg_axis(&lo, &hi, 5, false, &step);
    assert_true(lo == 0 && hi == 1);
}

/// The y range includes the bounds (SPRT's -2.94 and 2.94) even when the series stays
/// between them, and each bound is drawn once with its value.
static void test_line_bounds_in_range(void **state)
{
    (void)state;
    SvgPoint pts[] = {{2, 0.1}, {4, -0.5}, {6, 0.8}};
    SvgSeries s = {"LLR", pts, 3, NULL, NULL};
    SvgBound b[] = {{"H1", 2.944}, {"H0", -2.944}};
    SvgLineChart c = {"LLR", "games", "LLR", &s, 1, b, 2, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_balanced(o.data);
    assert_true(attr(o.data, "data-ymin") <= -2.944 && attr(o.data, "data-ymax") >= 2.944);
    assert_true(attr(o.data, "data-xmin") <= 2 && attr(o.data, "data-xmax") >= 6);
    assert_int_equal(count(o.data, "class=\"bound\""), 2);
    assert_int_equal(count(o.data, "data-y=\"2.944\""), 1);
    assert_int_equal(count(o.data, "class=\"series\""), 1);
    assert_int_equal(count(o.data, "class=\"empty\""), 0);
    assert_true(count(o.data, "class=\"tick\"") >= 6); // both axes have ticks
    svg_buf_destroy(&o);
}

/// A band widens the y range to its edges and is drawn as one polygon.
static void test_line_band(void **state)
{
    (void)state;
    SvgPoint pts[] = {{2, 10}, {4, 20}};
    double lo[] = {-90, -30}, hi[] = {110, 70};
    SvgSeries s = {"Elo", pts, 2, lo, hi};
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-ymin") <= -90 && attr(o.data, "data-ymax") >= 110);
    assert_int_equal(count(o.data, "class=\"band\""), 1);
    svg_buf_destroy(&o);
}

/// A long run's y range follows the curve once its first games are past: an Elo of +-1500
/// after the first pairs does not squash a curve that sits at -30 +- 15 for 1,600 games;
/// a short series still shows every point.
static void test_line_range_settles(void **state)
{
    (void)state;
    enum { N = 800 };
    static SvgPoint pts[N];
    static double lo[N], hi[N];
    for (int i = 0; i < N; i++) {
        double y = i < 4 ? (i % 2 ? 1500 : -1500) : -30;
        pts[i] = (SvgPoint){2.0 * (i + 1), y};
        lo[i] = y - (i < 4 ? 800 : 15);
        hi[i] = y + (i < 4 ? 800 : 15);
    }
    SvgSeries s = {"Elo", pts, N, lo, hi};
    SvgBound zero = {"0", 0};
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, &zero, 1, true};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-ymin") >= -100 && attr(o.data, "data-ymin") <= -45);
    assert_true(attr(o.data, "data-ymax") >= 0 && attr(o.data, "data-ymax") <= 50);
    svg_buf_destroy(&o);
    s.count = 10; // a short series: its first points still count
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-ymin") <= -2300 && attr(o.data, "data-ymax") >= 2300);
    svg_buf_destroy(&o);
}

/// The tick labels of the group that starts with `group` (e.g. "<g class=\"axis x\""): true when
/// every one is a whole number (no decimal point).
static bool ticks_whole(const char *svg, const char *group)
{
    const char *g = strstr(svg, group), *end = g ? strstr(g, "</g>") : NULL;
    assert_non_null(end);
    int ticks = 0;
    for (const char *p = g; (p = strstr(p, "class=\"tick\"")) && p < end; p++, ticks++) {
        const char *text = strchr(p, '>') + 1;
        if (memchr(text, '.', (size_t)(strchr(text, '<') - text)))
            return false;
    }
    assert_true(ticks >= 2);
    return true;
}

/// Counts of games have whole-number ticks: a run of 6 games has no tick at 2.5 games; the
/// y axis of an Elo (fractions) keeps its own steps.
static void test_ticks_whole_for_counts(void **state)
{
    (void)state;
    SvgPoint pts[] = {{2, 12.5}, {4, -20.25}, {6, 3.75}};
    SvgSeries s = {"Elo", pts, 3, NULL, NULL};
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(ticks_whole(o.data, "<g class=\"axis x\""));
    svg_buf_destroy(&o);
    SvgBar bars[] = {{"checkmate", 3}, {"resign", 1}};
    SvgBarChart b = {"Terminations", "games", bars, 2};
    svg_buf_init(&o, 0);
    assert_int_equal(svg_bar_chart(&b, &o), SVG_OK);
    assert_true(ticks_whole(o.data, "<g class=\"axis x\""));
    svg_buf_destroy(&o);
}

/// A loss curve (no settle) shows every point: the first epochs' high loss is in the y range,
/// not cut off as an Elo plot's first games are.
static void test_line_loss_every_point(void **state)
{
    (void)state;
    enum { N = 40 };
    SvgPoint pts[N];
    for (int i = 0; i < N; i++)
        pts[i] = (SvgPoint){i, 0.1 + 0.4 / (1 + i * i)};
    SvgSeries s = {"loss", pts, N, NULL, NULL};
    SvgLineChart c = {"Loss", "epoch", "loss", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-ymax") >= 0.5 && attr(o.data, "data-ymin") <= 0.1);
    assert_true(attr(o.data, "data-ymax") <= 0.6);
    svg_buf_destroy(&o);
}

/// One point at 0.5 minutes: an axis from 0 to about 1, not from -1 to 1.5; at 0 a range
/// around it.
static void test_line_one_small_point(void **state)
{
    (void)state;
    SvgPoint p = {0.5, 300};
    SvgSeries s = {"accepted", &p, 1, NULL, NULL};
    SvgLineChart c = {"Positions", "minutes", "positions", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-xmin") == 0 && attr(o.data, "data-xmax") >= 0.9);
    assert_true(attr(o.data, "data-xmax") <= 1.1);
    assert_true(ticks_whole(o.data, "<g class=\"axis y\"")); // 300 positions: a count
    svg_buf_destroy(&o);
    double lo = 0, hi = 0, step;
    svg_axis(&lo, &hi, 5, false, &step);
    assert_true(lo < 0 && hi > 0);
}

/// The number after `key` in the n-th (0-based) occurrence of `from` in svg.
static double nth_attr(const char *svg, const char *from, int n, const char *key)
{
    const char *p = svg;
    for (int i = 0; i <= n; i++, p++)
        assert_non_null(p = strstr(p, from));
    return attr(p - 1, key);
}

/// names: series k is called "engine-k-with-a-long-name vs base": 3 and 8 of them wrap into
/// rows between the title and the plot area; no row runs past the chart's right edge.
static void check_legend(int n)
{
    static SvgPoint pts[8][3];
    static char names[8][64];
    SvgSeries s[8];
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < 3; i++)
            pts[k][i] = (SvgPoint){2.0 * (i + 1), 10.0 * k + i};
        snprintf(names[k], sizeof names[k], "engine-%d-with-a-long-name vs base", k);
        s[k] = (SvgSeries){names[k], pts[k], 3, NULL, NULL};
    }
    SvgLineChart c = {"Elo of each pairing's first engine", "games", "Elo", s, n, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_balanced(o.data);
    assert_int_equal(count(o.data, "class=\"entry\""), n);
    const char *legend = strstr(o.data, "<g class=\"legend\"");
    assert_non_null(legend);
    double frame_top = nth_attr(o.data, "<rect class=\"frame\"", 0, "y"), last = 0;
    for (int k = 0; k < n; k++) {
        // The title's baseline is 18 (font 14): a legend row's text (font 11) starts below 22.
        double y = nth_attr(legend, "<text ", k, "y"), x = nth_attr(legend, "<text ", k, "x");
        assert_true(y - 11 >= 22);
        assert_true(y + 4 <= frame_top);
        assert_true(x + 7 * (double)strlen(names[k]) <= SVG_WIDTH);
        last = y > last ? y : last;
    }
    // The plot area keeps its height; the chart grows by a row per extra legend row.
    int rows = (int)((last - nth_attr(legend, "<text ", 0, "y")) / SVG_LEGEND_ROW + 0.5) + 1;
    assert_true(n < 3 || rows >= 2);
    double height = nth_attr(o.data, "<rect ", 0, "height");
    assert_true(fabs(height - (SVG_HEIGHT + (rows - 1) * SVG_LEGEND_ROW)) < 1e-9);
    svg_buf_destroy(&o);
}

static void test_legend_rows(void **state)
{
    (void)state;
    check_legend(1);
    check_legend(3);
    check_legend(8);
}

/// Eight series differ in colour and dash pattern, and carry markers; two series on the same curve
/// are named together in the legend, a third one that differs is not.
static void test_series_distinct(void **state)
{
    (void)state;
    SvgPoint same[] = {{2, 50}, {4, 40}, {6, 45}}, other[] = {{2, 0}, {4, 10}, {6, 5}};
    SvgSeries s[8] = {{"a vs b", same, 3, NULL, NULL},
                      {"a vs c", other, 3, NULL, NULL},
                      {"a vs d", same, 3, NULL, NULL}};
    SvgLineChart c = {"Elo", "games", "Elo", s, 3, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_int_equal(count(o.data, "class=\"same\""), 1);
    assert_non_null(strstr(o.data, ">same curve: a vs b, a vs d</text>"));
    svg_buf_destroy(&o);
    for (int k = 3; k < 8; k++)
        s[k] = (SvgSeries){"x", other, 3, NULL, NULL};
    c.series_count = 8;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    char style[8][160];
    const char *p = o.data;
    for (int k = 0; k < 8; k++) {
        p = strstr(p, "<polyline class=\"series\"");
        assert_non_null(p);
        const char *stroke = strstr(p, "stroke=\""), *pts = strstr(p, " points=");
        snprintf(style[k], sizeof style[k], "%.*s", (int)(pts - stroke), stroke);
        p++;
    }
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            assert_string_not_equal(style[a], style[b]);
    // A marker on each point of each series (3 points: a short series), and one per legend entry.
    assert_int_equal(count(o.data, "class=\"marker\""), 8 * 3);
    assert_int_equal(count(o.data, "class=\"key\""), 8);
    // Five of the series draw one curve: one note names them all.
    assert_int_equal(count(o.data, "class=\"same\""), 2);
    svg_buf_destroy(&o);
}

/// No series at all, or a series without points: a chart that says "no data yet".
static void test_line_empty(void **state)
{
    (void)state;
    SvgSeries s = {"LLR", NULL, 0, NULL, NULL};
    SvgLineChart c = {"LLR", "games", "LLR", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_balanced(o.data);
    assert_int_equal(count(o.data, "class=\"empty\""), 1);
    assert_true(attr(o.data, "data-xmax") > attr(o.data, "data-xmin"));
    assert_true(attr(o.data, "data-ymax") > attr(o.data, "data-ymin"));
    svg_buf_destroy(&o);
}

/// One point: a non-empty range around it, and a marker (a polyline of one point is
/// invisible).
static void test_line_one_point(void **state)
{
    (void)state;
    SvgPoint p = {2, 7};
    SvgSeries s = {"Elo", &p, 1, NULL, NULL};
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_true(attr(o.data, "data-xmin") < 2 && attr(o.data, "data-xmax") > 2);
    assert_true(attr(o.data, "data-ymin") < 7 && attr(o.data, "data-ymax") > 7);
    assert_int_equal(count(o.data, "class=\"point\""), 1);
    assert_int_equal(count(o.data, "class=\"empty\""), 0);
    svg_buf_destroy(&o);
}

/// Non-finite points are skipped, not drawn as NaN coordinates.
static void test_line_skips_nonfinite(void **state)
{
    (void)state;
    SvgPoint pts[] = {{1, 1}, {2, NAN}, {3, INFINITY}, {4, 2}};
    SvgSeries s = {"x", pts, 4, NULL, NULL};
    SvgLineChart c = {"t", "x", "y", &s, 1, NULL, 0, false};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_line_chart(&c, &o), SVG_OK);
    assert_null(strstr(o.data, "nan"));
    assert_null(strstr(o.data, "inf"));
    assert_true(attr(o.data, "data-ymax") >= 2 && attr(o.data, "data-ymax") < 100);
    svg_buf_destroy(&o);
}

/// Names with markup are escaped: a job name cannot inject elements into the page.
static void test_escaping(void **state)
{
    (void)state;
    SvgBar bars[] = {{"<script>alert(1)</script>", 3}, {"a & \"b\"", 1}};
    SvgBarChart c = {"T<i>", "games", bars, 2};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_bar_chart(&c, &o), SVG_OK);
    assert_null(strstr(o.data, "<script"));
    assert_null(strstr(o.data, "<i>"));
    assert_non_null(strstr(o.data, "&lt;script&gt;"));
    assert_non_null(strstr(o.data, "a &amp; &quot;b&quot;"));
    assert_int_equal(count(o.data, "class=\"bar\""), 2);
    assert_true(attr(o.data, "data-xmax") >= 3);
    svg_buf_destroy(&o);
}

/// An empty bar chart is a valid chart that says so.
static void test_bars_empty(void **state)
{
    (void)state;
    SvgBarChart c = {"Terminations", "games", NULL, 0};
    SvgBuf o;
    svg_buf_init(&o, 0);
    assert_int_equal(svg_bar_chart(&c, &o), SVG_OK);
    assert_balanced(o.data);
    assert_int_equal(count(o.data, "class=\"empty\""), 1);
    svg_buf_destroy(&o);
}

/// The buffer stops at its limit, says so, and stays failed (callers check once).
static void test_buf_limit(void **state)
{
    (void)state;
    SvgBuf o;
    svg_buf_init(&o, 32);
    assert_int_equal(svg_buf_printf(&o, "%s", "0123456789"), SVG_OK);
    assert_int_equal(svg_buf_printf(&o, "%s", "0123456789012345678901234"), SVG_ERR_TOO_BIG);
    assert_int_equal(svg_buf_printf(&o, "x"), SVG_ERR_TOO_BIG);
    assert_string_equal(o.data, "0123456789");
    svg_buf_destroy(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_axis_round),
        cmocka_unit_test(test_axis_degenerate),
        cmocka_unit_test(test_line_bounds_in_range),
        cmocka_unit_test(test_line_band),
        cmocka_unit_test(test_line_range_settles),
        cmocka_unit_test(test_ticks_whole_for_counts),
        cmocka_unit_test(test_line_loss_every_point),
        cmocka_unit_test(test_line_one_small_point),
        cmocka_unit_test(test_legend_rows),
        cmocka_unit_test(test_series_distinct),
        cmocka_unit_test(test_line_empty),
        cmocka_unit_test(test_line_one_point),
        cmocka_unit_test(test_line_skips_nonfinite),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_bars_empty),
        cmocka_unit_test(test_buf_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
