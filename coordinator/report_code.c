// SPDX-License-Identifier: MIT
// The report's "code" section (report_code.h).
#include "report_code.h"

#include <stdlib.h>
#include <string.h>

#include "engine_build.h"

json_t *report_code_json(const JobConfig *job)
{
    if (!engine_build_any(job))
        return NULL;
    EngineBuildCode *code = malloc(sizeof *code);
    if (!code)
        return NULL;
    engine_build_code(job, code);
    json_t *engines = json_array();
    for (int i = 0; i < job->player_count; i++) {
        const JobSource *s = &job->sources[i];
        if (!s->commit_id[0])
            continue;
        json_array_append_new(engines, json_pack("{s:s, s:s, s:s, s:s}", "name",
                                                 job->players[i].cfg.name, "commit", s->commit_id,
                                                 "ref", s->commit, "subject", code->subject[i]));
    }
    json_t *out = json_pack("{s:o}", "engines", engines);
    if (out && code->head >= 0) {
        json_object_set_new(out, "base", json_string(job->players[code->base].cfg.name));
        json_object_set_new(out, "new", json_string(job->players[code->head].cfg.name));
        json_object_set_new(out, "log", json_string(code->log));
        json_object_set_new(out, "diff_stat", json_string(code->stat));
        json_object_set_new(out, "diff_url", code->url[0] ? json_string(code->url) : json_null());
    }
    free(code);
    return out;
}

/// A text member of o, or "".
static const char *text_of(const json_t *o, const char *key)
{
    const char *t = json_string_value(json_object_get(o, key));
    return t ? t : "";
}

void report_code_html(const json_t *code, SvgBuf *o)
{
    const json_t *engines = json_object_get(code, "engines");
    if (!json_is_array(engines))
        return;
    svg_buf_printf(o, "\n<section class=\"code\"><h2>Code</h2><table>");
    size_t i;
    const json_t *e;
    json_array_foreach(engines, i, e)
    {
        svg_buf_printf(o, "<tr><th>");
        svg_buf_escaped(o, text_of(e, "name"));
        svg_buf_printf(o, "</th><td><code>%.12s</code> ", text_of(e, "commit"));
        svg_buf_escaped(o, text_of(e, "subject"));
        svg_buf_printf(o, "</td></tr>");
    }
    svg_buf_printf(o, "</table>");
    // Only a web link: a diff_url of another scheme (javascript:) is shown as text.
    const char *url = text_of(code, "diff_url");
    if (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7)) {
        svg_buf_printf(o, "<p><a href=\"");
        svg_buf_escaped(o, url);
        svg_buf_printf(o, "\">diff ");
        svg_buf_escaped(o, text_of(code, "base"));
        svg_buf_printf(o, "...");
        svg_buf_escaped(o, text_of(code, "new"));
        svg_buf_printf(o, "</a></p>");
    }
    const char *log = text_of(code, "log"), *stat = text_of(code, "diff_stat");
    if (log[0]) {
        svg_buf_printf(o, "<h2>Commits ");
        svg_buf_escaped(o, text_of(code, "base"));
        svg_buf_printf(o, "..");
        svg_buf_escaped(o, text_of(code, "new"));
        svg_buf_printf(o, "</h2><pre>");
        svg_buf_escaped(o, log);
        svg_buf_printf(o, "</pre>");
    }
    if (stat[0]) {
        svg_buf_printf(o, "<h2>git diff --stat</h2><pre>");
        svg_buf_escaped(o, stat);
        svg_buf_printf(o, "</pre>");
    }
    svg_buf_printf(o, "</section>");
}
