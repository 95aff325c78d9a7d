// SPDX-License-Identifier: MIT
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// In viewBox units: the page scales the SVG to its width, so these are proportions, not pixels.
// The left margin holds the y tick labels, the top the title, the bottom the x ticks and label.
enum { MARGIN_LEFT = 64, MARGIN_RIGHT = 16, MARGIN_TOP = 30, MARGIN_BOTTOM = 44, BAR_ROW = 26 };

// Colour-blind-safe (Okabe-Ito), dark enough to print.
static const char *const PALETTE[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                      "#e69f00", "#56b4e9", "#000000", "#f0e442"};
enum { PALETTE_NB = sizeof PALETTE / sizeof PALETTE[0] };

const char *svg_strerror(SvgStatus st)
{
    static const char *const text[SVG_STATUS_NB] = {"ok", "out of memory",
                                                    "text over the size limit", "bad argument"};
    return (unsigned)st < SVG_STATUS_NB ? text[st] : "unknown status";
}

void svg_buf_init(SvgBuf *b, size_t limit)
{
    *b = (SvgBuf){NULL, 0, 0, limit ? limit : SVG_BUF_LIMIT, SVG_OK};
}

void svg_buf_destroy(SvgBuf *b)
{
    free(b->data);
    *b = (SvgBuf){NULL, 0, 0, b->limit, SVG_OK};
}

/// Room for more bytes and the NUL. The status is sticky: after the first error every later
/// write is a no-op, so a caller checks once, at the end. The limit is checked before any
/// growth, so a runaway page fails with SVG_ERR_TOO_BIG instead of eating memory.
static SvgStatus reserve(SvgBuf *b, size_t more)
{
    if (b->status)
        return b->status;
    if (more >= b->limit - b->len)
        return b->status = SVG_ERR_TOO_BIG;
    if (b->len + more + 1 <= b->cap)
        return SVG_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return b->status = SVG_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return SVG_OK;
}

SvgStatus svg_buf_vprintf(SvgBuf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    // Measured first, then written once into reserved room: never a truncated piece of markup.
    int n = vsnprintf(NULL, 0, fmt, ap);
    SvgStatus st = n < 0 ? SVG_ERR_ARG : reserve(b, (size_t)n);
    if (st == SVG_OK) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
    return st;
}

SvgStatus svg_buf_printf(SvgBuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    SvgStatus st = svg_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return st;
}

SvgStatus svg_buf_escaped(SvgBuf *b, const char *text)
{
    // Safe in element text and in quoted attributes alike (both quote kinds are escaped). Other
    // control characters are dropped (XML 1.0 allows none but tab, newline and CR, not even
    // escaped). Bytes >= 0x80 pass as they are, so UTF-8 names survive.
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        const char *rep = *p == '&'    ? "&amp;"
                          : *p == '<'  ? "&lt;"
                          : *p == '>'  ? "&gt;"
                          : *p == '"'  ? "&quot;"
                          : *p == '\'' ? "&#39;"
                                       : NULL;
        if (rep) {
            svg_buf_printf(b, "%s", rep);
        } else if (*p >= 0x20 || *p == '\t' || *p == '\n') {
            if (reserve(b, 1) == SVG_OK) {
                b->data[b->len++] = (char)*p;
                b->data[b->len] = '\0';
            }
        }
    }
    return b->status;
}

// A step of 1, 2 or 5 times a power of ten near range / ticks, and the range widened outwards to
// whole steps, so every tick label is a round number. A broken range becomes [0, 1].
void svg_axis(double *lo, double *hi, int ticks, double *step)
{
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > *hi)
        *lo = 0, *hi = 1;
    if (*hi - *lo < 1e-12) {
        // One value: a range around it, so the point sits mid-chart.
        double pad = fabs(*lo) > 1 ? fabs(*lo) * 0.1 : 1;
        *lo -= pad;
        *hi += pad;
    }
    double raw = (*hi - *lo) / (ticks > 0 ? ticks : 5);
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    *step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag; // the nearest round step
    // The 1e-9 keeps an end that is already a whole step (up to rounding) from gaining one more.
    *lo = floor(*lo / *step + 1e-9) * *step;
    *hi = ceil(*hi / *step - 1e-9) * *step;
}

/// Tick label: enough digits for the step, never "-0".
static void tick_text(double v, double step, char *buf, size_t len)
{
    int digits = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) < step * 1e-6)
        v = 0;
    snprintf(buf, len, "%.*f", digits > 6 ? 6 : digits, v);
}

typedef struct {
    double x0, x1, y0, y1;     // data range
    double px0, px1, py0, py1; // plot area in viewBox units (py0 is the top)
} Frame;

/// Data x to viewBox x, linear; svg_axis made x1 > x0, so the division is safe.
static double map_x(const Frame *f, double x)
{
    return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

/// Values outside the frame (the first, noisy points a long series leaves out of its range)
/// are drawn on its edge.
/// SVG's y grows downwards: y0 maps to the bottom of the plot area (py1).
static double map_y(const Frame *f, double y)
{
    double py = f->py1 - (y - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
    return py < f->py0 ? f->py0 : py > f->py1 ? f->py1 : py;
}

enum { SVG_SETTLE_POINTS = 20 };

/// Extends [lo, hi] to v; non-finite values (null in the record) are ignored.
static void widen(double *lo, double *hi, double v)
{
    if (!isfinite(v))
        return;
    if (v < *lo)
        *lo = v;
    if (v > *hi)
        *hi = v;
}

/// The data range of every finite value (points, bands and bounds); false when none. The y
/// range follows the run once it is past its start: in a series of SVG_SETTLE_POINTS or more,
/// the points in the first tenth of the x range (an Elo of +-1500 after 2 games) do not widen
/// it, so a curve at -30 +- 15 after 1,600 games fills the plot.
static bool data_range(const SvgLineChart *c, Frame *f)
{
    f->x0 = f->y0 = INFINITY;
    f->x1 = f->y1 = -INFINITY;
    bool any = false;
    for (int s = 0; s < c->series_count; s++)
        for (size_t i = 0; i < c->series[s].count; i++)
            if (isfinite(c->series[s].points[i].x) && isfinite(c->series[s].points[i].y))
                widen(&f->x0, &f->x1, c->series[s].points[i].x);
    double settled = f->x0 + (f->x1 - f->x0) / 10;
    for (int s = 0; s < c->series_count; s++) {
        const SvgSeries *sr = &c->series[s];
        for (size_t i = 0; i < sr->count; i++) {
            SvgPoint p = sr->points[i];
            if (!isfinite(p.x) || !isfinite(p.y))
                continue;
            any = true;
            if (sr->count >= SVG_SETTLE_POINTS && p.x < settled)
                continue;
            widen(&f->y0, &f->y1, p.y);
            if (sr->lo && sr->hi) {
                widen(&f->y0, &f->y1, sr->lo[i]);
                widen(&f->y0, &f->y1, sr->hi[i]);
            }
        }
    }
    for (int b = 0; b < c->bound_count; b++)
        widen(&f->y0, &f->y1, c->bounds[b].y);
    return any;
}

/// The <svg> element with its title (a tooltip and what a screen reader says) and a white
/// background; the data-* attributes give tests the chart's ranges without parsing the paths.
static void chart_open(SvgBuf *o, const char *title, int height, const Frame *f)
{
    svg_buf_printf(o,
                   "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                   "role=\"img\" data-xmin=\"%.6g\" data-xmax=\"%.6g\" data-ymin=\"%.6g\" "
                   "data-ymax=\"%.6g\"><title>",
                   SVG_WIDTH, height, f->x0, f->x1, f->y0, f->y1);
    svg_buf_escaped(o, title);
    svg_buf_printf(o, "</title><rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>", SVG_WIDTH,
                   height);
    svg_buf_printf(o,
                   "<text class=\"title\" x=\"%d\" y=\"18\" font-size=\"14\" "
                   "font-weight=\"bold\">",
                   MARGIN_LEFT);
    svg_buf_escaped(o, title);
    svg_buf_printf(o, "</text>");
}

static void axes(SvgBuf *o, const Frame *f, double xstep, double ystep, const SvgLineChart *c)
{
    svg_buf_printf(o, "<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">");
    for (double y = f->y0; y <= f->y1 + ystep * 1e-6; y += ystep)
        svg_buf_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->px0,
                       map_y(f, y), f->px1, map_y(f, y));
    svg_buf_printf(o, "</g><g class=\"axis x\" font-size=\"11\" text-anchor=\"middle\">");
    char t[32];
    for (double x = f->x0; x <= f->x1 + xstep * 1e-6; x += xstep) {
        tick_text(x, xstep, t, sizeof t);
        svg_buf_printf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s</text>", map_x(f, x),
                       f->py1 + 15, t);
    }
    svg_buf_printf(o, "<text class=\"label\" x=\"%.1f\" y=\"%d\">", (f->px0 + f->px1) / 2,
                   SVG_HEIGHT - 8);
    svg_buf_escaped(o, c->x_label);
    svg_buf_printf(o, "</text></g><g class=\"axis y\" font-size=\"11\" text-anchor=\"end\">");
    for (double y = f->y0; y <= f->y1 + ystep * 1e-6; y += ystep) {
        tick_text(y, ystep, t, sizeof t);
        svg_buf_printf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s</text>", f->px0 - 6,
                       map_y(f, y) + 4, t);
    }
    svg_buf_printf(o,
                   "<text class=\"label\" transform=\"translate(14 %.1f) rotate(-90)\" "
                   "text-anchor=\"middle\">",
                   (f->py0 + f->py1) / 2);
    svg_buf_escaped(o, c->y_label);
    svg_buf_printf(o,
                   "</text></g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                   "fill=\"none\" stroke=\"#444\"/>",
                   f->px0, f->py0, f->px1 - f->px0, f->py1 - f->py0);
}

/// A series' band as one polygon: along hi left to right, then back along lo, so the outline
/// never crosses itself. Drawn before the line, which stays on top.
static void band(SvgBuf *o, const Frame *f, const SvgSeries *s, const char *colour)
{
    svg_buf_printf(o, "<polygon class=\"band\" fill=\"%s\" fill-opacity=\"0.18\" points=\"",
                   colour);
    for (size_t i = 0; i < s->count; i++)
        if (isfinite(s->points[i].x) && isfinite(s->hi[i]))
            svg_buf_printf(o, "%.1f,%.1f ", map_x(f, s->points[i].x), map_y(f, s->hi[i]));
    for (size_t i = s->count; i-- > 0;)
        if (isfinite(s->points[i].x) && isfinite(s->lo[i]))
            svg_buf_printf(o, "%.1f,%.1f ", map_x(f, s->points[i].x), map_y(f, s->lo[i]));
    svg_buf_printf(o, "\"/>");
}

static void series(SvgBuf *o, const Frame *f, const SvgSeries *s, const char *colour)
{
    if (s->lo && s->hi)
        band(o, f, s, colour);
    svg_buf_printf(o, "<polyline class=\"series\" data-name=\"");
    svg_buf_escaped(o, s->name);
    svg_buf_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colour);
    size_t shown = 0, last = 0;
    for (size_t i = 0; i < s->count; i++)
        if (isfinite(s->points[i].x) && isfinite(s->points[i].y)) {
            svg_buf_printf(o, "%.1f,%.1f ", map_x(f, s->points[i].x), map_y(f, s->points[i].y));
            shown++;
            last = i;
        }
    svg_buf_printf(o, "\"/>");
    // A lone point draws no line: mark it.
    if (shown == 1)
        svg_buf_printf(o, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>",
                       map_x(f, s->points[last].x), map_y(f, s->points[last].y), colour);
}

/// Series names right-aligned along the top, each in its line's colour, laid from the right
/// (the width of a name estimated at 7 units a character: SVG has no text measuring).
static void legend(SvgBuf *o, const Frame *f, const SvgLineChart *c)
{
    double x = f->px1 - 4;
    svg_buf_printf(o, "<g class=\"legend\" font-size=\"11\" text-anchor=\"end\">");
    for (int s = c->series_count; s-- > 0;) {
        svg_buf_printf(o, "<text x=\"%.1f\" y=\"%d\" fill=\"%s\">", x, 18, PALETTE[s % PALETTE_NB]);
        svg_buf_escaped(o, c->series[s].name);
        svg_buf_printf(o, "</text>");
        x -= 8 + 7 * (double)strlen(c->series[s].name ? c->series[s].name : "");
    }
    svg_buf_printf(o, "</g>");
}

SvgStatus svg_line_chart(const SvgLineChart *c, SvgBuf *o)
{
    if (!c || !o || c->series_count < 0 || c->bound_count < 0)
        return SVG_ERR_ARG;
    Frame f = {
        0, 0, 0, 0, MARGIN_LEFT, SVG_WIDTH - MARGIN_RIGHT, MARGIN_TOP, SVG_HEIGHT - MARGIN_BOTTOM};
    bool any = data_range(c, &f);
    if (!any)
        f.x0 = 0, f.x1 = 1;
    double xstep, ystep;
    svg_axis(&f.x0, &f.x1, 6, &xstep);
    svg_axis(&f.y0, &f.y1, 5, &ystep);
    chart_open(o, c->title, SVG_HEIGHT, &f);
    axes(o, &f, xstep, ystep, c);
    // The bounds (an SPRT's H0/H1 lines, Elo 0) under the series: dashed, labelled at the left.
    for (int b = 0; b < c->bound_count; b++) {
        if (!isfinite(c->bounds[b].y))
            continue;
        double y = map_y(&f, c->bounds[b].y);
        svg_buf_printf(o,
                       "<line class=\"bound\" data-y=\"%.6g\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                       "y2=\"%.1f\" stroke=\"#b00\" stroke-dasharray=\"6 4\"/>"
                       "<text class=\"bound-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "fill=\"#b00\">",
                       c->bounds[b].y, f.px0, y, f.px1, y, f.px0 + 4, y - 3);
        svg_buf_escaped(o, c->bounds[b].label);
        svg_buf_printf(o, "</text>");
    }
    for (int s = 0; s < c->series_count; s++)
        series(o, &f, &c->series[s], PALETTE[s % PALETTE_NB]);
    if (!any)
        svg_buf_printf(o,
                       "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#666\">no data yet</text>",
                       (f.px0 + f.px1) / 2, (f.py0 + f.py1) / 2);
    legend(o, &f, c);
    svg_buf_printf(o, "</svg>");
    return o->status;
}

SvgStatus svg_bar_chart(const SvgBarChart *c, SvgBuf *o)
{
    if (!c || !o || c->bar_count < 0)
        return SVG_ERR_ARG;
    int rows = c->bar_count > 0 ? c->bar_count : 1;
    int height = MARGIN_TOP + rows * BAR_ROW + MARGIN_BOTTOM;
    // The value range starts at [0, 0]: every bar grows from 0, and the axis always shows 0. The
    // chart's height follows the number of bars (one BAR_ROW each), its left margin the labels.
    Frame f = {0, 0, 0, 0, 160, SVG_WIDTH - 56, MARGIN_TOP, height - MARGIN_BOTTOM};
    for (int i = 0; i < c->bar_count; i++)
        widen(&f.x0, &f.x1, c->bars[i].value);
    double step;
    svg_axis(&f.x0, &f.x1, 5, &step);
    f.y0 = 0;
    f.y1 = rows;
    chart_open(o, c->title, height, &f);
    char t[32];
    svg_buf_printf(o, "<g class=\"axis x\" font-size=\"11\" text-anchor=\"middle\">");
    for (double x = f.x0; x <= f.x1 + step * 1e-6; x += step) {
        tick_text(x, step, t, sizeof t);
        svg_buf_printf(o,
                       "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                       "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s</text>",
                       map_x(&f, x), f.py0, map_x(&f, x), f.py1, map_x(&f, x), f.py1 + 15, t);
    }
    svg_buf_printf(o, "<text class=\"label\" x=\"%.1f\" y=\"%d\">", (f.px0 + f.px1) / 2,
                   height - 8);
    svg_buf_escaped(o, c->value_label);
    svg_buf_printf(o, "</text></g>");
    for (int i = 0; i < c->bar_count; i++) {
        double v = isfinite(c->bars[i].value) ? c->bars[i].value : 0;
        double y = f.py0 + i * BAR_ROW + 4, x0 = map_x(&f, 0 > f.x0 ? 0 : f.x0), x1 = map_x(&f, v);
        svg_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">",
                       f.px0 - 6, y + 14);
        svg_buf_escaped(o, c->bars[i].label);
        svg_buf_printf(o,
                       "</text><rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%d\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">"
                       "%.6g</text>",
                       x0 < x1 ? x0 : x1, y, fabs(x1 - x0), BAR_ROW - 8, PALETTE[0],
                       (x0 > x1 ? x0 : x1) + 4, y + 14, v);
    }
    if (c->bar_count == 0)
        svg_buf_printf(o,
                       "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "fill=\"#666\">no data yet</text>",
                       (f.px0 + f.px1) / 2, f.py0 + 16);
    svg_buf_printf(o, "</svg>");
    return o->status;
}
