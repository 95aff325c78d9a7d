// SPDX-License-Identifier: MIT
#include "queue_page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "files.h"
#include "queue.h"
#include "svg.h"

enum { PAGE_REFRESH_S = 10 };

static json_t *load_object(const char *dir, const char *id, const char *name)
{
    char path[QUEUE_PATH_MAX + 64];
    if (!queue_test_path(dir, id, name, path, sizeof path))
        return NULL;
    json_t *o = json_load_file(path, 0, NULL);
    if (json_is_object(o))
        return o;
    json_decref(o);
    return NULL;
}

/// A number at a path of members ("sprt", "llr"), or NAN.
static double number_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *text_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void set_number(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

json_t *queue_page_figures(const char *dir, const char *id)
{
    json_t *res = load_object(dir, id, "result.json");
    json_t *rep = res ? NULL : load_object(dir, id, "report.json");
    if (!res && !rep)
        return json_null();
    json_t *f = json_object();
    const char *text;
    if (res) {
        set_number(f, "games", number_at(res, "games", NULL));
        text = text_at(res, "text", NULL);
        set_number(f, "llr", number_at(res, "llr", NULL));
        set_number(f, "lower", number_at(res, "lower", NULL));
        set_number(f, "upper", number_at(res, "upper", NULL));
        set_number(f, "done", number_at(res, "pairs_done", NULL));
        set_number(f, "total", number_at(res, "pairs_total", NULL));
        set_number(f, "games_per_minute", NAN);
    } else {
        set_number(f, "games", number_at(rep, "totals", "games"));
        text = text_at(rep, "elo", "text");
        set_number(f, "llr", number_at(rep, "sprt", "llr"));
        set_number(f, "lower", number_at(rep, "sprt", "lower"));
        set_number(f, "upper", number_at(rep, "sprt", "upper"));
        set_number(f, "done", number_at(rep, "pairs", "done"));
        set_number(f, "total", number_at(rep, "pairs", "total"));
        set_number(f, "games_per_minute", number_at(rep, "timings", "games_per_minute"));
    }
    json_object_set_new(f, "elo_text", text ? json_string(text) : json_null());
    // Whose figures these are: the tested engine (new) and its reference; null without roles.
    const char *n = res ? text_at(res, "roles", "new") : text_at(rep, "roles", "new");
    const char *b = res ? text_at(res, "roles", "base") : text_at(rep, "roles", "base");
    json_object_set_new(f, "new", n ? json_string(n) : json_null());
    json_object_set_new(f, "base", b ? json_string(b) : json_null());
    json_decref(res);
    json_decref(rep);
    return f;
}

static bool active(const QueueTest *t)
{
    return t->state == TEST_QUEUED || t->state == TEST_RUNNING;
}

/// Page order: running and queued tests first (higher priority, then older), then the ended
/// ones, newest end first.
static int page_order(const void *pa, const void *pb)
{
    const QueueTest *a = pa, *b = pb;
    if (active(a) != active(b))
        return active(a) ? -1 : 1;
    if (active(a)) {
        if (a->state != b->state)
            return a->state == TEST_RUNNING ? -1 : 1;
        if (a->priority != b->priority)
            return a->priority > b->priority ? -1 : 1;
        return strcmp(a->id, b->id);
    }
    if (a->finished != b->finished)
        return a->finished > b->finished ? -1 : 1;
    return strcmp(b->id, a->id);
}

json_t *queue_page_model(const char *dir, char *why, size_t why_len)
{
    QueueTest *tests;
    int n;
    QueueStatus st = queue_list(dir, &tests, &n, why, why_len);
    if (st != QUEUE_OK && st != QUEUE_ERR_RECORD)
        return NULL;
    if (n > 1)
        qsort(tests, (size_t)n, sizeof *tests, page_order);
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        const QueueTest *t = &tests[i];
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:f, s:i, s:s, s:I, s:I, s:I, s:o}", "id", t->id,
            "name", t->name, "kind", t->kind, "state", queue_state_name(t->state), "stop_requested",
            t->stop_requested, "priority", t->priority, "throughput", t->throughput, "tc_ratio",
            t->tc_ratio, "workers", t->workers, "reason", t->reason, "submitted",
            (json_int_t)t->submitted, "started", (json_int_t)t->started, "finished",
            (json_int_t)t->finished, "result", queue_page_figures(dir, t->id));
        if (o)
            json_array_append_new(arr, o);
    }
    free(tests);
    json_t *m = arr ? json_pack("{s:s, s:I, s:o}", "queue", dir, "updated", (json_int_t)time(NULL),
                                "tests", arr)
                    : NULL;
    if (!m)
        snprintf(why, why_len, "out of memory");
    return m;
}

static void fmt_time(json_t *t, const char *key, char *out, size_t cap)
{
    queue_time_text((int64_t)json_integer_value(json_object_get(t, key)), out, cap);
}

/// One row of the table.
static void page_row(SvgBuf *b, json_t *t)
{
    json_t *f = json_object_get(t, "result");
    const char *id = text_at(t, "id", NULL), *state = text_at(t, "state", NULL);
    bool stopping = json_is_true(json_object_get(t, "stop_requested")) && !strcmp(state, "running");
    svg_buf_printf(b, "<tr class=\"%s\"><td><a href=\"tests/", state);
    svg_buf_escaped(b, id);
    svg_buf_printf(b, "/report.html\">");
    svg_buf_escaped(b, id);
    svg_buf_printf(b, "</a></td><td>");
    svg_buf_escaped(b, text_at(t, "name", NULL));
    svg_buf_printf(b, "</td><td>");
    svg_buf_escaped(b, text_at(t, "kind", NULL));
    svg_buf_printf(b, "</td><td>%s</td>", stopping ? "stopping" : state);
    double done = number_at(f, "done", NULL), total = number_at(f, "total", NULL);
    double pct = isfinite(done) && isfinite(total) && total > 0 ? 100 * done / total : NAN;
    if (isfinite(pct))
        svg_buf_printf(b,
                       "<td><span class=\"bar\"><span style=\"width:%.1f%%\"></span></span> "
                       "%.0f/%.0f</td>",
                       pct, done, total);
    else
        svg_buf_printf(b, "<td>-</td>");
    double games = number_at(f, "games", NULL);
    if (isfinite(games))
        svg_buf_printf(b, "<td>%.0f</td>", games);
    else
        svg_buf_printf(b, "<td>-</td>");
    svg_buf_printf(b, "<td>");
    if (text_at(f, "new", NULL) && text_at(f, "base", NULL)) {
        svg_buf_escaped(b, text_at(f, "new", NULL));
        svg_buf_printf(b, " vs ");
        svg_buf_escaped(b, text_at(f, "base", NULL));
    } else {
        svg_buf_printf(b, "-");
    }
    svg_buf_printf(b, "</td><td>");
    svg_buf_escaped(b, text_at(f, "elo_text", NULL) ? text_at(f, "elo_text", NULL) : "-");
    svg_buf_printf(b, "</td>");
    double llr = number_at(f, "llr", NULL), lo = number_at(f, "lower", NULL),
           hi = number_at(f, "upper", NULL);
    if (isfinite(llr) && isfinite(lo) && isfinite(hi) && hi > lo) {
        // The LLR's place between the bounds, as fishtest's bar shows it.
        double at = fmin(1, fmax(0, (llr - lo) / (hi - lo)));
        svg_buf_printf(b,
                       "<td><span class=\"llr\"><span style=\"left:%.1f%%\"></span></span> "
                       "%.2f (%.2f, %.2f)</td>",
                       100 * at, llr, lo, hi);
    } else {
        svg_buf_printf(b, "<td>-</td>");
    }
    double rate = number_at(f, "games_per_minute", NULL);
    if (isfinite(rate))
        svg_buf_printf(b, "<td>%.1f</td>", rate);
    else
        svg_buf_printf(b, "<td>-</td>");
    svg_buf_printf(b, "<td>%d</td>", (int)json_integer_value(json_object_get(t, "workers")));
    char sub[32], start[32], fin[32];
    fmt_time(t, "submitted", sub, sizeof sub);
    fmt_time(t, "started", start, sizeof start);
    fmt_time(t, "finished", fin, sizeof fin);
    svg_buf_printf(b, "<td>%d</td><td>%d%%</td><td>%s</td><td>%s</td><td>%s</td><td>",
                   (int)json_integer_value(json_object_get(t, "priority")),
                   (int)json_integer_value(json_object_get(t, "throughput")), sub, start, fin);
    svg_buf_escaped(b, text_at(t, "reason", NULL));
    svg_buf_printf(b, "</td></tr>\n");
}

static const char PAGE_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"refresh\" content=\"%d\">\n<title>xqforge fleet: %s</title>\n"
    "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
    "th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}"
    ".bar,.llr{display:inline-block;width:6em;height:.7em;background:#eee;position:relative;"
    "vertical-align:middle}.bar span{display:block;height:100%%;background:#4a7}"
    ".llr span{position:absolute;top:-2px;width:3px;height:calc(100%% + 4px);background:#333}"
    "tr.failed td{color:#a22}tr.stopped td,tr.finished td{color:#555}</style></head>\n<body>\n";

bool queue_page_write(const char *dir, char *why, size_t why_len)
{
    json_t *m = queue_page_model(dir, why, why_len);
    if (!m)
        return false;
    char path[QUEUE_PATH_MAX + 16];
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
    bool ok = text != NULL;
    snprintf(path, sizeof path, "%s/index.json", dir);
    if (ok && files_write_atomic(path, text, strlen(text)) != 0) {
        snprintf(why, why_len, "cannot write %s", path);
        ok = false;
    }
    free(text);
    SvgBuf b;
    svg_buf_init(&b, 0);
    char updated[32];
    fmt_time(m, "updated", updated, sizeof updated);
    svg_buf_printf(&b, PAGE_HEAD, PAGE_REFRESH_S, "queue");
    svg_buf_printf(&b, "<h1>xqforge fleet</h1>\n<p>Queue <code>");
    svg_buf_escaped(&b, dir);
    svg_buf_printf(&b,
                   "</code>, updated %s UTC (this page reloads every %d s; "
                   "<a href=\"index.json\">index.json</a>).</p>\n",
                   updated, PAGE_REFRESH_S);
    json_t *tests = json_object_get(m, "tests");
    const char *heads[] = {"Running and queued", "Ended"};
    for (int part = 0; part < 2; part++) {
        int rows = 0;
        size_t i;
        json_t *t;
        json_array_foreach(tests, i, t)
        {
            const char *s = text_at(t, "state", NULL);
            bool is_active = !strcmp(s, "queued") || !strcmp(s, "running");
            if (is_active != (part == 0))
                continue;
            if (!rows++)
                svg_buf_printf(
                    &b,
                    "<h2>%s</h2>\n<table><tr><th>Test</th><th>Name</th><th>Kind"
                    "</th><th>State</th><th>Progress</th><th>Games</th><th>New vs base</th><th>Elo "
                    "of new"
                    "</th><th>LLR (bounds)</th><th>Games/min</th><th>Workers</th><th>Priority"
                    "</th><th>Throughput</th><th>Submitted</th><th>Started</th>"
                    "<th>Finished</th><th>Reason</th></tr>\n",
                    heads[part]);
            page_row(&b, t);
        }
        if (rows)
            svg_buf_printf(&b, "</table>\n");
        else
            svg_buf_printf(&b, "<h2>%s</h2>\n<p>None.</p>\n", heads[part]);
    }
    svg_buf_printf(&b, "</body></html>\n");
    json_decref(m);
    snprintf(path, sizeof path, "%s/index.html", dir);
    if (b.status != SVG_OK) {
        snprintf(why, why_len, "the page: %s", svg_strerror(b.status));
        ok = false;
    } else if (ok && files_write_atomic(path, b.data, b.len) != 0) {
        snprintf(why, why_len, "cannot write %s", path);
        ok = false;
    }
    svg_buf_destroy(&b);
    return ok;
}
