// SPDX-License-Identifier: MIT
// The fleet's queue from the command line: `submit` (a job checked whole as `run` checks it,
// then queued), `queue` (the tests, as text or JSON), `stop` and `set` (a test's share).
// The queue itself is run/queue.c.
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "files.h"
#include "engine_build.h"
#include "inifile.h"
#include "job.h"
#include "job_check.h"
#include "job_kinds.h"
#include "queue.h"
#include "queue_page.h"
#include "session.h"

enum { SHARE_DEFAULT = 100 };

static void submit_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge submit QUEUE JOBFILE [--set SECTION.KEY=VALUE]... [--priority N]\n"
            "                      [--throughput PCT] [--name NAME]\n"
            "       xqforge submit QUEUE --repo PATH --base REF --new REF [--build CMD\n"
            "                      --binary PATH] [--tc TC | --nodes N] [--sprt elo0=A,elo1=B\n"
            "                      [,alpha=X,beta=Y]] [--bench-base N] [--bench-new N] [...]\n\n"
            "Checks the job whole, as `xqforge run` does before it writes anything (the job\n"
            "file, the overrides, every engine started once), copies it into QUEUE/tests/ID/,\n"
            "prints the test id and exits 0. A bad job: exit 2 with the reason, nothing queued.\n"
            "QUEUE is made when missing (mode 0700); an existing one must be yours and not\n"
            "writable by others. Relative paths are taken as `run` takes them: from the job\n"
            "file's directory, and for --set from the current directory. The test's outputs\n"
            "(journal, PGN, result.json, report) go to QUEUE/tests/ID/, not [output] dir.\n"
            "An engine built from source (source, commit, build keys) is not built here and not\n"
            "started: its repository is checked and its commit resolved to the full id, which\n"
            "the test records (--set engine.NAME.commit=ID), so it plays that commit even if\n"
            "the branch moves; the fleet's ranks build it, with the build cache.\n\n"
            "  --set S.K=V      override a job key (as `run --set`), up to %d\n"
            "  --priority N     higher runs first (default 0; -%d..%d)\n"
            "  --throughput P   percent of a fair share of the fleet (default %d; 1..%d)\n"
            "  --name NAME      the test's name (default: the job file's name)\n\n"
            "--repo: an SPRT of commit --new against commit --base of the local git repository\n"
            "PATH (a clone or bare mirror on the shared file system; never a URL), the job of\n"
            "jobs/sprt-commits.ini made of overrides (test.json \"sets\" lists them):\n"
            "  --build CMD      the build, run in a clean checkout of each commit (it gets\n"
            "                   XQ_ARCH); with --binary, the program it makes. Neither: xqforge's\n"
            "                   own cmake build, build/xqforge with args = uci\n"
            "  --tc TC          time control (default 10+0.1); --nodes N: N nodes a move instead\n"
            "  --sprt K=V,...   elo0, elo1 (default 0, 2), alpha, beta (0.05)\n"
            "  --bench-base N   the base's bench signature (default auto: every rank's agrees)\n"
            "  --bench-new N    the new commit's\n"
            "  --name NAME      default \"REPO: NEW vs BASE\"; --set/--priority/--throughput too\n",
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

/// submit --repo: the one-liner's values (NULL: not given).
typedef struct {
    const char *repo, *base, *new_ref, *build, *binary, *tc, *nodes, *sprt, *bench_base, *bench_new;
} RepoArgs;

/// The job of submit --repo less its engines, time control and bounds (overrides, so a
/// value is taken verbatim, never cut at a ';'): jobs/sprt-commits.ini's settings.
static const char REPO_TEMPLATE[] =
    "; xqforge submit --repo: an SPRT of one commit against another (jobs/sprt-commits.ini);\n"
    "; the engines, time control and bounds are the test's overrides (test.json \"sets\").\n"
    "[job]\nkind = sprt\nrounds = 20000\nconcurrency = 0\n"
    "[engine base]\n[engine new]\n" // base first on purpose: the roles go by name
    "[time]\ntimemargin = 200\n"
    "[openings]\nfile = default\norder = random\nseed = 7\n"
    "[adjudication]\ndraw = on\nresign = on\nresign_twosided = true\n"
    "[output]\ndir = sprt-commits\n";

/// xqforge's own build (jobs/sprt-commits.ini's): the default of --build and --binary.
static const char *const REPO_OWN_BUILD[] = {
    ("each.build=cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DXQ_NATIVE=OFF "
     "-DXQ_MARCH=$XQ_ARCH >/dev/null && cmake --build build -j4 --target xqforge >/dev/null"),
    "each.binary=build/xqforge", "each.args=uci", "each.option.Threads=1"};

/// Appends one override to the test's; false with why when there is no room for it.
__attribute__((format(printf, 4, 5))) static bool add_set(QueueTest *t, char *why, size_t len,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n =
        t->n_sets < QUEUE_SETS_MAX ? vsnprintf(t->sets[t->n_sets], sizeof t->sets[0], fmt, ap) : -1;
    va_end(ap);
    if (n < 0 || n > QUEUE_SET_MAX) {
        snprintf(why, len, "more than %d overrides, or one over %d characters (%.60s...)",
                 QUEUE_SETS_MAX, QUEUE_SET_MAX,
                 t->n_sets < QUEUE_SETS_MAX ? t->sets[t->n_sets] : "");
        return false;
    }
    t->n_sets++;
    return true;
}

/// The overrides that make REPO_TEMPLATE the test --repo asks for (before the user's --set).
static bool repo_sets(const RepoArgs *r, const char *name, QueueTest *t, char *why, size_t len)
{
    bool ok = add_set(t, why, len, "job.name=%s", name) &&
              add_set(t, why, len, "each.source=%s", r->repo) &&
              add_set(t, why, len, "each.bench=auto") &&
              add_set(t, why, len, "engine.base.commit=%s", r->base) &&
              add_set(t, why, len, "engine.new.commit=%s", r->new_ref);
    if (r->build) {
        ok = ok && add_set(t, why, len, "each.build=%s", r->build) &&
             add_set(t, why, len, "each.binary=%s", r->binary);
    } else {
        for (size_t i = 0; ok && i < sizeof REPO_OWN_BUILD / sizeof REPO_OWN_BUILD[0]; i++)
            ok = add_set(t, why, len, "%s", REPO_OWN_BUILD[i]);
    }
    if (ok && r->bench_base)
        ok = add_set(t, why, len, "engine.base.bench=%s", r->bench_base);
    if (ok && r->bench_new)
        ok = add_set(t, why, len, "engine.new.bench=%s", r->bench_new);
    if (ok && r->nodes)
        ok = add_set(t, why, len, "time.nodes=%s", r->nodes);
    else if (ok)
        ok = add_set(t, why, len, "time.tc=%s", r->tc ? r->tc : "10+0.1");
    // --sprt elo0=0,elo1=2,...: each pair a [sprt] key, checked by the job's own rules.
    char pairs[QUEUE_SET_MAX + 1];
    snprintf(pairs, sizeof pairs, "%s", r->sprt ? r->sprt : "elo0=0,elo1=2");
    for (char *save, *p = strtok_r(pairs, ",", &save); ok && p; p = strtok_r(NULL, ",", &save)) {
        if (!strchr(p, '=') || p[0] == '=') {
            snprintf(why, len, "--sprt '%s': expected KEY=VALUE pairs (elo0=0,elo1=2)", p);
            return false;
        }
        ok = add_set(t, why, len, "sprt.%s", p);
    }
    return ok;
}

/// The template job in a temporary file (queue_add copies it into the test); false with why.
static bool repo_template(char *path, size_t cap, char *why, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/xqforge-submit-repo-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = f && fputs(REPO_TEMPLATE, f) >= 0;
    if ((f && fclose(f) != 0) || (!f && fd >= 0 && close(fd) != 0))
        ok = false;
    if (!ok) {
        snprintf(why, len, "the job's template %.1500s: %s", path, strerror(errno));
        if (fd >= 0)
            unlink(path);
        path[0] = '\0';
    }
    return ok;
}

/// A clone (.git in it, a directory or a worktree's file) or a bare repository (HEAD and
/// objects/): what the build's `git -C DIR archive` takes whole. A subdirectory of a clone is
/// refused, git would archive only that subdirectory.
static bool is_repository(const char *dir, char *why, size_t len)
{
    char p[PATH_MAX + 16];
    struct stat sb, head, objects;
    if (stat(dir, &sb) != 0) {
        snprintf(why, len, "%s: %s", dir, strerror(errno));
        return false;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(why, len, "%s is not a directory", dir);
        return false;
    }
    snprintf(p, sizeof p, "%s/.git", dir);
    if (stat(p, &sb) == 0)
        return true;
    char o[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/HEAD", dir);
    snprintf(o, sizeof o, "%s/objects", dir);
    if (stat(p, &head) == 0 && S_ISREG(head.st_mode) && stat(o, &objects) == 0 &&
        S_ISDIR(objects.st_mode))
        return true;
    snprintf(why, len, "%s is not a git repository (the top directory of a clone or a bare mirror)",
             dir);
    return false;
}

/// Engines built from source: each repository checked and each commit resolved (nothing
/// built: the fleet's ranks build), then pinned to its full id by an override (the last
/// engine.NAME.commit one's value replaced, else one appended) so that a branch moved after
/// submit changes nothing.
static bool resolve_sources(JobConfig *job, QueueTest *t, char *why, size_t len)
{
    for (int i = 0; i < job->player_count; i++) {
        char problem[1536];
        if (job->sources[i].source[0] &&
            !is_repository(job->sources[i].source, problem, sizeof problem)) {
            snprintf(why, len, "engine '%s': source %s", job->players[i].cfg.name, problem);
            return false;
        }
    }
    if (!engine_build_resolve(job, why, len))
        return false;
    for (int i = 0; i < job->player_count; i++) {
        const JobSource *s = &job->sources[i];
        if (!s->source[0] || !strcmp(s->commit, s->commit_id))
            continue;
        char key[QUEUE_SET_MAX + 1];
        int kn = snprintf(key, sizeof key, "engine.%s.commit=", job->players[i].cfg.name);
        int last = -1; // the override that set this engine's commit, if one did
        for (int k = 0; k < t->n_sets; k++)
            if (!strncmp(t->sets[k], key, (size_t)kn) || !strncmp(t->sets[k], "each.commit=", 12))
                last = k;
        if (last >= 0 && !strncmp(t->sets[last], key, (size_t)kn))
            snprintf(t->sets[last], sizeof t->sets[last], "%s%s", key, s->commit_id);
        else if (!add_set(t, why, len, "%s%s", key, s->commit_id))
            return false;
    }
    return true;
}

/// job_check of every engine not built from source: those have no program before the fleet
/// builds them (its ranks check them as `run` does, after the build).
static JobCheckStatus check_engines(const JobConfig *job, char *why, size_t len)
{
    JobPlayer *p = malloc(sizeof *p * JOB_PLAYERS_MAX);
    if (!p) {
        snprintf(why, len, "out of memory");
        return JOB_CHECK_ERR_NOMEM;
    }
    int n = 0;
    for (int i = 0; i < job->player_count; i++)
        if (!job->sources[i].source[0])
            p[n++] = job->players[i];
    JobCheckStatus st = job_check_players(p, n, why, len);
    free(p);
    return st;
}

/// Parses submit's options into queue/path/repo and the test's share; an exit status or -1.
static int submit_args(int argc, char **argv, const char **queue, const char **path,
                       const char **name, RepoArgs *r, const char **user_sets, int *n_user,
                       long *priority, long *throughput)
{
    struct {
        const char *flag, **value;
    } repo_opts[] = {
        {"--repo", &r->repo},          {"--base", &r->base},     {"--new", &r->new_ref},
        {"--build", &r->build},        {"--binary", &r->binary}, {"--tc", &r->tc},
        {"--nodes", &r->nodes},        {"--sprt", &r->sprt},     {"--bench-base", &r->bench_base},
        {"--bench-new", &r->bench_new}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc, repo_opt = false;
        for (size_t k = 0; has_value && k < sizeof repo_opts / sizeof repo_opts[0]; k++)
            if (!strcmp(a, repo_opts[k].flag)) {
                *repo_opts[k].value = argv[++i];
                repo_opt = true;
                break;
            }
        if (repo_opt) {
            continue;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            submit_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--set") && has_value) {
            if (*n_user == QUEUE_SETS_MAX || strlen(argv[i + 1]) > QUEUE_SET_MAX) {
                fprintf(stderr,
                        "xqforge submit: --set %s: more than %d overrides, or one over "
                        "%d characters\n",
                        argv[i + 1], QUEUE_SETS_MAX, QUEUE_SET_MAX);
                return EXIT_USAGE;
            }
            user_sets[(*n_user)++] = argv[++i];
        } else if (!strcmp(a, "--priority") && has_value) {
            if (!cli_parse_int(argv[++i], -QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, priority)) {
                fprintf(stderr, "xqforge submit: --priority '%s': an integer from -%d to %d\n",
                        argv[i], QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--throughput") && has_value) {
            if (!cli_parse_int(argv[++i], 1, QUEUE_THROUGHPUT_MAX, throughput)) {
                fprintf(stderr, "xqforge submit: --throughput '%s': a percentage from 1 to %d\n",
                        argv[i], QUEUE_THROUGHPUT_MAX);
                return EXIT_USAGE;
            }
        } else if (!strcmp(a, "--name") && has_value) {
            *name = argv[++i];
            if (!(*name)[0] || strlen(*name) > QUEUE_NAME_MAX) {
                fprintf(stderr, "xqforge submit: --name: 1 to %d characters\n", QUEUE_NAME_MAX);
                return EXIT_USAGE;
            }
        } else if (a[0] != '-' && !*queue) {
            *queue = a;
        } else if (a[0] != '-' && !*path) {
            *path = a;
        } else {
            fprintf(stderr, "xqforge submit: unexpected argument '%s'\n", a);
            submit_usage(stderr);
            return EXIT_USAGE;
        }
    }
    // The one-liner's options belong together: every refusal names what is missing.
    const char *problem = NULL;
    bool any_repo = false;
    for (size_t k = 0; k < sizeof repo_opts / sizeof repo_opts[0]; k++)
        any_repo |= *repo_opts[k].value != NULL;
    if (any_repo && !r->repo) {
        problem = "--base, --new, --build, --binary, --tc, --nodes, --sprt and --bench-* go "
                  "with --repo PATH";
    } else if (!*queue || (!*path && !r->repo)) {
        submit_usage(stderr);
        return EXIT_USAGE;
    } else if (*path && r->repo) {
        problem = "give a JOBFILE or --repo, not both";
    } else if (r->repo && (!r->base || !r->new_ref)) {
        problem = "--repo needs --base REF and --new REF (the commits to test)";
    } else if (!r->build != !r->binary) {
        problem = "--build and --binary go together (the build and the program it makes)";
    } else if (r->tc && r->nodes) {
        problem = "give --tc or --nodes, not both";
    }
    if (problem) {
        fprintf(stderr, "xqforge submit: %s (nothing queued)\n", problem);
        return EXIT_USAGE;
    }
    return -1;
}

int cmd_submit(int argc, char **argv)
{
    const char *queue = NULL, *path = NULL, *name = NULL;
    const char *user_sets[QUEUE_SETS_MAX];
    int n_user = 0;
    long priority = 0, throughput = SHARE_DEFAULT;
    RepoArgs r = {0};
    int rc = submit_args(argc, argv, &queue, &path, &name, &r, user_sets, &n_user, &priority,
                         &throughput);
    if (rc >= 0)
        return rc;
    rc = 0;
    char why[2048] = "", tmpl[PATH_MAX] = "";
    JobConfig *job = calloc(1, sizeof *job);
    QueueTest *t = calloc(1, sizeof *t);
    const char **sets = calloc(QUEUE_SETS_MAX, sizeof *sets);
    if (!job || !t || !sets) {
        fprintf(stderr, "xqforge submit: out of memory\n");
        rc = 1;
    } else if (!current_dir(t->set_dir, sizeof t->set_dir)) {
        fprintf(stderr, "xqforge submit: the current directory: %s\n", strerror(errno));
        rc = 1;
    }
    // The repository by its absolute path (a URL or a missing one as typed: the job says why).
    char repo_abs[PATH_MAX];
    if (r.repo && realpath(r.repo, repo_abs))
        r.repo = repo_abs;
    // The test's name: --name, else the job file's less its ".ini", else the commits'.
    if (rc == 0 && r.repo) {
        const char *base =
            strrchr(r.repo, '/') && strrchr(r.repo, '/')[1] ? strrchr(r.repo, '/') + 1 : r.repo;
        snprintf(t->name, sizeof t->name, "%.40s: %.36s vs %.36s", base, r.new_ref, r.base);
    } else if (rc == 0) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        size_t len = strlen(base);
        if (len > 4 && !strcmp(base + len - 4, ".ini"))
            len -= 4;
        snprintf(t->name, sizeof t->name, "%.*s", (int)len, base);
    }
    if (rc == 0 && name)
        snprintf(t->name, sizeof t->name, "%s", name);
    // --repo: the template job and the overrides that make it the test asked for, the
    // user's --set after them (they win).
    if (rc == 0 && r.repo && !repo_sets(&r, t->name, t, why, sizeof why)) {
        fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
        rc = EXIT_USAGE;
    } else if (rc == 0 && r.repo && !repo_template(tmpl, sizeof tmpl, why, sizeof why)) {
        fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < n_user; i++)
        if (!add_set(t, why, sizeof why, "%s", user_sets[i])) {
            fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
            rc = EXIT_USAGE;
        }
    for (int i = 0; rc == 0 && i < t->n_sets; i++)
        sets[i] = t->sets[i];
    if (rc == 0 && (job_load_at(r.repo ? tmpl : path, r.repo ? t->set_dir : NULL, NULL, sets,
                                t->n_sets, job, why, sizeof why) != JOB_OK ||
                    (engine_build_any(job) && !resolve_sources(job, t, why, sizeof why)) ||
                    check_engines(job, why, sizeof why) != JOB_CHECK_OK ||
                    run_plan_check(job, why, sizeof why) != 0)) {
        fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
        rc = EXIT_USAGE;
    }
    // A collective fit (texel, train) holds every rank for its whole length and stops by
    // its own checkpoints: a fleet plays the kinds that hand out units.
    if (rc == 0 && run_kind_whole(job->kind)) {
        fprintf(stderr,
                "xqforge submit: kind = %s holds every rank for its whole length (%s): run it "
                "with xqforge run, a fleet plays sprt, match, spsa, book, doe and datagen tests "
                "(nothing queued)\n",
                job_kind_name(job->kind), run_kind_whole(job->kind));
        rc = EXIT_USAGE;
    }
    // The record: where relative paths come from, so that the fleet reads the job exactly
    // as `run` would have read it here (the template's: the current directory's).
    if (rc == 0 && r.repo) {
        snprintf(t->job_file, sizeof t->job_file, "%s", tmpl);
        snprintf(t->job_dir, sizeof t->job_dir, "%s", t->set_dir);
    } else if (rc == 0 &&
               (inifile_dir(path, t->job_dir, sizeof t->job_dir, why, sizeof why) != INIFILE_OK ||
                !realpath(path, t->job_file))) {
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
        snprintf(t->kind, sizeof t->kind, "%s", job_kind_name(job->kind));
        t->priority = (int)priority;
        t->throughput = (int)throughput;
        t->tc_ratio = job_tc_ratio(job);
        if (queue_add(queue, t, why, sizeof why) != QUEUE_OK) {
            fprintf(stderr, "xqforge submit: %s (nothing queued)\n", why);
            rc = 1;
        } else {
            printf("%s\n", t->id);
            page_update("submit", queue);
        }
    }
    if (tmpl[0])
        unlink(tmpl);
    free(job);
    free(t);
    free(sets);
    return rc;
}

static void queue_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge queue QUEUE [--json]\n\n"
            "Lists the tests of a fleet's queue: id, name, kind, state, games, the two roles\n"
            "(new vs base: every figure is new's), Elo with its 95%% error, the SPRT's LLR\n"
            "and bounds, priority, throughput, the worker ranks the\n"
            "fleet gives it now, and the submitted, started and finished times (UTC). The\n"
            "figures are the test's result.json, or\n"
            "while it runs its report.json; '-' where there is none yet.\n\n"
            "  --json   one JSON object: {\"queue\": DIR, \"tests\": [...]}, each test's record\n"
            "           (test.json) with its \"result\": games, new, base, elo_text, llr,\n"
            "           lower, upper, done, total (pairs), games_per_minute, or null before any\n");
}

/// A number member, or NAN.
static double number_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

// The table's columns; each as wide as its widest cell (an Elo text of a gauntlet or an
// unbalanced match is longer than a typical one, and must not push the columns after it).
enum {
    COL_ID,
    COL_NAME,
    COL_KIND,
    COL_STATE,
    COL_GAMES,
    COL_ROLES,
    COL_ELO,
    COL_LLR,
    COL_PRIO,
    COL_SHARE,
    COL_RANKS,
    COL_SUB,
    COL_START,
    COL_FIN,
    COL_NB
};
enum { CELL_MAX = 128 };
typedef struct {
    char cell[COL_NB][CELL_MAX];
    char reason[sizeof((QueueTest *)0)->reason];
} QueueRow;

static const char *const COL_HEAD[COL_NB] = {
    "id",           "name", "kind",  "state", "games",     "new vs base", "Elo (new)",
    "LLR (bounds)", "prio", "share", "ranks", "submitted", "started",     "finished"};
// Numbers align right, text left.
static const bool COL_RIGHT[COL_NB] = {
    [COL_GAMES] = true, [COL_PRIO] = true, [COL_SHARE] = true, [COL_RANKS] = true};

/// Characters on screen, not bytes: the Elo text may hold a UTF-8 "±".
static int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/// A record's text as the terminal shows it: control characters (an escape sequence in a test's
/// name or reason would rewrite the screen) as '?'.
static void printable(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static void fill_row(const char *dir, const QueueTest *t, QueueRow *row)
{
    json_t *r = queue_page_figures(dir, t->id);
    char(*c)[CELL_MAX] = row->cell;
    for (int i = 0; i < COL_NB; i++)
        snprintf(c[i], CELL_MAX, "-");
    double g = number_of(r, "games"), llr_v = number_of(r, "llr");
    snprintf(c[COL_ID], CELL_MAX, "%s", t->id);
    snprintf(c[COL_NAME], CELL_MAX, "%.20s", t->name);
    printable(c[COL_NAME]);
    snprintf(c[COL_KIND], CELL_MAX, "%s", t->kind);
    snprintf(c[COL_STATE], CELL_MAX, "%s",
             t->stop_requested && t->state == TEST_RUNNING ? "stopping"
                                                           : queue_state_name(t->state));
    if (isfinite(g))
        snprintf(c[COL_GAMES], CELL_MAX, "%.0f", g);
    json_t *nn = json_object_get(r, "new"), *bn = json_object_get(r, "base");
    if (json_is_string(nn) && json_is_string(bn)) // the side every figure of the row is from
        snprintf(c[COL_ROLES], CELL_MAX, "%.40s vs %.40s", json_string_value(nn),
                 json_string_value(bn));
    json_t *text = json_object_get(r, "elo_text");
    if (json_is_string(text))
        snprintf(c[COL_ELO], CELL_MAX, "%s", json_string_value(text));
    if (isfinite(llr_v))
        snprintf(c[COL_LLR], CELL_MAX, "%.2f (%.2f, %.2f)", llr_v, number_of(r, "lower"),
                 number_of(r, "upper"));
    snprintf(c[COL_PRIO], CELL_MAX, "%d", t->priority);
    snprintf(c[COL_SHARE], CELL_MAX, "%d%%", t->throughput);
    snprintf(c[COL_RANKS], CELL_MAX, "%d", t->workers);
    queue_time_text(t->submitted, c[COL_SUB], CELL_MAX);
    queue_time_text(t->started, c[COL_START], CELL_MAX);
    queue_time_text(t->finished, c[COL_FIN], CELL_MAX);
    snprintf(row->reason, sizeof row->reason, "%s", t->reason);
    printable(row->reason);
    json_decref(r);
}

/// One line: the cells padded to width[] (the last one not), two spaces before the reason.
static void print_row(const char *const *cell, const int *width, const char *reason)
{
    for (int i = 0; i < COL_NB; i++) {
        int pad = width[i] - text_width(cell[i]);
        if (i == COL_NB - 1 && !reason[0])
            pad = 0;
        if (COL_RIGHT[i])
            printf("%*s%s", pad > 0 ? pad : 0, "", cell[i]);
        else
            printf("%s%*s", cell[i], pad > 0 ? pad : 0, "");
        printf(i + 1 < COL_NB ? "  " : "");
    }
    printf("%s%s\n", reason[0] ? "  " : "", reason);
}

static void print_table(const char *dir, const QueueTest *tests, int n)
{
    QueueRow *rows = n ? calloc((size_t)n, sizeof *rows) : NULL;
    if (n && !rows) {
        fprintf(stderr, "xqforge queue: out of memory\n");
        return;
    }
    int width[COL_NB];
    for (int i = 0; i < COL_NB; i++)
        width[i] = text_width(COL_HEAD[i]);
    for (int k = 0; k < n; k++) {
        fill_row(dir, &tests[k], &rows[k]);
        for (int i = 0; i < COL_NB; i++)
            if (text_width(rows[k].cell[i]) > width[i])
                width[i] = text_width(rows[k].cell[i]);
    }
    print_row(COL_HEAD, width, "");
    for (int k = 0; k < n; k++) {
        const char *cell[COL_NB];
        for (int i = 0; i < COL_NB; i++)
            cell[i] = rows[k].cell[i];
        print_row(cell, width, rows[k].reason);
    }
    free(rows);
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
        print_table(dir, tests, n);
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
        // An ended test is not a usage error: the command was right, the test had ended.
        return st == QUEUE_ERR_IO || st == QUEUE_ERR_BUSY || st == QUEUE_ERR_STATE ? 1 : EXIT_USAGE;
    }
    page_update("stop", argv[1]);
    QueueTest t;
    if (queue_read(argv[1], argv[2], &t, why, sizeof why) == QUEUE_OK)
        printf("test %s: %s\n", t.id,
               t.state == TEST_STOPPED ? "stopped" : "stopping (the fleet ends it)");
    return 0;
}

/// `xqforge requeue`: a failed or stopped test, or a running one that no fleet plays (its
/// fleet was killed), goes back to queued; the next fleet resumes it from its journal.
static bool change_requeue(QueueTest *t, void *user, char *why, size_t why_len)
{
    const FilesLockHolder *fleet = user; // pid 0: no fleet holds the queue
    if (t->state == TEST_FINISHED) {
        snprintf(why, why_len,
                 "test %s has finished: its result stands (submit it again to play "
                 "more)",
                 t->id);
        return false;
    }
    if (t->state == TEST_QUEUED) {
        snprintf(why, why_len, "test %s is already queued", t->id);
        return false;
    }
    if (t->state == TEST_RUNNING && fleet->pid > 0) {
        snprintf(why, why_len,
                 "test %s is running in the fleet of pid %ld on host %s (stop it "
                 "with xqforge stop)",
                 t->id, fleet->pid, fleet->host);
        return false;
    }
    char was[sizeof t->reason + 32];
    snprintf(was, sizeof was, "%s%s%s", queue_state_name(t->state), t->reason[0] ? ": " : "",
             t->reason);
    snprintf(t->reason, sizeof t->reason, "requeued (was %.400s)", was);
    t->state = TEST_QUEUED;
    t->stop_requested = false;
    t->finished = 0;
    t->workers = 0;
    return true;
}

int cmd_requeue(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: xqforge requeue QUEUE ID\n\nPuts a failed or stopped test back in the "
               "queue, or a running one whose fleet is gone\n(killed, a lost node): the next "
               "fleet resumes it from its journal, nothing lost.\nA running test of a live "
               "fleet and a finished one are refused (exit 1).\n");
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: xqforge requeue QUEUE ID\n");
        return EXIT_USAGE;
    }
    char why[1024] = "";
    FilesLockHolder fleet = {0};
    QueueStatus st = queue_open(argv[1], false, why, sizeof why);
    if (st == QUEUE_OK)
        st = queue_fleet_holder(argv[1], &fleet, why, sizeof why);
    if (st == QUEUE_OK)
        st = queue_update(argv[1], argv[2], change_requeue, &fleet, why, sizeof why);
    if (st != QUEUE_OK) {
        fprintf(stderr, "xqforge requeue: %s\n", why);
        return st == QUEUE_ERR_NOT_QUEUE || st == QUEUE_ERR_NO_TEST ? EXIT_USAGE : 1;
    }
    page_update("requeue", argv[1]);
    printf("test %s: queued again\n", argv[2]);
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
        return st == QUEUE_ERR_IO || st == QUEUE_ERR_BUSY || st == QUEUE_ERR_STATE ? 1 : EXIT_USAGE;
    }
    page_update("set", argv[1]);
    QueueTest t;
    if (queue_read(argv[1], argv[2], &t, why, sizeof why) == QUEUE_OK)
        printf("test %s: priority %d, throughput %d%%\n", t.id, t.priority, t.throughput);
    return 0;
}
