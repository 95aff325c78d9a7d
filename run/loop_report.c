// SPDX-License-Identifier: MIT
#include "loop_report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_report.h"

enum { CELL_MAX = 96 };

/// A number of the record, NAN when absent or null (a figure the step did not give).
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/// A table cell: the text, or "-" when a figure it shows is not known.
static json_t *cell(bool known, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *cell(bool known, const char *fmt, ...)
{
    char text[CELL_MAX] = "-";
    if (known) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
    }
    return json_string(text);
}

static const char *verdict_of(const json_t *row)
{
    const char *v = json_string_value(json_object_get(row, "verdict"));
    return v ? v : "running";
}

/// Whether the row's gate has ended (promoted or rejected).
static bool decided(const json_t *row)
{
    const char *v = verdict_of(row);
    return !strcmp(v, "promoted") || !strcmp(v, "rejected");
}

/// The best net's Elo against generation 0 after each row: the promoted gates' Elo summed, the
/// error the square root of the sum of their squared 95% errors (the gates are independent
/// samples, so the variances add). NAN for a running row and after a promotion without an Elo.
static void chain(const json_t *rows, double *elo, double *err)
{
    double sum = 0, var = 0;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!strcmp(verdict_of(row), "promoted")) {
            const json_t *gate = json_object_get(row, "gate");
            double e = num(gate, "elo"), s = num(gate, "error");
            sum = isfinite(e) && isfinite(s) ? sum + e : NAN; // unknown from here on
            var += s * s;
        }
        elo[i] = decided(row) ? sum : NAN;
        err[i] = decided(row) && isfinite(sum) ? sqrt(var) : NAN;
    }
}

/// The generations' table: a row per generation, "-" for what it has not done yet.
static json_t *table_row(const json_t *row, double elo, double err)
{
    const json_t *tr = json_object_get(row, "train"), *g = json_object_get(row, "gate");
    double loss = num(tr, "loss"), val = num(tr, "val_loss"), qm = num(tr, "quant_mean_cp"),
           qx = num(tr, "quant_max_cp"), best = num(tr, "best_epoch"), epochs = num(tr, "epochs");
    double w = num(g, "wins"), l = num(g, "losses"), d = num(g, "draws"), ge = num(g, "elo"),
           gerr = num(g, "error"), llr = num(g, "llr"), lo = num(g, "lower"), hi = num(g, "upper");
    const char *state = json_string_value(json_object_get(g, "state"));
    json_t *c = json_array();
    json_array_append_new(c, cell(true, "%.0f", num(row, "generation")));
    json_array_append_new(c, cell(isfinite(num(row, "positions")), "%.0f", num(row, "positions")));
    json_array_append_new(c, cell(isfinite(loss), "%.6f", loss));
    json_array_append_new(c, cell(isfinite(val), "%.6f", val));
    json_array_append_new(c, cell(isfinite(best), "%.0f of %.0f", best, epochs));
    json_array_append_new(c, cell(isfinite(qm) && isfinite(qx), "%.3f / %.1f", qm, qx));
    json_array_append_new(c, cell(isfinite(num(g, "games")), "%.0f", num(g, "games")));
    json_array_append_new(c, cell(isfinite(w + l + d), "%.0f / %.0f / %.0f", w, l, d));
    json_array_append_new(c, cell(isfinite(ge) && isfinite(gerr), "%+.1f ± %.1f", ge + 0.0, gerr));
    json_array_append_new(c, cell(isfinite(llr), "%.2f [%.2f, %.2f]", llr, lo, hi));
    json_array_append_new(c, cell(true, "%s%s%s%s", verdict_of(row), state ? " (" : "",
                                  state ? state : "", state ? ")" : ""));
    json_array_append_new(c, cell(isfinite(elo) && isfinite(err), "%+.1f ± %.1f", elo, err));
    return c;
}

static json_t *columns(const char *const *names, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

/// The filters' counts: seen and kept first, then every other count any generation has.
static void filters_table(Report *r, const json_t *rows)
{
    json_t *keys = json_pack("[s, s]", "seen", "kept");
    size_t i, k;
    const json_t *row, *key;
    json_array_foreach(rows, i, row)
    {
        const char *name;
        const json_t *v;
        json_object_foreach((json_t *)json_object_get(row, "filters"), name, v)
        {
            bool have = false;
            json_array_foreach(keys, k, key) have |= !strcmp(json_string_value(key), name);
            if (!have)
                json_array_append_new(keys, json_string(name));
        }
    }
    json_t *cols = json_pack("[s]", "gen"), *out = json_array();
    json_array_extend(cols, keys);
    json_array_foreach(rows, i, row)
    {
        const json_t *f = json_object_get(row, "filters");
        if (!f)
            continue;
        json_t *c = json_array();
        json_array_append_new(c, cell(true, "%.0f", num(row, "generation")));
        json_array_foreach(keys, k, key)
        {
            double v = num(f, json_string_value(key));
            json_array_append_new(c, cell(isfinite(v), "%.0f", v));
        }
        json_array_append_new(out, c);
    }
    json_decref(keys);
    report_table(r, "filters", "Datagen filters: positions seen, kept and skipped by each filter",
                 cols, out);
}

/// The job's [loop] settings as facts (the gate's bounds and limit, the data a generation).
static void settings_facts(Report *r, const JobConfig *t)
{
    char limit[JOB_TEXT_MAX + 32];
    if (t->loop.gate_nodes > 0)
        snprintf(limit, sizeof limit, "%lld nodes a move", (long long)t->loop.gate_nodes);
    else
        snprintf(limit, sizeof limit, "%.1000s", t->loop.gate_tc);
    report_fact(r, "Loop", "gate",
                "SPRT elo0 %g, elo1 %g, alpha %g, beta %g, at most %d games, %.1000s", t->loop.elo0,
                t->loop.elo1, t->loop.alpha, t->loop.beta, t->loop.gate_games, limit);
    report_fact(r, "Loop", "data",
                "%d positions a generation; each net trained on the last %d generation%s' data",
                t->loop.positions > 0 ? t->loop.positions : t->datagen.positions, t->loop.keep,
                t->loop.keep == 1 ? "" : "s");
}

ReportStatus loop_report_fill(Report *r, const JobConfig *t, const json_t *history)
{
    const json_t *rows = json_object_get(history, "rows");
    size_t n = json_array_size(rows), i;
    double *elo = calloc(n + 1, sizeof *elo), *err = calloc(n + 1, sizeof *err);
    if (!elo || !err) {
        free(elo);
        free(err);
        return REPORT_ERR_NOMEM;
    }
    chain(rows, elo, err);
    int promoted = 0, rejected = 0;
    double last_elo = 0, last_err = 0; // the chain after the last decided generation
    json_t *gens = json_array(), *trows = json_array();
    const json_t *row;
    report_plot(r, "loss", REPORT_PLOT_LINE, "Loss of the kept epoch by generation", "generation",
                "loss (mean squared error)");
    report_plot(r, "elo", REPORT_PLOT_LINE,
                "Best net against generation 0 (chained gate Elo, 95% error)", "generation", "Elo");
    report_plot_bound(r, "elo", "generation 0", 0);
    report_series_add_band(r, "elo", "best net", 0, 0, 0, 0);
    json_array_foreach(rows, i, row)
    {
        const json_t *tr = json_object_get(row, "train");
        double g = num(row, "generation");
        promoted += !strcmp(verdict_of(row), "promoted");
        rejected += !strcmp(verdict_of(row), "rejected");
        if (isfinite(num(tr, "loss")))
            report_series_add(r, "loss", "train", g, num(tr, "loss"));
        if (isfinite(num(tr, "val_loss")))
            report_series_add(r, "loss", "validation", g, num(tr, "val_loss"));
        if (decided(row)) {
            last_elo = elo[i], last_err = err[i];
            if (isfinite(elo[i]))
                report_series_add_band(r, "elo", "best net", g, elo[i], elo[i] - err[i],
                                       elo[i] + err[i]);
        }
        json_t *copy = json_deep_copy(row);
        json_object_set_new(copy, "elo_vs_gen0",
                            isfinite(elo[i]) ? json_real(elo[i]) : json_null());
        json_object_set_new(copy, "elo_vs_gen0_error",
                            isfinite(err[i]) ? json_real(err[i]) : json_null());
        json_array_append_new(gens, copy);
        json_array_append_new(trows, table_row(row, elo[i], err[i]));
    }
    const char *next = json_string_value(json_object_get(history, "next"));
    const char *best = json_string_value(json_object_get(history, "best"));
    bool complete = next && !strcmp(next, "complete");
    report_fact(r, "Loop", "job", "%s", t->name);
    report_fact(r, "Loop", "generations", "%d of %d decided: %d promoted, %d rejected",
                promoted + rejected, t->loop.generations, promoted, rejected);
    report_fact(r, "Loop", "next", "%s", next ? next : "-");
    report_fact(r, "Loop", "best net", "%s", best ? best : "the engine's own (embedded)");
    settings_facts(r, t);
    if (isfinite(last_elo))
        report_fact(r, "Elo against generation 0", "best net", "%+.1f ± %.1f (%d promotion%s)",
                    last_elo, last_err, promoted, promoted == 1 ? "" : "s");
    else
        report_fact(r, "Elo against generation 0", "best net",
                    "unknown: a promoting gate has no Elo");
    report_fact(r, "Elo against generation 0", "how",
                "the sum of the promoted generations' gate Elo (each against the best net before "
                "it); error: the square root of the sum of their squared 95%% errors");
    // What a train step said of its kept epoch (no validation, or it never improved).
    json_array_foreach(rows, i, row)
    {
        const char *note =
            json_string_value(json_object_get(json_object_get(row, "train"), "note"));
        char label[32];
        snprintf(label, sizeof label, "generation %.0f", num(row, "generation"));
        if (note)
            report_fact(r, "Training notes", label, "%s", note);
    }
    report_set(r, "state", json_string(complete ? "complete" : "running"));
    report_set(r, "loop",
               json_pack("{s:s, s:i, s:i, s:i, s:s?, s:s?, s:o, s:o, s:s}", "job", t->name,
                         "generations", t->loop.generations, "promoted", promoted, "rejected",
                         rejected, "next", next, "best", best, "elo_vs_gen0",
                         isfinite(last_elo) ? json_real(last_elo) : json_null(),
                         "elo_vs_gen0_error",
                         isfinite(last_elo) ? json_real(last_err) : json_null(), "chain",
                         "sum of the promoted gates' Elo; error sqrt(sum of squared 95% errors)"));
    report_set(r, "generations", gens);
    static const char *const COLS[] = {"gen",          "positions",  "train loss",
                                       "val loss",     "kept epoch", "quant. cp mean / max",
                                       "gate games",   "W / L / D",  "gate Elo",
                                       "LLR [bounds]", "verdict",    "best vs gen 0"};
    ReportStatus st = report_table(r, "generations", "Generations", columns(COLS, 12), trows);
    filters_table(r, rows);
    free(elo);
    free(err);
    return st;
}

/// The page's version: the steps the record shows finished, plus one (it grows with the loop,
/// and the same record gives the same version after a resume).
static uint64_t steps_done(const json_t *history)
{
    uint64_t n = 1;
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(history, "rows"), i, row) n +=
        (json_object_get(row, "positions") != NULL) + (json_object_get(row, "train") != NULL) +
        decided(row);
    return n;
}

bool loop_report_write(const JobConfig *t, const json_t *history, char *why, size_t why_len)
{
    const char *dir = t->output.dir[0] ? t->output.dir : ".";
    const char *run_id = json_string_value(json_object_get(history, "run_id"));
    const char *next = json_string_value(json_object_get(history, "next"));
    bool final = next && !strcmp(next, "complete");
    char title[JOB_TEXT_MAX + 8];
    snprintf(title, sizeof title, "%s: %s", job_kind_name(JOB_LOOP), t->name);
    RunReport rr;
    run_report_begin(&rr, t, dir, run_id ? run_id : "", title);
    if (!rr.report) {
        snprintf(why, why_len, "no report (out of memory)");
        return false;
    }
    ReportStatus st = loop_report_fill(rr.report, t, history);
    rr.version = steps_done(history) - 1; // publish raises it
    bool ok = st == REPORT_OK && run_report_publish(&rr, final, NULL);
    if (st != REPORT_OK)
        snprintf(why, why_len, "the loop's report: %s", report_strerror(st));
    else if (!ok)
        snprintf(why, why_len, "cannot write the loop's report in %.900s", dir);
    // Each page of a loop is worth delivering (a step takes minutes or hours): with urls, wait
    // as a run's end does.
    run_report_end(&rr, final || rr.uploader);
    return ok;
}
