// SPDX-License-Identifier: MIT
// A run's report: one model written two ways, report.json (the record, jansson) and
// report.html (one self-contained page: summary tables and inline SVG plots, no script, no
// network). Schema: coordinator/REPORT.md. The model is generic so that any job kind can
// add to it:
//   - record fields: any JSON value under a top-level key (report_set), e.g. "totals";
//   - facts: label/text lines grouped under a heading, shown as tables (report_fact);
//   - plots: line charts of named series of (x, y) points, optionally with a band and
//     horizontal bounds, and bar charts (report_plot, report_series_*, report_bar_set).
// An SPSA job, for example, draws each parameter's trajectory with
//     report_plot(r, "spsa.horse_mg", REPORT_PLOT_LINE, "horse_mg", "iteration", "value");
//     report_series_set(r, "spsa.horse_mg", "horse_mg", points, n);   // or _add per step
// Series are bounded: past REPORT_POINTS_MAX points every other point is dropped (the
// first and the newest are kept), so a long run's history costs fixed memory.
// Not thread-safe: one thread (the coordinator) owns a Report.
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "svg.h"

enum {
    REPORT_SCHEMA_VERSION = 1,
    REPORT_PLOTS_MAX = 64,
    REPORT_SERIES_MAX = 8, // per plot
    REPORT_BOUNDS_MAX = 4, // per plot
    REPORT_BARS_MAX = 32,  // per plot
    REPORT_FACTS_MAX = 256,
    REPORT_POINTS_MAX = 1024, // per series, before halving
    REPORT_NAME_MAX = 128,    // ids, names, labels (longer ones are cut)
    REPORT_TEXT_MAX = 512,    // a fact's text
    REPORT_JSON_MAX = 64 << 20
};

typedef enum { REPORT_PLOT_LINE, REPORT_PLOT_BARS, REPORT_PLOT_KIND_NB } ReportPlotKind;

typedef enum {
    REPORT_OK,
    REPORT_ERR_NOMEM,
    REPORT_ERR_FULL,    // a REPORT_*_MAX limit was reached
    REPORT_ERR_ARG,     // NULL, an unknown plot, a reserved key, a plot of the other kind
    REPORT_ERR_IO,      // a file could not be written (why says which and why)
    REPORT_ERR_SCHEMA,  // report_from_json: not a report of this schema (why says where)
    REPORT_ERR_TOO_BIG, // the page or record passed its size limit
    REPORT_STATUS_NB
} ReportStatus;

typedef struct Report Report;

const char *report_strerror(ReportStatus st);
const char *report_plot_kind_name(ReportPlotKind k); // "line", "bars"

/// run_id identifies the run across report versions (and resumes); title heads the page.
Report *report_new(const char *run_id, const char *title, const char *software_version);
void report_free(Report *r); // NULL: no-op

/// The version (a counter the caller raises per written report) and whether it is final.
void report_set_version(Report *r, uint64_t version, bool final);
uint64_t report_version(const Report *r);
const char *report_run_id(const Report *r);
/// Sets the run id (known once the run's journal is open).
void report_set_run_id(Report *r, const char *run_id);

/// Sets a top-level record field, taking the reference to value (also on failure). Keys
/// the report writes itself (schema, schema_version, run_id, title, report_version, final,
/// generated_at, software, facts, plots) are refused.
ReportStatus report_set(Report *r, const char *key, json_t *value);
/// The record field set under key (borrowed), or NULL.
json_t *report_get(const Report *r, const char *key);

/// A table of the page (after the facts, in the order of first setting): columns is an array
/// of header strings, rows an array of arrays of cell strings. Kept in the record as the
/// field "tables" (an object by id: title, columns, rows); the same id replaces the table.
/// Takes the references to columns and rows (also on failure).
ReportStatus report_table(Report *r, const char *id, const char *title, json_t *columns,
                          json_t *rows);

/// A line of the page's summary: label and text under a group heading; a fact with the
/// same group and label is replaced in place. report_facts_clear drops every fact.
ReportStatus report_fact(Report *r, const char *group, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void report_facts_clear(Report *r);

/// Declares a plot (or retitles one with the same id and kind). Plots appear in the order
/// declared.
ReportStatus report_plot(Report *r, const char *id, ReportPlotKind kind, const char *title,
                         const char *x_label, const char *y_label);
/// Whether a line plot's y range follows the run once past its first tenth (an Elo plot: the
/// first games' +-1500 drawn on the edge) instead of holding every point (the default: a loss,
/// a trajectory, a count). See SvgLineChart.settle.
ReportStatus report_plot_settle(Report *r, const char *plot, bool settle);
/// A horizontal line at y on a line plot, labelled; same label: moved.
ReportStatus report_plot_bound(Report *r, const char *plot, const char *label, double y);
/// Appends a point to a named series of a line plot (created on first use).
ReportStatus report_series_add(Report *r, const char *plot, const char *series, double x, double y);
/// The same with a band lo <= y <= hi drawn around the series (e.g. a 95% interval).
ReportStatus report_series_add_band(Report *r, const char *plot, const char *series, double x,
                                    double y, double lo, double hi);
/// Replaces a named series with n points (no band); n above REPORT_POINTS_MAX is thinned.
ReportStatus report_series_set(Report *r, const char *plot, const char *series,
                               const SvgPoint *points, size_t n);
/// Sets (or adds) one bar of a bar plot.
ReportStatus report_bar_set(Report *r, const char *plot, const char *label, double value);
/// Removes every bar of a bar plot (to set them again in a new order).
ReportStatus report_bars_clear(Report *r, const char *plot);

/// The record (a new reference; NULL when out of memory), and back: report_from_json
/// checks the schema name and version and every plot, and rebuilds an equal Report.
json_t *report_to_json(const Report *r);
ReportStatus report_from_json(const json_t *record, Report **out, char *why, size_t why_len);

/// The page, appended to out.
ReportStatus report_html(const Report *r, SvgBuf *out);

/// Writes dir/report.json and dir/report.html, each to a temporary file first and then
/// renamed over the old one, so a reader never sees half a report.
ReportStatus report_write(const Report *r, const char *dir, char *why, size_t why_len);
