// SPDX-License-Identifier: MIT
// The fleet's queue from the command line: `submit` (a job checked whole as `run` checks it,
// then queued), `queue` (the tests, as text or JSON), `stop` and `set` (a test's share).
// The queue itself is coordinator/queue.c.
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "inifile.h"
#include "job.h"
#include "job_check.h"
#include "job_kinds.h"
#include "queue.h"
#include "queue_page.h"
#include "run_common.h"

enum { SHARE_DEFAULT = 100 };

static void submit_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge submit QUEUE JOBFILE [--set SECTION.KEY=VALUE]... [--priority N]\n"
            "                      [--throughput PCT] [--name NAME]\n\n"
            "Checks the job whole, as `xqforge run` does before it writes anything (the job\n"
            "file, the overrides, every engine started once), copies it into QUEUE/tests/ID/,\n"
            "prints the test id and exits 0. A bad job: exit 2 with the reason, nothing queued.\n"
            "QUEUE is made when missing (mode 0700); an existing one must be yours and not\n"
            "writable by others. Relative paths are taken as `run` takes them: from the job\n"
            "file's directory, and for --set from the current directory. The test's outputs\n"
            "(journal, PGN, result.json, report) go to QUEUE/tests/ID/, not [output] dir.\n\n"
            "  --set S.K=V      override a job key (as `run --set`), up to %d\n"
            "  --priority N     higher runs first (default 0; -%d..%d)\n"
            "  --throughput P   percent of a fair share of the fleet (default %d; 1..%d)\n"
            "  --name NAME      the test's name (default: the job file's name)\n",
            QUEUE_SETS_MAX, QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, SHARE_DEFAULT,
            QUEUE_THROUGHPUT_MAX);
}

/// The fleet page follows every change of the queue; a page that cannot be written is said,
/// the change stands.
static void page_update(const char *cmd, const char *dir)
{
    char why[512];
    if (!queue_page_write(dir, why, sizeof why))
        fprintf(stderr, "xqforge %s: warning: the queue page: %s\n", cmd, why);
}

/// The current directory, for the overrides' relative paths.
static bool current_dir(char *out, size_t cap) { return getcwd(out, cap) != NULL; }

int cmd_submit(int argc, char **argv)
{
    const char *queue = NULL, *path = NULL, *name = NULL;
    const char *sets[QUEUE_SETS_MAX];
    int n_sets = 0;
    long priority = 0, throughput = SHARE_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            submit_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--set") && has_value) {
            if (n_sets == QUEUE_SETS_MAX || strlen(argv[i + 1]) > QUEUE_SET_MAX) {
                fprintf(stderr,
                        "xqforge submit: --set %s: more than %d overrides, or one over "
                        "%d characters\n",
                        argv[i + 1], QUEUE_SETS_MAX, QUEUE_SET_MAX);
                return EXIT_USAGE;
            }
            sets[n_sets++] = argv[++i];
        } else if (!strcmp(a, "--priority") && has_value) {
            if (!cli_parse_int(argv[++i], -QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, &priority)) {
                fprintf(stderr, "xqforge submit: --priority '%s': an integer from -%d to %d\n",
                        argv[i], QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--throughput") && has_value) {
            if (!cli_parse_int(argv[++i], 1, QUEUE_THROUGHPUT_MAX, &throughput)) {
                fprintf(stderr, "xqforge submit: --throughput '%s': a percentage from 1 to %d\n",
                        argv[i], QUEUE_THROUGHPUT_MAX);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--name") && has_value) {
            name = argv[++i];
            if (!name[0] || strlen(name) > QUEUE_NAME_MAX) {
                fprintf(stderr, "xqforge submit: --name: 1 to %d characters\n", QUEUE_NAME_MAX);
                return EXIT_USAGE;
            }
        } else if (a[0] != '-' && !queue) {
            queue = a;
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            fprintf(stderr, "xqforge submit: unexpected argument '%s'\n", a);
            submit_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!queue || !path) {
        submit_usage(stderr);
        return EXIT_USAGE;
    }
    char why[2048] = "";
    JobConfig *job = calloc(1, sizeof *job);
    QueueTest *t = calloc(1, sizeof *t);
    int rc = 0;
    if (!job || !t) {
        fprintf(stderr, "xqforge submit: out of memory\n");
        rc = 1;
    } else if (job_load(path, sets, n_sets, job, why, sizeof why) != JOB_OK ||
               job_check(job, why, sizeof why) != JOB_CHECK_OK ||
               run_plan_check(job, why, sizeof why) != 0) {
        fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
        rc = EXIT_USAGE;
    }
    // A collective fit (texel, train) holds every rank for its whole length and stops by
    // its own checkpoints: a fleet plays the kinds that hand out units.
    if (rc == 0 && job_kind_def(job->kind)->collective) {
        fprintf(stderr,
                "xqforge submit: kind = %s is a fit on every rank: run it with xqforge run, a "
                "fleet plays sprt, match, spsa, book and datagen tests (nothing queued)\n",
                job_kind_name(job->kind));
        rc = EXIT_USAGE;
    }
    // The record: where relative paths come from, so that the fleet reads the job exactly
    // as `run` would have read it here.
    if (rc == 0 &&
        (inifile_dir(path, t->job_dir, sizeof t->job_dir, why, sizeof why) != INIFILE_OK ||
         !realpath(path, t->job_file) || !current_dir(t->set_dir, sizeof t->set_dir))) {
        fprintf(stderr, "xqforge submit: %s: %s\n", path, why[0] ? why : strerror(errno));
        rc = 1;
    }
    if (rc == 0) {
        QueueStatus st = queue_open(queue, true, why, sizeof why);
        if (st != QUEUE_OK) {
            fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
            rc = st == QUEUE_ERR_IO ? 1 : EXIT_USAGE;
        }
    }
    if (rc == 0) {
        // The default name: the job file's, less its ".ini".
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t len = strlen(base);
        if (len > 4 && !strcmp(base + len - 4, ".ini"))
            len -= 4;
        snprintf(t->name, sizeof t->name, "%.*s", (int)len, base);
        if (name)
            snprintf(t->name, sizeof t->name, "%s", name);
        snprintf(t->kind, sizeof t->kind, "%s", job_kind_name(job->kind));
        t->priority = (int)priority;
        t->throughput = (int)throughput;
        t->n_sets = n_sets;
        for (int i = 0; i < n_sets; i++)
            snprintf(t->sets[i], sizeof t->sets[i], "%s", sets[i]);
        if (queue_add(queue, t, why, sizeof why) != QUEUE_OK) {
            fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
            rc = 1;
        } else {
            printf("%s\n", t->id);
            page_update("submit", queue);
        }
    }
    free(job);
    free(t);
    return rc;
}

static void queue_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge queue QUEUE [--json]\n\n"
            "Lists the tests of a fleet's queue: id, name, kind, state, games, Elo with its\n"
            "95%% error, the SPRT's LLR and bounds, priority, throughput, and the submitted,\n"
            "started and finished times (UTC). The figures are the test's result.json, or\n"
            "while it runs its report.json; '-' where there is none yet.\n\n"
            "  --json   one JSON object: {\"queue\": DIR, \"tests\": [...]}, each test's record\n"
            "           (test.json) with its \"result\": games, elo_text, llr, lower, upper,\n"
            "           done, total (pairs), games_per_minute, or null before any\n");
}

static void format_time(int64_t t, char *out, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!t || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M", &tm))
        snprintf(out, cap, "-");
}

/// A number member, or NAN.
static double number_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_test(const char *dir, const QueueTest *t)
{
    json_t *r = queue_page_figures(dir, t->id);
    char games[32] = "-", elo[96] = "-", llr[64] = "-", sub[32], start[32], fin[32];
    double g = number_of(r, "games"), llr_v = number_of(r, "llr");
    if (isfinite(g))
        snprintf(games, sizeof games, "%.0f", g);
    json_t *text = json_object_get(r, "elo_text");
    if (json_is_string(text))
        snprintf(elo, sizeof elo, "%s", json_string_value(text));
    if (isfinite(llr_v))
        snprintf(llr, sizeof llr, "%.2f (%.2f, %.2f)", llr_v, number_of(r, "lower"),
                 number_of(r, "upper"));
    format_time(t->submitted, sub, sizeof sub);
    format_time(t->started, start, sizeof start);
    format_time(t->finished, fin, sizeof fin);
    printf("%-6s %-20.20s %-7s %-9s %7s  %-30s %-22s %4d %5d%%  %-16s  %-16s  %s%s%s\n", t->id,
           t->name, t->kind,
           t->stop_requested && t->state == TEST_RUNNING ? "stopping" : queue_state_name(t->state),
           games, elo, llr, t->priority, t->throughput, sub, start, fin, t->reason[0] ? "  " : "",
           t->reason);
    json_decref(r);
}

int cmd_queue(int argc, char **argv)
{
    const char *dir = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            queue_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            fprintf(stderr, "xqforge queue: unexpected argument '%s'\n", argv[i]);
            queue_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!dir) {
        queue_usage(stderr);
        return EXIT_USAGE;
    }
    char why[1024] = "";
    QueueStatus st = queue_open(dir, false, why, sizeof why);
    if (st != QUEUE_OK) {
        fprintf(stderr, "xqforge queue: %s\n", why);
        return st == QUEUE_ERR_IO ? 1 : EXIT_USAGE;
    }
    QueueTest *tests;
    int n;
    st = queue_list(dir, &tests, &n, why, sizeof why);
    if (st == QUEUE_ERR_RECORD)
        fprintf(stderr, "xqforge queue: %s (that test is left out)\n", why);
    else if (st != QUEUE_OK) {
        fprintf(stderr, "xqforge queue: %s\n", why);
        return 1;
    }
    if (json) {
        json_t *arr = json_array();
        for (int i = 0; i < n; i++) {
            char path[QUEUE_PATH_MAX + 64];
            queue_test_path(dir, tests[i].id, "test.json", path, sizeof path);
            json_t *rec = json_load_file(path, 0, NULL);
            json_t *r = queue_page_figures(dir, tests[i].id);
            if (rec) {
                json_object_set_new(rec, "result", r ? r : json_null());
                json_array_append_new(arr, rec);
            } else {
                json_decref(r);
            }
        }
        json_t *o = json_pack("{s:s, s:o}", "queue", dir, "tests", arr);
        char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(o);
    } else {
        printf("%-6s %-20s %-7s %-9s %7s  %-30s %-22s %4s %6s  %-16s  %-16s  %s\n", "id", "name",
               "kind", "state", "games", "Elo", "LLR (bounds)", "prio", "share", "submitted",
               "started", "finished");
        for (int i = 0; i < n; i++)
            print_test(dir, &tests[i]);
        if (n == 0)
            printf("(no tests)\n");
    }
    free(tests);
    return st == QUEUE_OK ? 0 : 1;
}

/// `xqforge stop`: a queued test is stopped at once, a running one is asked to stop (the
/// fleet ends it and records stopped), an ended one is refused.
static bool change_stop(QueueTest *t, void *user, char *why, size_t why_len)
{
    (void)user;
    if (t->state == TEST_QUEUED) {
        t->state = TEST_STOPPED;
        t->finished = (int64_t)time(NULL);
        snprintf(t->reason, sizeof t->reason, "stopped by xqforge stop before it started");
        return true;
    }
    if (t->state == TEST_RUNNING) {
        t->stop_requested = true;
        return true;
    }
    snprintf(why, why_len, "test %s has already ended (%s)", t->id, queue_state_name(t->state));
    return false;
}

int cmd_stop(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: xqforge stop QUEUE ID\n\nStops a test: a queued one at once, a running "
               "one by the fleet within a few seconds\n(its games so far kept, no verdict).\n");
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: xqforge stop QUEUE ID\n");
        return EXIT_USAGE;
    }
    char why[1024] = "";
    QueueStatus st = queue_open(argv[1], false, why, sizeof why);
    if (st == QUEUE_OK)
        st = queue_update(argv[1], argv[2], change_stop, NULL, why, sizeof why);
    if (st != QUEUE_OK) {
        fprintf(stderr, "xqforge stop: %s\n", why);
        return st == QUEUE_ERR_IO || st == QUEUE_ERR_BUSY ? 1 : EXIT_USAGE;
    }
    page_update("stop", argv[1]);
    QueueTest t;
    if (queue_read(argv[1], argv[2], &t, why, sizeof why) == QUEUE_OK)
        printf("test %s: %s\n", t.id,
               t.state == TEST_STOPPED ? "stopped" : "stopping (the fleet ends it)");
    return 0;
}

typedef struct {
    long priority, throughput;
    bool has_priority, has_throughput; // which of the two the command gave
} ShareChange;

static bool change_share(QueueTest *t, void *user, char *why, size_t why_len)
{
    const ShareChange *c = user;
    if (t->state != TEST_QUEUED && t->state != TEST_RUNNING) {
        snprintf(why, why_len, "test %s has already ended (%s)", t->id, queue_state_name(t->state));
        return false;
    }
    if (c->has_priority)
        t->priority = (int)c->priority;
    if (c->has_throughput)
        t->throughput = (int)c->throughput;
    return true;
}

int cmd_set(int argc, char **argv)
{
    const char *usage = "usage: xqforge set QUEUE ID [priority=N] [throughput=PCT]\n";
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("%s\nChanges a queued or running test's priority (-%d..%d, higher first) or "
               "throughput\n(percent of a fair share, 1..%d); the fleet applies it at once.\n",
               usage, QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, QUEUE_THROUGHPUT_MAX);
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "%s", usage);
        return EXIT_USAGE;
    }
    ShareChange c = {0};
    for (int i = 3; i < argc; i++) {
        if (!strncmp(argv[i], "priority=", 9) &&
            cli_parse_int(argv[i] + 9, -QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, &c.priority)) {
            c.has_priority = true;
        } else if (!strncmp(argv[i], "throughput=", 11) &&
                   cli_parse_int(argv[i] + 11, 1, QUEUE_THROUGHPUT_MAX, &c.throughput)) {
            c.has_throughput = true;
        } else {
            fprintf(stderr,
                    "xqforge set: '%s': expected priority=N (-%d..%d) or throughput=PCT "
                    "(1..%d)\n",
                    argv[i], QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, QUEUE_THROUGHPUT_MAX);
            return EXIT_USAGE;
        }
    }
    char why[1024] = "";
    QueueStatus st = queue_open(argv[1], false, why, sizeof why);
    if (st == QUEUE_OK)
        st = queue_update(argv[1], argv[2], change_share, &c, why, sizeof why);
    if (st != QUEUE_OK) {
        fprintf(stderr, "xqforge set: %s\n", why);
        return st == QUEUE_ERR_IO || st == QUEUE_ERR_BUSY ? 1 : EXIT_USAGE;
    }
    page_update("set", argv[1]);
    QueueTest t;
    if (queue_read(argv[1], argv[2], &t, why, sizeof why) == QUEUE_OK)
        printf("test %s: priority %d, throughput %d%%\n", t.id, t.priority, t.throughput);
    return 0;
}
