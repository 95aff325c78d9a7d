// SPDX-License-Identifier: MIT
// The training loop (loop.h): its record from the steps' result files, and its driver.
#include "loop.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "derived.h"
#include "engine_build.h"
#include "files.h"
#include "fitrun.h"
#include "job_kinds.h"
#include "loop_report.h"
#include "nnue.h"
#include "run_report.h"

enum { LOOP_PATH_MAX = 3 * JOB_TEXT_MAX };

/// The step's result.json, or NULL when it has none (or it cannot be read: not finished).
static json_t *step_result(const JobConfig *t, int gen, JobLoopStep s)
{
    char dir[JOB_TEXT_MAX], path[LOOP_PATH_MAX];
    if (!job_loop_dir(t, gen, s, dir, sizeof dir))
        return NULL;
    snprintf(path, sizeof path, "%s/result.json", dir);
    json_error_t err;
    return json_load_file(path, 0, &err);
}

/// Whether a step's result says it finished (a drained, failed or running one goes on).
static bool step_done(const json_t *res)
{
    const char *state = json_string_value(json_object_get(res, "state"));
    return state && strcmp(state, "running") && strcmp(state, "interrupted") &&
           strcmp(state, "failed");
}

/// Copies src to dst atomically (a reader sees the old file or the new one, whole).
static bool copy_atomic(const char *src, const char *dst, char *why, size_t why_len)
{
    FILE *f = fopen(src, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    bool ok = f != NULL;
    while (ok) {
        if (n == cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (!b) {
                ok = false;
                break;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    ok = ok && !ferror(f);
    if (f)
        fclose(f);
    ok = ok && files_write_atomic(dst, buf, n) == 0;
    if (!ok)
        snprintf(why, why_len, "cannot copy %.900s to %.900s: %s", src, dst, strerror(errno));
    free(buf);
    return ok;
}

/// Whether two files hold the same bytes (by sha256); false when either cannot be read.
static bool same_file(const char *a, const char *b)
{
    char ha[JOB_NET_HASH_MAX], hb[JOB_NET_HASH_MAX];
    return engine_build_sha256(a, ha) && engine_build_sha256(b, hb) && !strcmp(ha, hb);
}

/// Where a promoted net is kept: output.dir/nets/nn-<sha256[:12]>.nnue (nets/ made here).
static bool net_path(const JobConfig *t, const char *sha, char *path, size_t len, char *why,
                     size_t why_len)
{
    char nets[JOB_TEXT_MAX + 8];
    snprintf(nets, sizeof nets, "%s/nets", t->output.dir[0] ? t->output.dir : ".");
    snprintf(path, len, "%s/nn-%.12s.nnue", nets, sha);
    if (files_mkdir_p(nets) != 0) {
        snprintf(why, why_len, "cannot create %.900s: %s", nets, strerror(errno));
        return false;
    }
    return true;
}

/// The gate's line as the loop's record keeps it (NULL: no gate result).
static json_t *gate_json(const json_t *res)
{
    json_t *g =
        json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "state",
                  json_object_get(res, "state"), "games", json_object_get(res, "games"), "elo",
                  json_object_get(res, "elo"), "error", json_object_get(res, "error"), "llr",
                  json_object_get(res, "llr"), "lower", json_object_get(res, "lower"), "upper",
                  json_object_get(res, "upper"), "text", json_object_get(res, "text"));
    // The new net's wins, losses and draws, for the page's SPRT line.
    static const char *const WLD[] = {"wins", "losses", "draws"};
    for (int i = 0; g && i < 3; i++)
        json_object_set(g, WLD[i], json_object_get(res, WLD[i]));
    return g;
}

/// The loop's run id (its reports name the run by it): the one its record holds, kept across
/// resumes, else a new random one (--fresh moves the record aside: another run, another id).
static void history_run_id(const char *path, char out[17])
{
    json_error_t err;
    json_t *old = json_load_file(path, 0, &err);
    const char *id = json_string_value(json_object_get(old, "run_id"));
    if (id && strlen(id) == 16 && strspn(id, "0123456789abcdef") == 16) {
        snprintf(out, 17, "%s", id);
    } else {
        unsigned char r[8] = {0};
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
            FILE *f = fopen("/dev/urandom", "rb");
            if (!f || fread(r, 1, sizeof r, f) != sizeof r)
                snprintf((char *)r, sizeof r, "%x", (unsigned)getpid() ^ (unsigned)time(NULL));
            if (f)
                fclose(f);
        }
        for (size_t i = 0; i < sizeof r; i++)
            snprintf(out + 2 * i, 3, "%02x", r[i]);
    }
    json_decref(old);
}

bool loop_record(const JobConfig *t, LoopNext *next, char *why, size_t why_len)
{
    const char *out = t->output.dir[0] ? t->output.dir : ".";
    json_t *rows = json_array();
    char best[JOB_TEXT_MAX] = "", best_id[16] = "";
    *next = (LoopNext){.done = true};
    bool ok = true, found = false;
    for (int g = 1; ok && g <= t->loop.generations; g++) {
        json_t *res[JOB_LOOP_STEP_NB];
        for (int s = 0; s < JOB_LOOP_STEP_NB; s++)
            res[s] = step_result(t, g, (JobLoopStep)s);
        int step = JOB_LOOP_STEP_NB; // the first step not finished
        for (int s = JOB_LOOP_STEP_NB - 1; s >= 0; s--)
            if (!res[s] || !step_done(res[s]))
                step = s;
        json_t *row = json_pack("{s:i, s:s}", "generation", g, "best_before",
                                best_id[0] ? best_id : "embedded");
        if (step > JOB_LOOP_DATA) {
            const json_t *d = res[JOB_LOOP_DATA];
            json_object_set(row, "positions", json_object_get(d, "positions"));
            json_object_set(row, "datagen_games", json_object_get(d, "games"));
            json_object_set(row, "filters", json_object_get(d, "filters"));
        }
        if (step > JOB_LOOP_TRAIN) {
            const json_t *r = res[JOB_LOOP_TRAIN];
            json_object_set_new(
                row, "train",
                json_pack(
                    "{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "init",
                    json_object_get(r, "init"), "best_epoch", json_object_get(r, "best_epoch"),
                    "epochs", json_object_get(r, "epochs"), "loss", json_object_get(r, "loss"),
                    "val_loss", json_object_get(r, "val_loss"), "data_generations",
                    json_object_get(r, "data_generations"), "note", json_object_get(r, "note"),
                    "quant_mean_cp", json_object_get(r, "quant_mean_cp"), "quant_max_cp",
                    json_object_get(r, "quant_max_cp")));
            json_object_set(row, "net", json_object_get(r, "net_id"));
            json_object_set(row, "sha256", json_object_get(r, "sha256"));
            json_object_set(row, "nnue_id", json_object_get(r, "nnue_id"));
        }
        if (step > JOB_LOOP_GATE) {
            const json_t *r = res[JOB_LOOP_GATE];
            json_object_set_new(row, "gate", gate_json(r));
            const char *state = json_string_value(json_object_get(r, "state"));
            const char *sha = json_string_value(json_object_get(res[JOB_LOOP_TRAIN], "sha256"));
            bool accepted = state && !strcmp(state, "H1 accepted") && sha;
            char path[LOOP_PATH_MAX], src[LOOP_PATH_MAX], train[JOB_TEXT_MAX];
            if (accepted) {
                snprintf(src, sizeof src, "%s/%s",
                         job_loop_dir(t, g, JOB_LOOP_TRAIN, train, sizeof train) ? train : "",
                         t->train.net);
                ok = net_path(t, sha, path, sizeof path, why, why_len);
                struct stat st;
                if (ok && stat(path, &st) != 0)
                    ok = copy_atomic(src, path, why, why_len);
                if (ok) {
                    snprintf(best, sizeof best, "%.1000s", path);
                    snprintf(best_id, sizeof best_id, "%.12s", sha);
                }
            }
            json_object_set_new(row, "verdict", json_string(accepted ? "promoted" : "rejected"));
        } else {
            json_object_set_new(row, "verdict", json_string("running"));
        }
        for (int s = 0; s < JOB_LOOP_STEP_NB; s++)
            json_decref(res[s]);
        if (step > JOB_LOOP_DATA || g == 1)
            json_array_append_new(rows, row);
        else
            json_decref(row);
        if (!found && step < JOB_LOOP_STEP_NB) {
            found = true;
            *next = (LoopNext){.gen = g, .step = step, .done = false};
            snprintf(next->best, sizeof next->best, "%s", best);
        }
        if (found)
            break; // later generations wait for this one's verdict
    }
    snprintf(next->best, sizeof next->best, "%s", best);
    // best.nnue: a copy of the best net, for whoever embeds or plays it.
    char best_copy[JOB_TEXT_MAX + 16];
    snprintf(best_copy, sizeof best_copy, "%s/best.nnue", out);
    if (ok && best[0] && !same_file(best, best_copy))
        ok = copy_atomic(best, best_copy, why, why_len);
    char next_text[64];
    if (next->done)
        snprintf(next_text, sizeof next_text, "complete");
    else
        snprintf(next_text, sizeof next_text, "gen %d %s", next->gen,
                 job_loop_step_name((JobLoopStep)next->step));
    char path[JOB_TEXT_MAX + 16], run_id[17];
    snprintf(path, sizeof path, "%s/history.json", out);
    history_run_id(path, run_id);
    json_t *o =
        json_pack("{s:i, s:s, s:s, s:s, s:i, s:s, s:s?, s:s?, s:o}", "schema", 1, "kind",
                  job_kind_name(JOB_LOOP), "job", t->name, "run_id", run_id, "generations",
                  t->loop.generations, "next", next_text, "best", best_id[0] ? best_id : NULL,
                  "best_file", best[0] ? best : NULL, "rows", rows);
    if (ok && !(o && run_write_json(path, o))) {
        snprintf(why, why_len, "cannot write %.900s", path);
        ok = false;
    }
    // The page from the record just written; a page that cannot be made does not stop the loop.
    char page_why[1024];
    if (ok && !loop_report_write(t, o, page_why, sizeof page_why))
        fprintf(stderr, "xqforge run: %s\n", page_why);
    json_decref(o);
    return ok;
}

/// The loss file's rows: the kept epoch is the lowest validation loss of epochs 1.. (the
/// trainer's rule), else the last.
typedef struct {
    int best, last;
    double best_val, best_train, last_train, last_val;
} LossScan;

static void loss_row(void *ctx, int epoch, const double *v, int n)
{
    LossScan *s = ctx;
    if (epoch < 1 || n < 1)
        return;
    double val = n >= 2 ? v[1] : NAN;
    s->last = epoch;
    s->last_train = v[0];
    s->last_val = val;
    if (!isnan(val) && (s->best < 1 || val < s->best_val)) {
        s->best = epoch;
        s->best_val = val;
        s->best_train = v[0];
    }
}

/// The quantization error the train step measured and put in its report.json ("quantization":
/// mean and max |quantized - float| in centipawns over its validation positions); false when
/// its page does not say.
static bool train_quant(const char *dir, double *mean, double *max)
{
    char path[LOOP_PATH_MAX];
    snprintf(path, sizeof path, "%s/report.json", dir);
    json_error_t err;
    json_t *page = json_load_file(path, 0, &err);
    json_t *q = json_object_get(page, "quantization");
    json_t *m = json_object_get(q, "mean_cp"), *x = json_object_get(q, "max_cp");
    bool found = json_is_number(m) && json_is_number(x);
    if (found) {
        *mean = json_number_value(m);
        *max = json_number_value(x);
    }
    json_decref(page);
    return found && isfinite(*mean) && isfinite(*max);
}

bool loop_train_done(const JobConfig *tr, char *why, size_t why_len)
{
    char net[LOOP_PATH_MAX], loss[LOOP_PATH_MAX], sha[JOB_NET_HASH_MAX];
    snprintf(net, sizeof net, "%s/%s", tr->output.dir, tr->train.net);
    snprintf(loss, sizeof loss, "%s/%s", tr->output.dir, tr->train.loss);
    if (!engine_build_sha256(net, sha)) {
        snprintf(why, why_len, "cannot read the new net %.900s: %s", net, strerror(errno));
        return false;
    }
    // The engine's own id of the net (nnue info, UCI's, README's tables) beside its file's.
    NnueNet nn;
    char nid[NNUE_ID_MAX] = "", msg[256];
    memset(&nn, 0, sizeof nn);
    if (nnue_load_file(&nn, net, msg, sizeof msg) != NNUE_OK) {
        snprintf(why, why_len, "the new net %.900s: %s", net, msg);
        return false;
    }
    nnue_id(&nn, nid);
    nnue_free(&nn);
    LossScan s = {0};
    fitrun_loss_read(loss, tr->train.epochs + 1, loss_row, &s);
    bool val = s.best >= 1;
    int kept = val ? s.best : s.last;
    char id[16];
    snprintf(id, sizeof id, "%.12s", sha);
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:o}", "state", "complete", "net",
                          tr->train.net, "net_id", id, "sha256", sha, "best_epoch", kept, "epochs",
                          s.last, "loss", val ? s.best_train : s.last_train, "val_loss",
                          val ? json_real(s.best_val) : json_null());
    json_t *gens = json_array();
    for (int i = 0; i < tr->train.data_count; i++)
        json_array_append_new(gens, json_string(tr->train.data[i]));
    json_object_set_new(o, "data", gens);
    json_object_set_new(o, "data_generations", json_integer(tr->train.data_count));
    json_object_set_new(o, "nnue_id", json_string(nid));
    json_object_set_new(o, "init", json_string(tr->train.init[0] ? tr->train.init : "fresh"));
    double qmean, qmax;
    bool quant = train_quant(tr->output.dir, &qmean, &qmax);
    json_object_set_new(o, "quant_mean_cp", quant ? json_real(qmean) : json_null());
    json_object_set_new(o, "quant_max_cp", quant ? json_real(qmax) : json_null());
    if (!val)
        json_object_set_new(o, "note", json_string("no validation: the last epoch's net"));
    else if (s.best == 1 && s.last > 1)
        json_object_set_new(o, "note",
                            json_string("the validation loss never improved after epoch 1"));
    char path[LOOP_PATH_MAX];
    snprintf(path, sizeof path, "%s/result.json", tr->output.dir);
    bool ok = o && run_write_json(path, o);
    if (!ok)
        snprintf(why, why_len, "cannot write %.900s", path);
    json_decref(o);
    return ok;
}

bool loop_move_aside(const char *dir, const char *moved, char *why, size_t why_len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, why_len, "cannot read %.900s: %s", dir, strerror(errno));
        return false;
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (strncmp(e->d_name, "gen-", 4))
            continue;
        char from[LOOP_PATH_MAX], to[LOOP_PATH_MAX];
        snprintf(from, sizeof from, "%s/%s", dir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", moved, e->d_name);
        if (rename(from, to) != 0) {
            snprintf(why, why_len, "cannot move %.900s aside: %s", from, strerror(errno));
            ok = false;
        }
    }
    closedir(d);
    return ok;
}

// ---- The driver: each step a derived run (derived.h) ------------------------------------------

/// Rank 0, before a step plays: which one.
static void driver_banner(const Run *run, const Run *v, const void *ctx)
{
    const LoopNext *nx = ctx;
    printf("\nLoop: generation %d of %d, %s (%s)\n", nx->gen, run->job.loop.generations,
           job_loop_step_name((JobLoopStep)nx->step), v->dir);
}

/// Rank 0, after it: a finished train step is marked (its result.json).
static int driver_done(Run *run, Run *v, int rc, const void *ctx)
{
    (void)run;
    const LoopNext *nx = ctx;
    char why[1024];
    if (rc == 0 && nx->step == JOB_LOOP_TRAIN && !loop_train_done(&v->job, why, sizeof why)) {
        fprintf(stderr, "xqforge run: %s\n", why);
        return 1;
    }
    return rc;
}

/// One step of a loop (job_loop.h) as a job of its own on every rank: its own output
/// directory, identity and journal (or checkpoint), resume = auto, so a killed step goes on
/// from where it was.
static int run_loop_step(Run *run, Link *link, const LoopNext *nx)
{
    char why[1024] = "";
    Run *v = run_derived_new(run);
    int vrc = 0;
    if (!v) {
        link_all_ok(link, false); // every rank takes part in run_derived's agreement
        fprintf(stderr, "xqforge run (rank %d): out of memory\n", link_rank(link));
        return 1;
    }
    if (!job_loop_make(&run->job, nx->gen, (JobLoopStep)nx->step, nx->best, &v->job, why,
                       sizeof why))
        vrc = 2;
    v->kind = run_kind(v->job.kind);
    snprintf(v->dir, sizeof v->dir, "%s", v->job.output.dir);
    snprintf(v->journal, sizeof v->journal, "%s/%s", v->dir, job_state_file(&v->job));
    Derived d = {.banner = driver_banner, .done = driver_done, .ctx = nx};
    return run_derived(run, v, link, vrc, why, sizeof why, &d);
}

/// kind = loop: the next step derived on rank 0 from the steps' result files (loop_record,
/// which also promotes and writes history.json) and sent to every rank, run, and again, until
/// every generation's gate has finished. Nothing is kept in memory between steps, so a loop
/// killed anywhere and run again derives the same next step from the same files.
int run_loop(Run *run, Link *link)
{
    int rank = link_rank(link);
    if (rank == 0)
        printf("Job %s: training loop, %d generation%s in %s (history.json)\n", run->job.name,
               run->job.loop.generations, run->job.loop.generations == 1 ? "" : "s", run->dir);
    for (;;) {
        struct {
            int status;
            LoopNext next;
        } msg;
        memset(&msg, 0, sizeof msg);
        char why[1024] = "";
        if (rank == 0 && !loop_record(&run->job, &msg.next, why, sizeof why)) {
            fprintf(stderr, "xqforge run: %s\n", why);
            msg.status = 1;
        }
        if (!link_bcast(link, &msg, sizeof msg, 0)) {
            fprintf(stderr, "xqforge run (rank %d): MPI: cannot share the loop's next step\n",
                    rank);
            return 1;
        }
        if (msg.status)
            return msg.status;
        if (msg.next.done) {
            if (rank == 0)
                printf("\nLoop: %d generation%s done; best net %s (%s/history.json)\n",
                       run->job.loop.generations, run->job.loop.generations == 1 ? "" : "s",
                       msg.next.best[0] ? msg.next.best : "the engine's own", run->dir);
            return 0;
        }
        int rc = run_loop_step(run, link, &msg.next);
        if (!run_link_renew(link))
            return 1;
        if (!link_all_ok(link, rc == 0)) {
            LoopNext ignored;
            if (rank == 0 && !loop_record(&run->job, &ignored, why, sizeof why))
                fprintf(stderr, "xqforge run: %s\n", why);
            return rc ? rc : 1;
        }
    }
}
