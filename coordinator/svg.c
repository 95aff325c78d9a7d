// SPDX-License-Identifier: MIT
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// In viewBox units: the page scales the SVG to its width, so these are proportions, not pixels.
// The left margin holds the y tick labels, the top the title (and a line chart's legend), the
// bottom the x ticks and label.
enum {
    MARGIN_LEFT = 64,
    MARGIN_RIGHT = 16,
    MARGIN_TOP = 30,
    MARGIN_BOTTOM = 44,
    BAR_ROW = 26,
    BAR_LEFT_MIN = 160, // a bar chart's left margin, which holds its labels
    BAR_LEFT_MAX = 300,
    // A line chart's legend: rows from LEGEND_BASELINE (the title's baseline is 18, its font 14),
    // items from LEGEND_LEFT to LEGEND_RIGHT, the plot area LEGEND_BELOW under the last row.
    LEGEND_BASELINE = 36,
    LEGEND_BELOW = 8,
    LEGEND_LEFT = MARGIN_LEFT,
    LEGEND_RIGHT = SVG_WIDTH - MARGIN_RIGHT,
    LEGEND_SAMPLE = 30, // an entry's line and marker, before its name
    LEGEND_GAP = 14,
    // SVG cannot measure text: a character of the 11-unit font is taken as 7 units wide, more
    // than DejaVu Sans or Helvetica need on average, so a row never runs past the chart.
    LEGEND_CHAR_W = 7,
    LEGEND_CHARS_MAX = (LEGEND_RIGHT - LEGEND_LEFT - LEGEND_SAMPLE) / LEGEND_CHAR_W,
    LEGEND_SAME_MAX = 16, // series compared for a shared curve (the report draws 8 at most)
    PLOT_HEIGHT = SVG_HEIGHT - LEGEND_BASELINE - LEGEND_BELOW - MARGIN_BOTTOM
};

// Colour-blind-safe (Okabe-Ito, with a wine red for its yellow, which is too light to read on
// white), dark enough to print.
static const char *const PALETTE[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                      "#e69f00", "#56b4e9", "#000000", "#882255"};
enum { PALETTE_NB = sizeof PALETTE / sizeof PALETTE[0] };
// Series k: PALETTE[k], DASHES[k] and marker shape k, so a curve is known by its colour, its
// dash pattern and its markers (in print, to a colour-blind reader, on top of another).
static const char *const DASHES[] = {"",    "8 3",          "2 2", "10 3 2 3",
                                     "4 4", "12 3 2 3 2 3", "1 3", "6 2"};
enum { MARKERS_NB = sizeof DASHES / sizeof DASHES[0] };

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
void svg_axis(double *lo, double *hi, int ticks, bool whole, double *step)
{
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > *hi)
        *lo = 0, *hi = 1;
    if (*hi - *lo < 1e-12) {
        // One value: a range around it, so the point sits mid-chart. A small positive one (0.5
        // minutes) gets [0, 2v], not an axis from -1 to 1.5: a time or a count is never negative.
        double v = *lo, pad = fabs(v) > 1 ? fabs(v) * 0.1 : v != 0 ? fabs(v) : 1;
        *lo = v > 0 && v - pad < 0 ? 0 : v - pad;
        *hi = v + pad;
    }
    double raw = (*hi - *lo) / (ticks > 0 ? ticks : 5);
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    *step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag; // the nearest round step
    if (whole && *step < 1)
        *step = 1; // no tick at 2.5 games
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
    int height;                // of the whole chart
    bool x_whole, y_whole;     // every value a whole number: whole-number ticks
} Frame;

/// Data x to viewBox x, linear; svg_axis made x1 > x0, so the division is safe.
static double map_x(const Frame *f, double x)
{
    return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

/// Values outside the frame (the first, noisy points a settled series leaves out of its range)
/// are drawn on its edge.
/// SVG's y grows downwards: y0 maps to the bottom of the plot area (py1).
static double map_y(const Frame *f, double y)
{
    double py = f->py1 - (y - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
    return py < f->py0 ? f->py0 : py > f->py1 ? f->py1 : py;
}

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

/// Whether a finite v is a whole number (non-finite values are skipped, so they do not count).
static bool whole(double v) { return !isfinite(v) || fabs(v - round(v)) < 1e-9; }

/// The data range of every finite value (points, bands and bounds); false when none. With
/// c->settle the y range follows the run once it is past its start: in a series of
/// SVG_SETTLE_POINTS or more, the points in the first tenth of the x range (an Elo of +-1500
/// after 2 games) do not widen it, so a curve at -30 +- 15 after 1,600 games fills the plot.
/// Without it (a loss, a trajectory, a count) every point is in the range.
static bool data_range(const SvgLineChart *c, Frame *f)
{
    f->x0 = f->y0 = INFINITY;
    f->x1 = f->y1 = -INFINITY;
    f->x_whole = f->y_whole = true;
    bool any = false;
    for (int s = 0; s < c->series_count; s++)
        for (size_t i = 0; i < c->series[s].count; i++)
            if (isfinite(c->series[s].points[i].x) && isfinite(c->series[s].points[i].y)) {
                widen(&f->x0, &f->x1, c->series[s].points[i].x);
                f->x_whole &= whole(c->series[s].points[i].x);
            }
    double settled = f->x0 + (f->x1 - f->x0) / 10;
    for (int s = 0; s < c->series_count; s++) {
        const SvgSeries *sr = &c->series[s];
        for (size_t i = 0; i < sr->count; i++) {
            SvgPoint p = sr->points[i];
            if (!isfinite(p.x) || !isfinite(p.y))
                continue;
            any = true;
            f->y_whole &= whole(p.y) && (!sr->lo || (whole(sr->lo[i]) && whole(sr->hi[i])));
            if (c->settle && sr->count >= SVG_SETTLE_POINTS && p.x < settled)
                continue;
            widen(&f->y0, &f->y1, p.y);
            if (sr->lo && sr->hi) {
                widen(&f->y0, &f->y1, sr->lo[i]);
                widen(&f->y0, &f->y1, sr->hi[i]);
            }
        }
    }
    for (int b = 0; b < c->bound_count; b++) {
        widen(&f->y0, &f->y1, c->bounds[b].y);
        f->y_whole &= whole(c->bounds[b].y);
    }
    f->x_whole &= any;
    f->y_whole &= any;
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
                   f->height - 8);
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
                   "</text></g><rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                   "height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>",
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

/// Series k's marker, centred on (x, y) (its bounding box too): an outline (no fill), so markers
/// of two series on the same spot both show. The eight shapes match the eight dash patterns.
static void marker(SvgBuf *o, const char *cls, int k, double x, double y, const char *colour)
{
    const double r = 3.5;
    svg_buf_printf(o, "<path class=\"%s\" data-x=\"%.1f\" data-y=\"%.1f\" d=\"", cls, x, y);
    switch (k % MARKERS_NB) {
    case 0: // circle
        svg_buf_printf(o, "M%.1f,%.1fa%.1f,%.1f 0 1,0 %.1f,0a%.1f,%.1f 0 1,0 %.1f,0", x - r, y, r,
                       r, 2 * r, r, r, -2 * r);
        break;
    case 1: // square
        svg_buf_printf(o, "M%.1f,%.1fh%.1fv%.1fh%.1fz", x - r, y - r, 2 * r, 2 * r, -2 * r);
        break;
    case 2: // triangle, point up
        svg_buf_printf(o, "M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fz", x, y - r, x + r, y + r, x - r, y + r);
        break;
    case 3: // diamond
        svg_buf_printf(o, "M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fL%.1f,%.1fz", x, y - 1.3 * r, x + 1.3 * r,
                       y, x, y + 1.3 * r, x - 1.3 * r, y);
        break;
    case 4: // triangle, point down
        svg_buf_printf(o, "M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fz", x, y + r, x + r, y - r, x - r, y - r);
        break;
    case 5: // plus
        svg_buf_printf(o, "M%.1f,%.1fH%.1fM%.1f,%.1fV%.1f", x - r, y, x + r, x, y - r, y + r);
        break;
    case 6: // cross
        svg_buf_printf(o, "M%.1f,%.1fL%.1f,%.1fM%.1f,%.1fL%.1f,%.1f", x - r, y - r, x + r, y + r,
                       x - r, y + r, x + r, y - r);
        break;
    default: // triangle, point right
        svg_buf_printf(o, "M%.1f,%.1fL%.1f,%.1fL%.1f,%.1fz", x + r, y, x - r, y - r, x - r, y + r);
        break;
    }
    svg_buf_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>", colour);
}

static bool finite_point(SvgPoint p) { return isfinite(p.x) && isfinite(p.y); }

/// Whether the marker of series k of n goes on its j-th finite point of `shown`: every point
/// of a short series; on a long one MARKS points, evenly spread and shifted by k/(n+1) of
/// the spacing, so two series on the same curve put their markers in different places.
static bool marked(size_t j, size_t shown, int k, int n)
{
    enum { MARKS = 8 };
    if (shown <= 2 * MARKS)
        return true;
    double spacing = (double)shown / MARKS, phase = (k + 1.0) / (n + 1.0) * spacing;
    double pos = (double)j - phase;
    return pos >= -0.5 && fmod(pos + 0.5, spacing) < 1;
}

static void series(SvgBuf *o, const Frame *f, const SvgLineChart *c, int k)
{
    const SvgSeries *s = &c->series[k];
    const char *colour = PALETTE[k % PALETTE_NB];
    if (s->lo && s->hi)
        band(o, f, s, colour);
    svg_buf_printf(o, "<polyline class=\"series\" data-name=\"");
    svg_buf_escaped(o, s->name);
    svg_buf_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", colour);
    if (DASHES[k % MARKERS_NB][0])
        svg_buf_printf(o, " stroke-dasharray=\"%s\"", DASHES[k % MARKERS_NB]);
    svg_buf_printf(o, " points=\"");
    size_t shown = 0;
    for (size_t i = 0; i < s->count; i++)
        if (finite_point(s->points[i])) {
            svg_buf_printf(o, "%.1f,%.1f ", map_x(f, s->points[i].x), map_y(f, s->points[i].y));
            shown++;
        }
    svg_buf_printf(o, "\"/>");
    // A lone point draws no line: its marker is all there is (class "point").
    for (size_t i = 0, j = 0; i < s->count; i++)
        if (finite_point(s->points[i]) && marked(j++, shown, k, c->series_count))
            marker(o, shown == 1 ? "point" : "marker", k, map_x(f, s->points[i].x),
                   map_y(f, s->points[i].y), colour);
}

/// Whether series a and b draw the same curve: as many drawn points, each within a fraction of
/// a unit of the other's (identical engines give identical Elo curves, which would hide one).
static bool same_curve(const Frame *f, const SvgSeries *a, const SvgSeries *b)
{
    size_t i = 0, k = 0, drawn = 0;
    for (;;) {
        while (i < a->count && !finite_point(a->points[i]))
            i++;
        while (k < b->count && !finite_point(b->points[k]))
            k++;
        if (i == a->count || k == b->count)
            return i == a->count && k == b->count && drawn > 0;
        if (fabs(map_x(f, a->points[i].x) - map_x(f, b->points[k].x)) > 0.75 ||
            fabs(map_y(f, a->points[i].y) - map_y(f, b->points[k].y)) > 0.75)
            return false;
        i++, k++, drawn++;
    }
}

/// Code points of UTF-8 text (continuation bytes are not counted): the width estimate's unit.
static size_t text_chars(const char *t)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p; p++)
        n += (*p & 0xC0) != 0x80;
    return n;
}

/// Writes text escaped, at most *budget code points of it (then an ellipsis, counted as one);
/// lowers *budget by what was written.
static void put_clipped(SvgBuf *o, const char *text, size_t *budget)
{
    size_t n = text_chars(text);
    if (n <= *budget) {
        svg_buf_escaped(o, text);
        *budget -= n;
        return;
    }
    if (*budget == 0)
        return;
    // The cut falls before a lead byte, never inside a character.
    const char *t = text, *p = t;
    for (size_t kept = 0; *p; p++)
        if ((*p & 0xC0) != 0x80 && kept++ == *budget - 1)
            break;
    char part[4 * (LEGEND_CHARS_MAX + LEGEND_SAMPLE) + 1]; // room for any budget here
    size_t len = (size_t)(p - t) < sizeof part - 1 ? (size_t)(p - t) : sizeof part - 1;
    memcpy(part, t, len);
    part[len] = '\0';
    svg_buf_escaped(o, part);
    svg_buf_printf(o, "\xE2\x80\xA6"); // U+2026, the ellipsis
    *budget = 0;
}

/// Where the next legend item goes: a row (0 the first, under the title) and x on it.
typedef struct {
    double x;
    int row;
} Pen;

/// Moves the pen to a new row when an item of w units does not fit on the current one.
static void place(Pen *p, double w)
{
    if (p->x > LEGEND_LEFT && p->x + w > LEGEND_RIGHT) {
        p->row++;
        p->x = LEGEND_LEFT;
    }
}

static double row_baseline(int row) { return LEGEND_BASELINE + row * SVG_LEGEND_ROW; }

/// The first of the earlier series that draws the same curve as series k, or -1.
static int same_as(const Frame *f, const SvgLineChart *c, int k)
{
    for (int t = 0; t < k && k < LEGEND_SAME_MAX; t++)
        if (same_curve(f, &c->series[t], &c->series[k]))
            return t;
    return -1;
}

/// One entry: the series' line, dash pattern and marker, then its name (cut to fit a row).
static void legend_entry(SvgBuf *o, Pen *p, const SvgLineChart *c, int k)
{
    const char *name = c->series[k].name ? c->series[k].name : "";
    size_t chars = text_chars(name);
    if (chars > LEGEND_CHARS_MAX)
        chars = LEGEND_CHARS_MAX;
    place(p, LEGEND_SAMPLE + chars * LEGEND_CHAR_W);
    if (o) {
        const char *colour = PALETTE[k % PALETTE_NB];
        double y = row_baseline(p->row) - 4;
        svg_buf_printf(o,
                       "<g class=\"entry\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>",
                       p->x, y, p->x + LEGEND_SAMPLE - 6, y, colour,
                       DASHES[k % MARKERS_NB][0] ? DASHES[k % MARKERS_NB] : "none");
        marker(o, "key", k, p->x + (LEGEND_SAMPLE - 6) / 2.0, y, colour);
        svg_buf_printf(o, "<text x=\"%.1f\" y=\"%.1f\">", p->x + LEGEND_SAMPLE,
                       row_baseline(p->row));
        size_t budget = chars;
        put_clipped(o, name, &budget);
        svg_buf_printf(o, "</text></g>");
    }
    p->x += LEGEND_SAMPLE + chars * LEGEND_CHAR_W + LEGEND_GAP;
}

/// A note for the series that draw the same curve as series k: "same curve: k, a, b".
static void legend_note(SvgBuf *o, Pen *p, const SvgLineChart *c, int k, const int *same)
{
    static const char lead[] = "same curve: ";
    size_t chars = text_chars(lead);
    for (int t = k; t < c->series_count && t < LEGEND_SAME_MAX; t++)
        if (t == k || same[t] == k)
            chars += text_chars(c->series[t].name) + (t == k ? 0 : 2);
    if (chars > LEGEND_CHARS_MAX + LEGEND_SAMPLE / LEGEND_CHAR_W)
        chars = LEGEND_CHARS_MAX + LEGEND_SAMPLE / LEGEND_CHAR_W;
    place(p, chars * LEGEND_CHAR_W);
    if (o) {
        svg_buf_printf(o, "<text class=\"same\" x=\"%.1f\" y=\"%.1f\" fill=\"#444\">", p->x,
                       row_baseline(p->row));
        size_t budget = chars;
        put_clipped(o, lead, &budget);
        for (int t = k; t < c->series_count && t < LEGEND_SAME_MAX; t++)
            if (t == k || same[t] == k) {
                if (t != k)
                    put_clipped(o, ", ", &budget);
                put_clipped(o, c->series[t].name, &budget);
            }
        svg_buf_printf(o, "</text>");
    }
    p->x += chars * LEGEND_CHAR_W + LEGEND_GAP;
}

/// The legend in rows between the title and the plot area: an entry per series, then a note
/// per group of series that draw the same curve. With o NULL it only measures. Returns the
/// number of rows (1 at least: a chart keeps its room for one).
static int legend(SvgBuf *o, const Frame *f, const SvgLineChart *c)
{
    int same[LEGEND_SAME_MAX];
    Pen p = {LEGEND_LEFT, 0};
    if (o)
        svg_buf_printf(o, "<g class=\"legend\" font-size=\"11\" fill=\"#222\">");
    for (int k = 0; k < c->series_count; k++) {
        if (k < LEGEND_SAME_MAX)
            same[k] = same_as(f, c, k);
        legend_entry(o, &p, c, k);
    }
    for (int k = 0; k < c->series_count && k < LEGEND_SAME_MAX; k++) {
        bool shared = false;
        for (int t = k + 1; t < c->series_count && t < LEGEND_SAME_MAX; t++)
            shared |= same[t] == k;
        if (shared && same[k] < 0)
            legend_note(o, &p, c, k, same);
    }
    if (o)
        svg_buf_printf(o, "</g>");
    return p.row + 1;
}

SvgStatus svg_line_chart(const SvgLineChart *c, SvgBuf *o)
{
    if (!c || !o || c->series_count < 0 || c->bound_count < 0)
        return SVG_ERR_ARG;
    // The plot area keeps its size; the legend's rows push it down and make the chart taller.
    Frame f = {0, 0, 0, 0, MARGIN_LEFT, SVG_WIDTH - MARGIN_RIGHT, 0, PLOT_HEIGHT, 0, false, false};
    bool any = data_range(c, &f);
    if (!any)
        f.x0 = 0, f.x1 = 1;
    double xstep, ystep;
    svg_axis(&f.x0, &f.x1, 6, f.x_whole, &xstep);
    svg_axis(&f.y0, &f.y1, 5, f.y_whole, &ystep);
    // Measured with the plot area at the top: which curves coincide does not depend on where
    // the area lies.
    int rows = legend(NULL, &f, c);
    f.py0 = row_baseline(rows - 1) + LEGEND_BELOW;
    f.py1 = f.py0 + PLOT_HEIGHT;
    f.height = (int)f.py1 + MARGIN_BOTTOM;
    chart_open(o, c->title, f.height, &f);
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
                       c->bounds[b].y, f.px0, y, f.px1, y, f.px0 + 4,
                       y - 14 < f.py0 ? y + 12 : y - 3); // under a line at the top: in the area
        svg_buf_escaped(o, c->bounds[b].label);
        svg_buf_printf(o, "</text>");
    }
    for (int s = 0; s < c->series_count; s++)
        series(o, &f, c, s);
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
    // chart's height follows the number of bars (one BAR_ROW each), its left margin the longest
    // label (estimated as the legend's text is), up to BAR_LABEL_MAX; a longer one is cut.
    size_t chars = 0;
    for (int i = 0; i < c->bar_count; i++)
        if (text_chars(c->bars[i].label) > chars)
            chars = text_chars(c->bars[i].label);
    double left = 14 + (double)chars * LEGEND_CHAR_W;
    left = left < BAR_LEFT_MIN ? BAR_LEFT_MIN : left > BAR_LEFT_MAX ? BAR_LEFT_MAX : left;
    Frame f = {0,      0,    0,    0, left, SVG_WIDTH - 56, MARGIN_TOP, height - MARGIN_BOTTOM,
               height, true, false};
    for (int i = 0; i < c->bar_count; i++) {
        widen(&f.x0, &f.x1, c->bars[i].value);
        f.x_whole &= whole(c->bars[i].value); // counts: whole-number ticks
    }
    double step;
    svg_axis(&f.x0, &f.x1, 5, f.x_whole, &step);
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
        svg_buf_printf(o,
                       "<text class=\"bar-label\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                       "text-anchor=\"end\">",
                       f.px0 - 6, y + 13);
        size_t budget = (size_t)((f.px0 - 14) / LEGEND_CHAR_W);
        put_clipped(o, c->bars[i].label, &budget);
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
