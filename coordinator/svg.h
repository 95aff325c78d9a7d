// SPDX-License-Identifier: MIT
// Plots as inline SVG text: a line chart (series of (x, y) points, an optional band around
// a series, horizontal bound lines) and a horizontal bar chart. The output needs no script,
// font or network access; it scales to its container (viewBox) and prints. Non-finite
// values are skipped, an empty chart says so, a one-point or flat series still gets a
// non-empty axis range, and an axis whose values are all whole numbers (games, epochs,
// counts) gets whole-number ticks. Each series of a line chart has its own colour, dash
// pattern and marker shape, so curves that lie on each other stay apart, and the legend,
// in rows between the title and the plot area, names the series that draw the same curve.
// The plotted ranges are written as data-xmin/xmax/ymin/ymax attributes so a test (or a
// script) can read them back.
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    SVG_WIDTH = 640,  // viewBox units
    SVG_HEIGHT = 300, // a line chart with one legend row; each further row adds SVG_LEGEND_ROW
    SVG_LEGEND_ROW = 16,
    SVG_SETTLE_POINTS = 20,
    SVG_BUF_LIMIT = 16 << 20 // default cap of a text buffer
};

typedef enum {
    SVG_OK,
    SVG_ERR_NOMEM,
    SVG_ERR_TOO_BIG, // the text would pass the buffer's limit
    SVG_ERR_ARG,     // a NULL chart or a negative count
    SVG_STATUS_NB
} SvgStatus;

/// A bounded, growing text buffer: once an append fails, every later one fails too and
/// status says why (so callers check once, at the end).
typedef struct {
    char *data; // NUL-terminated
    size_t len, cap, limit;
    SvgStatus status;
} SvgBuf;

typedef struct {
    double x, y;
} SvgPoint;

typedef struct {
    const char *name;
    const SvgPoint *points;
    size_t count;
    const double *lo, *hi; // optional band: lo[i] <= y <= hi[i] (NULL: none)
} SvgSeries;

typedef struct {
    const char *label;
    double y;
} SvgBound;

typedef struct {
    const char *title, *x_label, *y_label;
    const SvgSeries *series;
    int series_count;
    const SvgBound *bounds; // horizontal lines (SPRT bounds, zero)
    int bound_count;
    // false: the y range holds every point (a loss, a trajectory, a count). true: it follows a
    // series of SVG_SETTLE_POINTS or more once past the first tenth of the x range (an Elo of
    // +-1500 after the first games); those first points are drawn on the plot area's edge.
    bool settle;
} SvgLineChart;

typedef struct {
    const char *label;
    double value;
} SvgBar;

typedef struct {
    const char *title, *value_label;
    const SvgBar *bars;
    int bar_count;
} SvgBarChart;

const char *svg_strerror(SvgStatus st);

void svg_buf_init(SvgBuf *b, size_t limit); // limit 0: SVG_BUF_LIMIT
void svg_buf_destroy(SvgBuf *b);
SvgStatus svg_buf_printf(SvgBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
SvgStatus svg_buf_vprintf(SvgBuf *b, const char *fmt, va_list ap);
/// Appends text with &, <, >, " and ' escaped (for XML and HTML text and attributes);
/// control characters other than tab and newline are dropped.
SvgStatus svg_buf_escaped(SvgBuf *b, const char *text);

/// A round axis: [*lo, *hi] widened to multiples of *step (1, 2 or 5 times a power of ten)
/// with about `ticks` intervals; an empty or non-finite range becomes a non-empty one (one
/// value v > 0 never gets an axis below 0). With whole, the step is a whole number (counts).
void svg_axis(double *lo, double *hi, int ticks, bool whole, double *step);

SvgStatus svg_line_chart(const SvgLineChart *c, SvgBuf *out);
SvgStatus svg_bar_chart(const SvgBarChart *c, SvgBuf *out);
