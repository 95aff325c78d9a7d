// SPDX-License-Identifier: MIT
// The SVG plot generator: axes cover every value and bound, ranges are round and never
// empty, empty and one-point series still make a valid chart, text is escaped, the
// buffer refuses to pass its limit.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
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
    svg_axis(&lo, &hi, 5, &step);
    assert_true(lo <= -2.7 && hi >= 3.1);
    assert_true(fabs(step - 1) < 1e-12 || fabs(step - 2) < 1e-12);
    assert_true(fabs(lo / step - round(lo / step)) < 1e-9);
    assert_true(fabs(hi / step - round(hi / step)) < 1e-9);
    lo = 0, hi = 1234;
    svg_axis(&lo, &hi, 6, &step);
    assert_true(fabs(step - 200) < 1e-9);
    assert_true(lo == 0 && hi == 1400);
}

/// A single value and a non-finite range both become non-empty ranges.
static void test_axis_degenerate(void **state)
{
    (void)state;
    double lo = 5, hi = 5, step;
    svg_axis(&lo, &hi, 5, &step);
    assert_true(lo < 5 && hi > 5 && step > 0);
    lo = NAN, hi = INFINITY;
    svg_axis(&lo, &hi, 5, &step);
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
    SvgLineChart c = {"LLR", "games", "LLR", &s, 1, b, 2};
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
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, NULL, 0};
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
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, &zero, 1};
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

/// No series at all, or a series without points: a chart that says "no data yet".
static void test_line_empty(void **state)
{
    (void)state;
    SvgSeries s = {"LLR", NULL, 0, NULL, NULL};
    SvgLineChart c = {"LLR", "games", "LLR", &s, 1, NULL, 0};
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
    SvgLineChart c = {"Elo", "games", "Elo", &s, 1, NULL, 0};
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
    SvgLineChart c = {"t", "x", "y", &s, 1, NULL, 0};
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
        cmocka_unit_test(test_line_empty),
        cmocka_unit_test(test_line_one_point),
        cmocka_unit_test(test_line_skips_nonfinite),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_bars_empty),
        cmocka_unit_test(test_buf_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
