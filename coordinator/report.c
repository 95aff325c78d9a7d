// SPDX-License-Identifier: MIT
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report_code.h"

// report_from_json refuses a record of another schema name or REPORT_SCHEMA_VERSION: a reader
// of report.json (coordinator/REPORT.md) relies on both to know the layout that follows.
#define SCHEMA_NAME "xqforge-report"

// A named series of a line plot. Invariant: lo and hi are both NULL or both hold n values,
// one per point; a point added without a band to a banded series gets lo = hi = y.
typedef struct {
    char name[REPORT_NAME_MAX];
    SvgPoint *pts;
    double *lo, *hi; // both NULL: no band
    size_t n, cap;
} Series;

typedef struct {
    // A plot is a line plot (bounds and series) or a bar plot (bars), never both: kind is fixed
    // when it is first declared. Fixed arrays bounded by the REPORT_*_MAX limits: a plot is one
    // allocation, plus its series' points.
    char id[REPORT_NAME_MAX], title[REPORT_NAME_MAX], x_label[REPORT_NAME_MAX],
        y_label[REPORT_NAME_MAX];
    ReportPlotKind kind;
    bool settle; // a line plot whose y range follows the run past its start (svg.h)
    char bound_label[REPORT_BOUNDS_MAX][REPORT_NAME_MAX];
    double bound_y[REPORT_BOUNDS_MAX];
    int bound_count;
    Series series[REPORT_SERIES_MAX];
    int series_count;
    char bar_label[REPORT_BARS_MAX][REPORT_NAME_MAX];
    double bar_value[REPORT_BARS_MAX];
    int bar_count;
} Plot;

typedef struct {
    // (group, label) is a fact's key: report_fact replaces the text of an existing pair.
    char group[REPORT_NAME_MAX], label[REPORT_NAME_MAX], text[REPORT_TEXT_MAX];
} Fact;

struct Report {
    // One Report per run, rewritten in place by every periodic report: facts and plots keep their
    // order of first appearance, which is the order of the page and of report.json.
    char run_id[REPORT_NAME_MAX], title[REPORT_NAME_MAX], software[REPORT_NAME_MAX];
    char generated_at[32];
    uint64_t version;
    bool final;
    json_t *fields;
    Fact *facts;
    int fact_count;
    Plot *plots[REPORT_PLOTS_MAX];
    int plot_count;
};

// The top-level keys report_to_json writes itself: report_set refuses them so that a field can
// never shadow the header, and read_record skips them because report_from_json reads the
// header on its own.
static const char *const RESERVED[] = {
    "schema", "schema_version", "run_id",   "title", "report_version",
    "final",  "generated_at",   "software", "facts", "plots"};

const char *report_strerror(ReportStatus st)
{
    static const char *const text[REPORT_STATUS_NB] = {"ok",
                                                       "out of memory",
                                                       "a report limit was reached",
                                                       "bad argument",
                                                       "cannot write the report",
                                                       "not a report of this schema",
                                                       "report too big"};
    return (unsigned)st < REPORT_STATUS_NB ? text[st] : "unknown status";
}

const char *report_plot_kind_name(ReportPlotKind k)
{
    return k == REPORT_PLOT_LINE ? "line" : k == REPORT_PLOT_BARS ? "bars" : "?";
}

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

/// generated_at in UTC, ISO 8601 with a Z: the same text whatever the machine's time zone.
static void stamp_now(Report *r)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(r->generated_at, sizeof r->generated_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

Report *report_new(const char *run_id, const char *title, const char *software_version)
{
    Report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fields = json_object();
    r->facts = calloc(REPORT_FACTS_MAX, sizeof *r->facts);
    if (!r->fields || !r->facts) {
        report_free(r);
        return NULL;
    }
    copy(r->run_id, sizeof r->run_id, run_id);
    copy(r->title, sizeof r->title, title);
    copy(r->software, sizeof r->software, software_version);
    stamp_now(r);
    return r;
}

static void series_free(Series *s)
{
    free(s->pts);
    free(s->lo);
    free(s->hi);
    memset(s, 0, sizeof *s);
}

void report_free(Report *r)
{
    if (!r)
        return;
    for (int p = 0; p < r->plot_count; p++) {
        for (int s = 0; s < r->plots[p]->series_count; s++)
            series_free(&r->plots[p]->series[s]);
        free(r->plots[p]);
    }
    json_decref(r->fields);
    free(r->facts);
    free(r);
}

void report_set_version(Report *r, uint64_t version, bool final)
{
    r->version = version;
    r->final = final;
    stamp_now(r);
}

uint64_t report_version(const Report *r) { return r->version; }
const char *report_run_id(const Report *r) { return r->run_id; }

void report_set_run_id(Report *r, const char *run_id) { copy(r->run_id, sizeof r->run_id, run_id); }

ReportStatus report_set(Report *r, const char *key, json_t *value)
{
    bool reserved = false;
    for (size_t i = 0; key && i < sizeof RESERVED / sizeof RESERVED[0]; i++)
        reserved |= !strcmp(key, RESERVED[i]);
    // The value is released on every failure too, so callers may pass json_pack(...) directly.
    if (!r || !key || !value || reserved) {
        json_decref(value);
        return REPORT_ERR_ARG;
    }
    return json_object_set_new(r->fields, key, value) ? REPORT_ERR_NOMEM : REPORT_OK;
}

json_t *report_get(const Report *r, const char *key) { return json_object_get(r->fields, key); }

ReportStatus report_fact(Report *r, const char *group, const char *label, const char *fmt, ...)
{
    if (!r || !group || !label || !fmt)
        return REPORT_ERR_ARG;
    // Same group and label: the text is replaced where it stands, so a periodic report refreshes
    // its facts without growing or reordering them.
    Fact *f = NULL;
    for (int i = 0; i < r->fact_count && !f; i++)
        if (!strcmp(r->facts[i].group, group) && !strcmp(r->facts[i].label, label))
            f = &r->facts[i];
    if (!f) {
        if (r->fact_count == REPORT_FACTS_MAX)
            return REPORT_ERR_FULL;
        f = &r->facts[r->fact_count++];
        copy(f->group, sizeof f->group, group);
        copy(f->label, sizeof f->label, label);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof f->text, fmt, ap);
    va_end(ap);
    return REPORT_OK;
}

void report_facts_clear(Report *r) { r->fact_count = 0; }

ReportStatus report_table(Report *r, const char *id, const char *title, json_t *columns,
                          json_t *rows)
{
    if (!r || !id || !title || !json_is_array(columns) || !json_is_array(rows)) {
        json_decref(columns);
        json_decref(rows);
        return REPORT_ERR_ARG;
    }
    // s:o takes the references, also when the pack fails.
    json_t *t = json_pack("{s:s, s:o, s:o}", "title", title, "columns", columns, "rows", rows);
    json_t *tables = json_object_get(r->fields, "tables");
    if (t && !json_is_object(tables)) {
        tables = json_object();
        if (!tables || json_object_set_new(r->fields, "tables", tables))
            tables = NULL;
    }
    if (!t || !tables) {
        json_decref(t);
        return REPORT_ERR_NOMEM;
    }
    return json_object_set_new(tables, id, t) ? REPORT_ERR_NOMEM : REPORT_OK;
}

/// The plot with this id, or NULL; a NULL id finds none.
static Plot *find_plot(const Report *r, const char *id)
{
    for (int i = 0; id && i < r->plot_count; i++)
        if (!strcmp(r->plots[i]->id, id))
            return r->plots[i];
    return NULL;
}

ReportStatus report_plot(Report *r, const char *id, ReportPlotKind kind, const char *title,
                         const char *x_label, const char *y_label)
{
    if (!r || !id || !id[0] || (unsigned)kind >= REPORT_PLOT_KIND_NB)
        return REPORT_ERR_ARG;
    Plot *p = find_plot(r, id);
    // An id keeps its kind: redeclaring a line plot as bars would orphan its series.
    if (p && p->kind != kind)
        return REPORT_ERR_ARG;
    if (!p) {
        if (r->plot_count == REPORT_PLOTS_MAX)
            return REPORT_ERR_FULL;
        if (!(p = calloc(1, sizeof *p)))
            return REPORT_ERR_NOMEM;
        r->plots[r->plot_count++] = p;
        copy(p->id, sizeof p->id, id);
        p->kind = kind;
    }
    copy(p->title, sizeof p->title, title);
    copy(p->x_label, sizeof p->x_label, x_label);
    copy(p->y_label, sizeof p->y_label, y_label);
    return REPORT_OK;
}

/// The line plot with this id, or NULL (also for a bar plot): series and bounds need one.
static Plot *line_plot(const Report *r, const char *id)
{
    Plot *p = r ? find_plot(r, id) : NULL;
    return p && p->kind == REPORT_PLOT_LINE ? p : NULL;
}

ReportStatus report_plot_bound(Report *r, const char *plot, const char *label, double y)
{
    Plot *p = line_plot(r, plot);
    if (!p || !label)
        return REPORT_ERR_ARG;
    int i = 0;
    while (i < p->bound_count && strcmp(p->bound_label[i], label))
        i++;
    if (i == REPORT_BOUNDS_MAX)
        return REPORT_ERR_FULL;
    if (i == p->bound_count)
        copy(p->bound_label[p->bound_count++], REPORT_NAME_MAX, label);
    p->bound_y[i] = y;
    return REPORT_OK;
}

ReportStatus report_plot_settle(Report *r, const char *plot, bool settle)
{
    Plot *p = line_plot(r, plot);
    if (!p)
        return REPORT_ERR_ARG;
    p->settle = settle;
    return REPORT_OK;
}

/// The series of this name; with create, a new empty one while the plot has room (NULL once
/// REPORT_SERIES_MAX are in use).
static Series *find_series(Plot *p, const char *name, bool create)
{
    for (int i = 0; i < p->series_count; i++)
        if (!strcmp(p->series[i].name, name))
            return &p->series[i];
    if (!create || p->series_count == REPORT_SERIES_MAX)
        return NULL;
    Series *s = &p->series[p->series_count++];
    copy(s->name, sizeof s->name, name);
    return s;
}

/// Keeps the points at even indices: half the points, the first one among them.
/// Called when the series is full, before the next point is appended: memory stays fixed,
/// the first point and the newest one survive, and the older part of a long history ends up
/// the sparsest (each halving thins what was already thinned).
static void halve(Series *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i += 2, k++) {
        s->pts[k] = s->pts[i];
        if (s->lo) {
            s->lo[k] = s->lo[i];
            s->hi[k] = s->hi[i];
        }
    }
    s->n = k;
}

/// Appends one point, halving the series first when it holds REPORT_POINTS_MAX; hence n never
/// exceeds that limit and cap, doubling from 64, never grows past it either.
static ReportStatus series_push(Series *s, double x, double y, bool has_band, double lo, double hi)
{
    if (s->n == REPORT_POINTS_MAX)
        halve(s);
    if (has_band && !s->lo && s->n > 0)
        return REPORT_ERR_ARG; // a band cannot start half way
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        SvgPoint *pts = realloc(s->pts, cap * sizeof *pts);
        if (!pts)
            return REPORT_ERR_NOMEM;
        s->pts = pts;
        // The band arrays grow with the points. cap is raised only after all three arrays have it,
        // so a failed realloc leaves a series that is still consistent at its old capacity.
        if (has_band || s->lo) {
            double *l = realloc(s->lo, cap * sizeof *l);
            if (l)
                s->lo = l;
            double *h = l ? realloc(s->hi, cap * sizeof *h) : NULL;
            if (h)
                s->hi = h;
            if (!l || !h)
                return REPORT_ERR_NOMEM;
        }
        s->cap = cap;
    }
    s->pts[s->n] = (SvgPoint){x, y};
    if (s->lo) {
        // A point without a band in a banded series: a band of zero width at the point itself.
        s->lo[s->n] = has_band ? lo : y;
        s->hi[s->n] = has_band ? hi : y;
    }
    s->n++;
    return REPORT_OK;
}

ReportStatus report_series_add(Report *r, const char *plot, const char *series, double x, double y)
{
    Plot *p = line_plot(r, plot);
    Series *s = p && series ? find_series(p, series, true) : NULL;
    return !p || !series ? REPORT_ERR_ARG
           : !s          ? REPORT_ERR_FULL
                         : series_push(s, x, y, false, 0, 0);
}

ReportStatus report_series_add_band(Report *r, const char *plot, const char *series, double x,
                                    double y, double lo, double hi)
{
    Plot *p = line_plot(r, plot);
    Series *s = p && series ? find_series(p, series, true) : NULL;
    return !p || !series ? REPORT_ERR_ARG
           : !s          ? REPORT_ERR_FULL
                         : series_push(s, x, y, true, lo, hi);
}

ReportStatus report_series_set(Report *r, const char *plot, const char *series,
                               const SvgPoint *points, size_t n)
{
    Plot *p = line_plot(r, plot);
    Series *s = p && series ? find_series(p, series, true) : NULL;
    if (!p || !series || (n && !points))
        return REPORT_ERR_ARG;
    if (!s)
        return REPORT_ERR_FULL;
    // series_free clears the name with the rest; the series keeps its slot and its name.
    char name[REPORT_NAME_MAX];
    copy(name, sizeof name, s->name);
    series_free(s);
    copy(s->name, sizeof s->name, name);
    // More than fit: an even stride through them, the last one always kept.
    size_t stride = (n + REPORT_POINTS_MAX - 1) / REPORT_POINTS_MAX;
    ReportStatus st = REPORT_OK;
    for (size_t i = 0; i < n && st == REPORT_OK; i += stride ? stride : 1)
        st = series_push(s, points[i].x, points[i].y, false, 0, 0);
    if (st == REPORT_OK && n > 0 && (n - 1) % (stride ? stride : 1) != 0)
        st = series_push(s, points[n - 1].x, points[n - 1].y, false, 0, 0);
    return st;
}

ReportStatus report_bar_set(Report *r, const char *plot, const char *label, double value)
{
    Plot *p = r ? find_plot(r, plot) : NULL;
    if (!p || p->kind != REPORT_PLOT_BARS || !label)
        return REPORT_ERR_ARG;
    int i = 0;
    while (i < p->bar_count && strcmp(p->bar_label[i], label))
        i++;
    if (i == REPORT_BARS_MAX)
        return REPORT_ERR_FULL;
    if (i == p->bar_count)
        copy(p->bar_label[p->bar_count++], REPORT_NAME_MAX, label);
    p->bar_value[i] = value;
    return REPORT_OK;
}

ReportStatus report_bars_clear(Report *r, const char *plot)
{
    Plot *p = r ? find_plot(r, plot) : NULL;
    if (!p || p->kind != REPORT_PLOT_BARS)
        return REPORT_ERR_ARG;
    p->bar_count = 0;
    return REPORT_OK;
}

// ---- The record --------------------------------------------------------------------------

// JSON has no NaN nor infinity: a non-finite number is written as null and read back as NaN.
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/// {name, x, y} and, for a banded series, lo and hi: parallel arrays of equal length.
static json_t *series_json(const Series *s)
{
    json_t *o = json_object(), *x = json_array(), *y = json_array();
    json_t *lo = s->lo ? json_array() : NULL, *hi = s->lo ? json_array() : NULL;
    for (size_t i = 0; i < s->n; i++) {
        json_array_append_new(x, num(s->pts[i].x));
        json_array_append_new(y, num(s->pts[i].y));
        if (lo) {
            json_array_append_new(lo, num(s->lo[i]));
            json_array_append_new(hi, num(s->hi[i]));
        }
    }
    json_object_set_new(o, "name", json_string(s->name));
    json_object_set_new(o, "x", x);
    json_object_set_new(o, "y", y);
    if (lo) {
        json_object_set_new(o, "lo", lo);
        json_object_set_new(o, "hi", hi);
    }
    return o;
}

/// A plot's record: the common header, then bounds and series (line) or bars (bars).
static json_t *plot_json(const Plot *p)
{
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", p->id, "kind", report_plot_kind_name(p->kind),
                  "title", p->title, "x_label", p->x_label, "y_label", p->y_label);
    if (!o)
        return NULL;
    if (p->kind == REPORT_PLOT_LINE) {
        json_t *bounds = json_array(), *series = json_array();
        for (int i = 0; i < p->bound_count; i++)
            json_array_append_new(bounds, json_pack("{s:s, s:o}", "label", p->bound_label[i], "y",
                                                    num(p->bound_y[i])));
        for (int i = 0; i < p->series_count; i++)
            json_array_append_new(series, series_json(&p->series[i]));
        json_object_set_new(o, "y_range", json_string(p->settle ? "settled" : "all"));
        json_object_set_new(o, "bounds", bounds);
        json_object_set_new(o, "series", series);
    } else {
        json_t *bars = json_array();
        for (int i = 0; i < p->bar_count; i++)
            json_array_append_new(bars, json_pack("{s:s, s:o}", "label", p->bar_label[i], "value",
                                                  num(p->bar_value[i])));
        json_object_set_new(o, "bars", bars);
    }
    return o;
}

// The header first; then the caller's fields, which cannot collide with it (report_set refuses
// the RESERVED keys); facts and plots last, in their order of first appearance.
json_t *report_to_json(const Report *r)
{
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:I, s:b, s:s, s:{s:s, s:s}}", "schema",
                          SCHEMA_NAME, "schema_version", (json_int_t)REPORT_SCHEMA_VERSION,
                          "run_id", r->run_id, "title", r->title, "report_version",
                          (json_int_t)r->version, "final", r->final, "generated_at",
                          r->generated_at, "software", "name", "xqforge", "version", r->software);
    json_t *facts = json_array(), *plots = json_array();
    if (!o || !facts || !plots) {
        json_decref(o);
        json_decref(facts);
        json_decref(plots);
        return NULL;
    }
    for (int i = 0; i < r->fact_count; i++)
        json_array_append_new(facts,
                              json_pack("{s:s, s:s, s:s}", "group", r->facts[i].group, "label",
                                        r->facts[i].label, "text", r->facts[i].text));
    for (int i = 0; i < r->plot_count; i++)
        json_array_append_new(plots, plot_json(r->plots[i]));
    const char *key;
    json_t *v;
    // json_object_set, not _new: the Report keeps its own reference to each field.
    json_object_foreach(r->fields, key, v) json_object_set(o, key, v);
    json_object_set_new(o, "facts", facts);
    json_object_set_new(o, "plots", plots);
    return o;
}

// ---- Reading a record back ------------------------------------------------------------------

/// Says in why what is wrong with the record (why may be NULL) and returns REPORT_ERR_SCHEMA.
static ReportStatus bad(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static ReportStatus bad(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && len)
        vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return REPORT_ERR_SCHEMA;
}

/// A number, or null for a non-finite one.
/// The inverse of num(): null reads as NaN, anything else but a number is refused.
static bool read_num(const json_t *v, double *out)
{
    if (json_is_null(v))
        return *out = NAN, true;
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

/// One series of a line plot, rebuilt through the same calls a writer uses, so the limits
/// (and the halving past REPORT_POINTS_MAX) hold for a read record as for a written one.
static ReportStatus read_series(Report *r, const Plot *p, const json_t *s, char *why, size_t len)
{
    const json_t *name = json_object_get(s, "name"), *x = json_object_get(s, "x"),
                 *y = json_object_get(s, "y"), *lo = json_object_get(s, "lo"),
                 *hi = json_object_get(s, "hi");
    size_t n = json_array_size(x);
    if (!json_is_string(name) || !json_is_array(x) || !json_is_array(y) ||
        json_array_size(y) != n || !lo != !hi ||
        (lo && (json_array_size(lo) != n || json_array_size(hi) != n)))
        return bad(why, len, "plot '%s': a series needs name, x and y (and lo, hi) of equal length",
                   p->id);
    for (size_t i = 0; i < n; i++) {
        double vx, vy, vl = 0, vh = 0;
        if (!read_num(json_array_get(x, i), &vx) || !read_num(json_array_get(y, i), &vy) ||
            (lo &&
             (!read_num(json_array_get(lo, i), &vl) || !read_num(json_array_get(hi, i), &vh))))
            return bad(why, len, "plot '%s' series '%s': point %zu is not a number", p->id,
                       json_string_value(name), i);
        ReportStatus st =
            lo ? report_series_add_band(r, p->id, json_string_value(name), vx, vy, vl, vh)
               : report_series_add(r, p->id, json_string_value(name), vx, vy);
        if (st)
            return st;
    }
    // An empty series is kept too: it was declared, and its legend entry must survive the trip.
    if (n == 0 && !find_series((Plot *)p, json_string_value(name), true))
        return REPORT_ERR_FULL;
    return REPORT_OK;
}

/// One plot of the record: header, then bounds or bars, then a line plot's series.
static ReportStatus read_plot(Report *r, const json_t *p, char *why, size_t len)
{
    const char *id, *kind, *title, *xl, *yl;
    if (json_unpack((json_t *)p, "{s:s, s:s, s:s, s:s, s:s}", "id", &id, "kind", &kind, "title",
                    &title, "x_label", &xl, "y_label", &yl))
        return bad(why, len, "a plot lacks id, kind, title, x_label or y_label");
    ReportPlotKind k = !strcmp(kind, "line")   ? REPORT_PLOT_LINE
                       : !strcmp(kind, "bars") ? REPORT_PLOT_BARS
                                               : REPORT_PLOT_KIND_NB;
    if (k == REPORT_PLOT_KIND_NB)
        return bad(why, len, "plot '%s': unknown kind '%s'", id, kind);
    // report_plot would merge a second plot of the same id into the first: refused instead, as
    // report_to_json never writes one twice.
    if (find_plot(r, id))
        return bad(why, len, "plot '%s' appears twice", id);
    ReportStatus st = report_plot(r, id, k, title, xl, yl);
    if (st)
        return st;
    const json_t *list = json_object_get(p, k == REPORT_PLOT_LINE ? "bounds" : "bars"), *e;
    size_t i;
    if (!json_is_array(list))
        return bad(why, len, "plot '%s': no %s array", id,
                   k == REPORT_PLOT_LINE ? "bounds" : "bars");
    json_array_foreach(list, i, e)
    {
        const json_t *label = json_object_get(e, "label");
        double v;
        if (!json_is_string(label) ||
            !read_num(json_object_get(e, k == REPORT_PLOT_LINE ? "y" : "value"), &v))
            return bad(why, len, "plot '%s': entry %zu needs a label and a number", id, i);
        st = k == REPORT_PLOT_LINE ? report_plot_bound(r, id, json_string_value(label), v)
                                   : report_bar_set(r, id, json_string_value(label), v);
        if (st)
            return st;
    }
    if (k == REPORT_PLOT_BARS)
        return REPORT_OK;
    // Optional: a record written before y_range existed reads as "all".
    const json_t *range = json_object_get(p, "y_range");
    if (range && (!json_is_string(range) || (strcmp(json_string_value(range), "all") &&
                                             strcmp(json_string_value(range), "settled"))))
        return bad(why, len, "plot '%s': y_range is not \"all\" or \"settled\"", id);
    report_plot_settle(r, id, range && !strcmp(json_string_value(range), "settled"));
    list = json_object_get(p, "series");
    if (!json_is_array(list))
        return bad(why, len, "plot '%s': no series array", id);
    json_array_foreach(list, i, e)
    {
        if ((st = read_series(r, find_plot(r, id), e, why, len)))
            return st;
    }
    return REPORT_OK;
}

/// Facts, plots and the caller's fields of a record whose header was read already.
static ReportStatus read_record(Report *r, const json_t *j, char *why, size_t len)
{
    const json_t *facts = json_object_get(j, "facts"), *plots = json_object_get(j, "plots"), *e;
    size_t i;
    if (!json_is_array(facts) || !json_is_array(plots))
        return bad(why, len, "facts and plots must be arrays");
    json_array_foreach(facts, i, e)
    {
        const char *g, *l, *t;
        if (json_unpack((json_t *)e, "{s:s, s:s, s:s}", "group", &g, "label", &l, "text", &t))
            return bad(why, len, "fact %zu needs group, label and text", i);
        ReportStatus st = report_fact(r, g, l, "%s", t);
        if (st)
            return st;
    }
    json_array_foreach(plots, i, e)
    {
        ReportStatus st = read_plot(r, e, why, len);
        if (st)
            return st;
    }
    const char *key;
    json_t *v;
    // Every key that is not the header's is a caller's field, kept as it came.
    json_object_foreach((json_t *)j, key, v)
    {
        bool reserved = false;
        for (size_t k = 0; k < sizeof RESERVED / sizeof RESERVED[0]; k++)
            reserved |= !strcmp(key, RESERVED[k]);
        if (!reserved && json_object_set(r->fields, key, v))
            return REPORT_ERR_NOMEM;
    }
    return REPORT_OK;
}

ReportStatus report_from_json(const json_t *j, Report **out, char *why, size_t len)
{
    const char *schema, *run_id, *title, *generated, *software;
    json_int_t schema_version, version;
    int final;
    *out = NULL;
    if (json_unpack((json_t *)j, "{s:s, s:I, s:s, s:s, s:I, s:b, s:s, s:{s:s}}", "schema", &schema,
                    "schema_version", &schema_version, "run_id", &run_id, "title", &title,
                    "report_version", &version, "final", &final, "generated_at", &generated,
                    "software", "version", &software))
        return bad(why, len,
                   "missing or mistyped header field (schema, schema_version, run_id, "
                   "title, report_version, final, generated_at, software.version)");
    // Another version is refused, not guessed at: REPORT_SCHEMA_VERSION's is the only layout this
    // code knows.
    if (strcmp(schema, SCHEMA_NAME) || schema_version != REPORT_SCHEMA_VERSION)
        return bad(why, len, "schema %s version %lld, expected %s version %d", schema,
                   (long long)schema_version, SCHEMA_NAME, REPORT_SCHEMA_VERSION);
    if (version < 0)
        return bad(why, len, "negative report_version");
    Report *r = report_new(run_id, title, software);
    if (!r)
        return REPORT_ERR_NOMEM;
    r->version = (uint64_t)version;
    r->final = final;
    copy(r->generated_at, sizeof r->generated_at, generated);
    ReportStatus st = read_record(r, j, why, len);
    if (st) {
        report_free(r);
        return st;
    }
    *out = r;
    return REPORT_OK;
}

// ---- The page ------------------------------------------------------------------------------

// The page's only style, inline: report.html is one self-contained file (no script, no
// network), readable from a spool, an upload target or a mail attachment. The plots' grid
// folds to one column on a narrow screen and to two on paper.
static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0 auto;max-width:1000px;padding:12px;color:#111;background:#fff;line-height:1.4}"
    "h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.05em;margin:.6em 0 .3em}"
    ".meta{color:#555;font-size:.9em}"
    ".badge{display:inline-block;padding:1px 8px;border-radius:4px;background:#fde7c8}"
    ".badge.final{background:#d2efd9}"
    ".facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:4px 18px}"
    "table{border-collapse:collapse;width:100%}"
    "th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #e4e4e4;vertical-align:top}"
    "th{font-weight:600;width:45%}"
    ".plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:12px}"
    "figure{margin:8px 0;break-inside:avoid;page-break-inside:avoid}"
    "svg.plot{width:100%;height:auto;display:block;border:1px solid #eee}"
    ".grid th{width:auto}.grid td{font-variant-numeric:tabular-nums}"
    "footer{margin-top:16px;color:#666;font-size:.85em}"
    "@media (max-width:480px){.plots{grid-template-columns:1fr}body{padding:6px}}"
    "@media print{body{max-width:none;padding:0}.plots{grid-template-columns:1fr 1fr}"
    "svg.plot{border:none}}";

/// The facts as one table per group, the groups in the order of their first fact. Quadratic
/// in the number of facts, which REPORT_FACTS_MAX bounds.
static void html_facts(const Report *r, SvgBuf *o)
{
    svg_buf_printf(o, "<section class=\"facts\">");
    for (int i = 0; i < r->fact_count; i++) {
        bool first = true;
        for (int k = 0; k < i && first; k++)
            first = strcmp(r->facts[k].group, r->facts[i].group) != 0;
        if (!first)
            continue; // its group was written with the first fact of the group
        svg_buf_printf(o, "<div><h2>");
        svg_buf_escaped(o, r->facts[i].group);
        svg_buf_printf(o, "</h2><table>");
        for (int k = i; k < r->fact_count; k++) {
            if (strcmp(r->facts[k].group, r->facts[i].group))
                continue;
            svg_buf_printf(o, "<tr><th>");
            svg_buf_escaped(o, r->facts[k].label);
            svg_buf_printf(o, "</th><td>");
            svg_buf_escaped(o, r->facts[k].text);
            svg_buf_printf(o, "</td></tr>");
        }
        svg_buf_printf(o, "</table></div>");
    }
    svg_buf_printf(o, "</section>");
}

/// A cell of a table: a string as it is, a number as the shortest text that reads it back
/// closely, anything else empty.
static void html_cell(const json_t *v, SvgBuf *o)
{
    if (json_is_string(v))
        svg_buf_escaped(o, json_string_value(v));
    else if (json_is_number(v))
        svg_buf_printf(o, "%.6g", json_number_value(v));
}

/// The tables of the record's "tables" field (report_table), each under its title.
static void html_tables(const Report *r, SvgBuf *o)
{
    const char *id;
    json_t *t;
    json_object_foreach(json_object_get(r->fields, "tables"), id, t)
    {
        const json_t *title = json_object_get(t, "title"), *cols = json_object_get(t, "columns"),
                     *rows = json_object_get(t, "rows"), *row, *v;
        size_t i, k;
        svg_buf_printf(o, "\n<section id=\"table-");
        svg_buf_escaped(o, id);
        svg_buf_printf(o, "\"><h2>");
        svg_buf_escaped(o, json_is_string(title) ? json_string_value(title) : id);
        svg_buf_printf(o, "</h2><table class=\"grid\"><tr>");
        json_array_foreach(cols, i, v)
        {
            svg_buf_printf(o, "<th>");
            html_cell(v, o);
            svg_buf_printf(o, "</th>");
        }
        svg_buf_printf(o, "</tr>");
        json_array_foreach(rows, i, row)
        {
            svg_buf_printf(o, "<tr>");
            json_array_foreach(row, k, v)
            {
                svg_buf_printf(o, "<td>");
                html_cell(v, o);
                svg_buf_printf(o, "</td>");
            }
            svg_buf_printf(o, "</tr>");
        }
        svg_buf_printf(o, "</table></section>");
    }
}

/// One plot as an inline SVG figure, id "plot-ID" so that a link can point at it. The
/// svg.c views, built on the stack, borrow the plot's names and points rather than copy them.
static void html_plot(const Plot *p, SvgBuf *o)
{
    svg_buf_printf(o, "<figure id=\"plot-");
    svg_buf_escaped(o, p->id);
    svg_buf_printf(o, "\">");
    if (p->kind == REPORT_PLOT_BARS) {
        SvgBar bars[REPORT_BARS_MAX];
        for (int i = 0; i < p->bar_count; i++)
            bars[i] = (SvgBar){p->bar_label[i], p->bar_value[i]};
        SvgBarChart c = {p->title, p->x_label, bars, p->bar_count};
        svg_bar_chart(&c, o);
    } else {
        SvgSeries series[REPORT_SERIES_MAX];
        SvgBound bounds[REPORT_BOUNDS_MAX];
        for (int i = 0; i < p->series_count; i++) {
            const Series *s = &p->series[i];
            series[i] = (SvgSeries){s->name, s->pts, s->n, s->lo, s->hi};
        }
        for (int i = 0; i < p->bound_count; i++)
            bounds[i] = (SvgBound){p->bound_label[i], p->bound_y[i]};
        SvgLineChart c = {p->title,        p->x_label, p->y_label,     series,
                          p->series_count, bounds,     p->bound_count, p->settle};
        svg_line_chart(&c, o);
    }
    svg_buf_printf(o, "</figure>");
}

// Every text that comes from a job (title, run id, labels) goes through svg_buf_escaped. The
// buffer's status is sticky, so it is checked once, at the end.
ReportStatus report_html(const Report *r, SvgBuf *o)
{
    svg_buf_printf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                      "<title>");
    svg_buf_escaped(o, r->title);
    svg_buf_printf(o, "</title><style>%s</style></head>\n<body><header><h1>", CSS);
    svg_buf_escaped(o, r->title);
    svg_buf_printf(o, "</h1><p class=\"meta\"><span class=\"badge%s\">%s</span> run ",
                   r->final ? " final" : "", r->final ? "final" : "in progress");
    svg_buf_escaped(o, r->run_id);
    svg_buf_printf(o, ", report %llu, %s</p></header>\n", (unsigned long long)r->version,
                   r->generated_at);
    html_facts(r, o);
    html_tables(r, o);
    report_code_html(report_get(r, "code"), o); // engines built from source: their commits
    svg_buf_printf(o, "\n<section class=\"plots\">");
    for (int i = 0; i < r->plot_count; i++)
        html_plot(r->plots[i], o);
    svg_buf_printf(o, "</section>\n<footer>xqforge ");
    svg_buf_escaped(o, r->software);
    svg_buf_printf(o, " &middot; the full record is report.json</footer></body></html>\n");
    return o->status == SVG_OK          ? REPORT_OK
           : o->status == SVG_ERR_NOMEM ? REPORT_ERR_NOMEM
                                        : REPORT_ERR_TOO_BIG;
}

// ---- Files ---------------------------------------------------------------------------------

/// dir/name replaced atomically: written and flushed to disk under a temporary name first.
static ReportStatus write_atomic(const char *dir, const char *name, const char *data, size_t len,
                                 char *why, size_t why_len)
{
    // The temporary file lies in the same directory, so rename() stays on one file system and is
    // atomic; the pid in its name keeps two processes writing the same dir apart.
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(tmp, sizeof tmp, "%s/.%s.%ld.tmp", dir, name, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t done = 0;
    while (fd >= 0 && done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    // fsync before rename: after a crash the name holds the old report or the whole new one.
    bool ok = fd >= 0 && done == len && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) == 0)
        return REPORT_OK;
    // errno of the last step that failed names the cause; the temporary file never outlives a
    // failure.
    err = errno ? errno : err;
    unlink(tmp);
    snprintf(why, why_len, "%s: %s", path, strerror(err));
    return REPORT_ERR_IO;
}

ReportStatus report_write(const Report *r, const char *dir, char *why, size_t why_len)
{
    char spare[8];
    if (!why || !why_len)
        why = spare, why_len = sizeof spare;
    // ASCII only (non-ASCII text as \u escapes): the file reads the same under any charset.
    json_t *j = report_to_json(r);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
    json_decref(j);
    if (!text) {
        snprintf(why, why_len, "report.json: out of memory");
        return REPORT_ERR_NOMEM;
    }
    size_t n = strlen(text);
    // report.json first: it is the record, and report.html is written only once it stands, so the
    // page is never newer than the record it shows.
    ReportStatus st = n > REPORT_JSON_MAX ? REPORT_ERR_TOO_BIG : REPORT_OK;
    if (st == REPORT_OK) {
        text[n] = '\n'; // json_dumps leaves the last line open; the NUL is not written
        st = write_atomic(dir, "report.json", text, n + 1, why, why_len);
    }
    free(text);
    SvgBuf page;
    svg_buf_init(&page, 0);
    if (st == REPORT_OK && (st = report_html(r, &page)) == REPORT_OK)
        st = write_atomic(dir, "report.html", page.data, page.len, why, why_len);
    else if (st != REPORT_ERR_IO)
        snprintf(why, why_len, "report: %s", report_strerror(st));
    svg_buf_destroy(&page);
    return st;
}
