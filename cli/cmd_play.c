// SPDX-License-Identifier: MIT
// xqforge play: a local match between two engines, fastchess-style flags.
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "commands.h"
#include "engine_spec.h"
#include "englog.h"
#include "job_check.h"
#include "match.h"
#include "stats.h"
#include "summary.h"
#include "timeman.h"

typedef struct {
    MatchConfig m;
    Openings openings;
    const char *pgn_path;
    bool sprt;
    bool sprt_said; // the verdict is printed once; pairs still in flight finish after it
    SprtParams sprt_params;
    int rating_interval;
    int summarised_games; // games covered by the last summary printed
    int64_t start_ms;
    FILE *log;
    const char *englog_path; // -log file=F: the engines' protocol lines (games/englog.h)
    uint64_t englog_size;
    EngineLog *englogs[2];
} PlayArgs;

static void play_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge play -engine OPTS... -engine OPTS... [options]\n\n"
            "Plays a match between two engines and prints fastchess-style results.\n"
            "Results are for the first engine.\n\n"
            "Engines (-engine twice; -each applies to both):\n"
            "  builtin                 our engine, in-process (default when no cmd= is given)\n"
            "  cmd=PATH                an external engine (run without a shell)\n"
            "  name=NAME  proto=uci|ucci|xboard  args=\"A B\"  dir=DIR  ranks=0|1\n"
            "  option.NAME=VALUE       an engine option (builtin: Threads, Hash, any weight);\n"
            "                          a repeated NAME replaces the earlier value; an\n"
            "                          external engine's must be options it advertises\n"
            "  check_options=false     send an external engine's options unchecked\n"
            "  params=FILE             builtin: a weights file (name value per line)\n"
            "  tc=10+0.1 | tc=40/60+0.5 | st=SECONDS | depth=N | nodes=N\n"
            "  timemargin=MS           lateness tolerated before a time forfeit (default 100)\n"
            "  startup=MS  ping=MS     handshake and isready timeouts\n"
            "  env.NAME=VALUE          set a variable for the engine (the last one wins); an\n"
            "                          engine sees only PATH HOME USER LOGNAME LANG LANGUAGE\n"
            "                          LC_* TZ TMPDIR of ours, plus these and passenv\n"
            "  passenv=\"NAME ...\"      pass these variables of ours through unchanged\n"
            "  rlimit_as=BYTES         address-space limit (K/M/G/T suffixes; 0: none)\n"
            "  rlimit_cpu=SECONDS      CPU-time limit (SIGXCPU: a crash naming it; 0: none)\n\n"
            "Match:\n"
            "  -rules seed|asian       rule set (default seed)\n"
            "  -counting N             rule 6 default count (default 60)\n"
            "  -openings file=F [format=epd|pgn] [plies=N] [order=sequential|random] [start=N]\n"
            "                          EPD/FEN file (format=epd, the default) or PGN games\n"
            "                          (format=pgn: each game's FEN and moves); plies=N\n"
            "                          (1-64) keeps each opening's first N moves (default:\n"
            "                          all, at most 64). Or an embedded set:\n"
            "                          builtin:balanced (%d openings, the default) or\n"
            "                          builtin:unbalanced (%d, side to move ahead)\n"
            "  -srand N                seed for random opening order (default 1)\n"
            "  -rounds N               rounds (default 2); -repeat makes each a game pair\n"
            "  -repeat | -games 2      play each opening twice, colours swapped\n"
            "  -concurrency N          games at once (default 1)\n"
            "  -draw movenumber=N movecount=N score=CP\n"
            "  -resign movecount=N score=CP [twosided=true]\n"
            "  -maxplies N             draw as 'ply limit' after N plies\n"
            "  -pgnout file=F [notation=coordinate|iccs|wxf] [ranks=0|1]\n"
            "                          append every game to F; moves as h2e2 (ranks=1:\n"
            "                          h3e3), H2-E2 (ICCS) or C2.5 (WXF)\n"
            "  -sprt elo0=E0 elo1=E1 [alpha=0.05] [beta=0.05] [model=normalized|logistic]\n"
            "  -log file=F [size=BYTES]\n"
            "                          each external engine's protocol lines, timestamped, in\n"
            "                          F with its name (games.log: games.NAME.log); past BYTES\n"
            "                          (default 16777216) F becomes F.1; builtin: no log\n"
            "  -ratinginterval N       print the summary every N games (default 10)\n"
            "  -event NAME             PGN Event tag\n\n"
            "Ctrl-C stops the match; every finished game is kept.\n",
            openings_default_count, openings_unbalanced_count);
}

static bool set_int(const char *flag, const char *v, long lo, long hi, long *out)
{
    if (cli_parse_int(v, lo, hi, out))
        return true;
    fprintf(stderr, "xqforge play: %s: '%s' is not an integer in %ld..%ld\n", flag, v, lo, hi);
    return false;
}

static bool set_double(const char *flag, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end != v && *end == '\0' && d >= lo && d <= hi) {
        *out = d;
        return true;
    }
    fprintf(stderr, "xqforge play: %s: '%s' is not a number in %g..%g\n", flag, v, lo, hi);
    return false;
}

/// One word of -engine/-each (engine_spec.h: the same settings as a job file's engines).
static bool engine_word(PlayerConfig *pc, TimeControl *tc, const char *word)
{
    char why[PLAYER_TEXT_MAX + 256];
    if (engine_spec_word(pc, tc, word, why, sizeof why) == ENGINE_SPEC_OK)
        return true;
    fprintf(stderr, "xqforge play: %s: %s\n", word, why);
    return false;
}

/// Consumes the key=value words after a flag; returns the index of the next flag.
static int collect(int argc, char **argv, int i, const char **kv, int *n, int max)
{
    *n = 0;
    while (i < argc && argv[i][0] != '-' && *n < max)
        kv[(*n)++] = argv[i++];
    return i;
}

static bool kv_int(const char *kv, const char *key, long lo, long hi, long *out, bool *matched)
{
    size_t k = strlen(key);
    if (strncmp(kv, key, k) != 0 || kv[k] != '=')
        return true;
    *matched = true;
    return set_int(key, kv + k + 1, lo, hi, out);
}

enum { PLAY_VALUES_MAX = 64 }; // the words a flag takes at most (the rest are read as flags)

/// What the flags gather besides PlayArgs: the engines' words, applied once every flag is read
/// (-each before each engine's own), and the openings' settings, loaded last.
typedef struct {
    PlayArgs *a;
    int n; // the words of the flag being read
    int engines;
    const char *per[2][PLAY_VALUES_MAX];
    int per_n[2];
    const char *each[PLAY_VALUES_MAX];
    int each_n;
    const char *openings_file;
    OpeningsFormat openings_format;
    int openings_plies;
} PlayParse;

typedef struct PlayFlag PlayFlag;

/// One flag (fastchess and cutechess style: -name then its words), matched only with p->n
/// words in [min, max]. Its words go to set all at once, or to word one by one; then done
/// (NULL: nothing) turns on what the flag names and checks what its words add up to. A
/// handler that refuses says why on stderr, and the parse ends there.
struct PlayFlag {
    const char *name;
    int min, max;
    bool (*set)(PlayParse *p, const PlayFlag *f, const char **kv);
    bool (*word)(PlayParse *p, const char *kv);
    bool (*done)(PlayParse *p);
    long lo, hi;  // flag_int: the range
    size_t field; // flag_int: the int of PlayArgs it sets (offsetof)
};

static bool flag_engine(PlayParse *p, const PlayFlag *f, const char **kv)
{
    (void)f;
    if (p->engines == 2) {
        fprintf(stderr, "xqforge play: exactly two -engine groups are supported\n");
        return false;
    }
    memcpy(p->per[p->engines], kv, sizeof(kv[0]) * (size_t)p->n);
    p->per_n[p->engines++] = p->n;
    return true;
}

static bool flag_each(PlayParse *p, const PlayFlag *f, const char **kv)
{
    (void)f;
    int room = PLAY_VALUES_MAX - p->each_n, take = p->n < room ? p->n : room;
    memcpy(p->each + p->each_n, kv, sizeof(kv[0]) * (size_t)take);
    p->each_n += take;
    return true;
}

static bool flag_int(PlayParse *p, const PlayFlag *f, const char **kv)
{
    long v;
    if (!set_int(f->name, kv[0], f->lo, f->hi, &v))
        return false;
    *(int *)((char *)p->a + f->field) = (int)v;
    return true;
}

static bool rules_word(PlayParse *p, const char *kv)
{
    RulesConfig *rules = &p->a->m.game.rules;
    if (!rules_set_parse(kv, &rules->set)) {
        fprintf(stderr, "xqforge play: -rules %s: expected seed or asian\n", kv);
        return false;
    }
    // The set's defaults, but a -counting given before stays.
    int counting = rules->counting_default;
    *rules = rules_config_default(rules->set);
    rules->counting_default = counting;
    return true;
}

static bool games_word(PlayParse *p, const char *kv)
{
    long v;
    if (!set_int("-games", kv, 1, 2, &v))
        return false;
    p->a->m.repeat = v == 2;
    return true;
}

static bool repeat_done(PlayParse *p)
{
    p->a->m.repeat = true;
    return true;
}

static bool srand_word(PlayParse *p, const char *kv)
{
    long v;
    if (!set_int("-srand", kv, 0, 2000000000L, &v))
        return false;
    p->a->m.seed = (uint64_t)v;
    return true;
}

static bool event_word(PlayParse *p, const char *kv)
{
    p->a->m.event = kv;
    return true;
}

static bool log_word(PlayParse *p, const char *kv)
{
    long v;
    bool m = false;
    if (strncmp(kv, "file=", 5) == 0 && kv[5])
        p->a->englog_path = kv + 5;
    else if (!kv_int(kv, "size", ENGLOG_SIZE_MIN, 1000000000000L, &v, &m) || !m) {
        if (!m)
            fprintf(stderr, "xqforge play: -log: unknown setting '%s'\n", kv);
        return false;
    } else
        p->a->englog_size = (uint64_t)v;
    return true;
}

static bool log_done(PlayParse *p)
{
    if (!p->a->englog_path) {
        fprintf(stderr, "xqforge play: -log: give the file: -log file=F\n");
        return false;
    }
    return true;
}

static bool pgnout_word(PlayParse *p, const char *kv)
{
    PlayArgs *a = p->a;
    long v;
    bool m = false;
    if (strncmp(kv, "file=", 5) == 0)
        a->pgn_path = kv + 5;
    else if (strncmp(kv, "notation=", 9) == 0) {
        if (!pgn_notation_parse(kv + 9, &a->m.notation)) {
            fprintf(stderr, "xqforge play: -pgnout: %s: expected coordinate, iccs or wxf\n", kv);
            return false;
        }
    } else if (!kv_int(kv, "ranks", 0, 1, &v, &m))
        return false;
    else if (m)
        a->m.pgn_rank_base = (int)v;
    else if (p->n == 1 && !strchr(kv, '='))
        a->pgn_path = kv;
    else {
        fprintf(stderr, "xqforge play: -pgnout: unknown setting '%s'\n", kv);
        return false;
    }
    return true;
}

static bool pgnout_done(PlayParse *p)
{
    if (!p->a->pgn_path) {
        fprintf(stderr, "xqforge play: -pgnout: give file=F\n");
        return false;
    }
    // ICCS and WXF have their own ranks: 0-9, and none.
    if (p->a->m.pgn_rank_base && p->a->m.notation != PGN_NOTATION_COORDINATE) {
        fprintf(stderr, "xqforge play: -pgnout: ranks=1 is for notation=coordinate\n");
        return false;
    }
    return true;
}

static bool openings_word(PlayParse *p, const char *kv)
{
    long v;
    bool m = false;
    if (strncmp(kv, "file=", 5) == 0)
        p->openings_file = kv + 5;
    else if (strcmp(kv, "order=random") == 0)
        p->a->m.random_order = true;
    else if (strcmp(kv, "order=sequential") == 0)
        p->a->m.random_order = false;
    else if (strncmp(kv, "format=", 7) == 0) {
        // epd also covers FEN lines
        if (!openings_format_parse(kv + 7, &p->openings_format)) {
            fprintf(stderr, "xqforge play: -openings: %s: expected epd or pgn\n", kv);
            return false;
        }
    } else if (!kv_int(kv, "plies", 1, OPENING_MAX_MOVES, &v, &m))
        return false;
    else if (m)
        p->openings_plies = (int)v;
    else if (!kv_int(kv, "start", 1, 100000000, &v, &m) || !m) {
        if (!m)
            fprintf(stderr, "xqforge play: -openings: unknown setting '%s'\n", kv);
        return false;
    } else
        p->a->m.start = (int)v - 1;
    return true;
}

/// An integer setting of -draw or -resign: key=N with N in [lo, hi], stored in *to.
typedef struct {
    const char *key;
    long lo, hi;
    int *to;
} PlayKey;

/// Sets the first of keys[0..n) that kv names (*matched then true); false for a bad value.
static bool kv_keys(const char *kv, const PlayKey *keys, int n, bool *matched)
{
    for (int j = 0; j < n; j++) {
        long v;
        bool m = false;
        if (!kv_int(kv, keys[j].key, keys[j].lo, keys[j].hi, &v, &m))
            return false;
        if (m) {
            *keys[j].to = (int)v;
            *matched = true;
            return true;
        }
    }
    return true;
}

static bool draw_word(PlayParse *p, const char *kv)
{
    DrawAdjudication *draw = &p->a->m.game.draw;
    const PlayKey keys[] = {{"movenumber", 0, 100000, &draw->movenumber},
                            {"movecount", 1, 100000, &draw->movecount},
                            {"score", 0, 100000, &draw->score}};
    bool m = false;
    if (!kv_keys(kv, keys, 3, &m))
        return false;
    if (!m)
        fprintf(stderr, "xqforge play: -draw: unknown setting '%s'\n", kv);
    return m;
}

static bool draw_done(PlayParse *p)
{
    p->a->m.game.draw.enabled = true;
    return true;
}

static bool resign_word(PlayParse *p, const char *kv)
{
    ResignAdjudication *resign = &p->a->m.game.resign;
    const PlayKey keys[] = {{"movecount", 1, 100000, &resign->movecount},
                            {"score", 0, 100000, &resign->score}};
    bool m = false;
    if (!kv_keys(kv, keys, 2, &m))
        return false;
    if (m)
        return true;
    if (strcmp(kv, "twosided=true") == 0 || strcmp(kv, "twosided=false") == 0) {
        resign->twosided = kv[9] == 't';
        return true;
    }
    fprintf(stderr, "xqforge play: -resign: unknown setting '%s'\n", kv);
    return false;
}

static bool resign_done(PlayParse *p)
{
    p->a->m.game.resign.enabled = true;
    return true;
}

static bool sprt_word(PlayParse *p, const char *kv)
{
    SprtParams *sp = &p->a->sprt_params;
    const char *eq = strchr(kv, '=');
    double d;
    if (!eq) {
        fprintf(stderr, "xqforge play: -sprt: '%s' is not key=value\n", kv);
        return false;
    }
    if (!strncmp(kv, "elo0=", 5) && set_double("elo0", eq + 1, -1000, 1000, &d))
        sp->elo0 = d;
    else if (!strncmp(kv, "elo1=", 5) && set_double("elo1", eq + 1, -1000, 1000, &d))
        sp->elo1 = d;
    else if (!strncmp(kv, "alpha=", 6) && set_double("alpha", eq + 1, 1e-9, 0.5, &d))
        sp->alpha = d;
    else if (!strncmp(kv, "beta=", 5) && set_double("beta", eq + 1, 1e-9, 0.5, &d))
        sp->beta = d;
    else if (!strcmp(kv, "model=normalized"))
        sp->model = SPRT_NORMALIZED;
    else if (!strcmp(kv, "model=logistic"))
        sp->model = SPRT_LOGISTIC;
    else {
        fprintf(stderr, "xqforge play: -sprt: bad setting '%s'\n", kv);
        return false;
    }
    return true;
}

static bool sprt_done(PlayParse *p)
{
    p->a->sprt = true;
    return true;
}

/// An integer flag of one word, in [lo, hi], stored in the int at PlayArgs' member.
#define PLAY_INT_FLAG(flag, low, high, member)                                                     \
    {                                                                                              \
        .name = flag, .min = 1, .max = 1, .set = flag_int, .lo = low, .hi = high,                  \
        .field = offsetof(PlayArgs, member)                                                        \
    }

static const PlayFlag PLAY_FLAGS[] = {
    {.name = "-engine", .min = 0, .max = PLAY_VALUES_MAX, .set = flag_engine},
    {.name = "-each", .min = 0, .max = PLAY_VALUES_MAX, .set = flag_each},
    {.name = "-rules", .min = 1, .max = 1, .word = rules_word},
    PLAY_INT_FLAG("-counting", 1, 1000, m.game.rules.counting_default),
    PLAY_INT_FLAG("-rounds", 1, 100000000, m.rounds),
    {.name = "-games", .min = 1, .max = 1, .word = games_word},
    {.name = "-repeat", .min = 0, .max = 0, .done = repeat_done},
    PLAY_INT_FLAG("-concurrency", 1, MATCH_MAX_CONCURRENCY, m.concurrency),
    PLAY_INT_FLAG("-maxplies", 1, GAME_MAX_PLIES, m.game.max_plies),
    {.name = "-srand", .min = 1, .max = 1, .word = srand_word},
    {.name = "-log", .min = 1, .max = PLAY_VALUES_MAX, .word = log_word, .done = log_done},
    PLAY_INT_FLAG("-ratinginterval", 1, 100000000, rating_interval),
    {.name = "-event", .min = 1, .max = 1, .word = event_word},
    {.name = "-pgnout", .min = 1, .max = PLAY_VALUES_MAX, .word = pgnout_word, .done = pgnout_done},
    {.name = "-openings", .min = 1, .max = PLAY_VALUES_MAX, .word = openings_word},
    {.name = "-draw", .min = 0, .max = PLAY_VALUES_MAX, .word = draw_word, .done = draw_done},
    {.name = "-resign", .min = 0, .max = PLAY_VALUES_MAX, .word = resign_word, .done = resign_done},
    {.name = "-sprt", .min = 0, .max = PLAY_VALUES_MAX, .word = sprt_word, .done = sprt_done},
};

/// The row of flag given n words; NULL for an unknown flag or a wrong number of words.
static const PlayFlag *play_flag_find(const char *flag, int n)
{
    for (size_t k = 0; k < sizeof PLAY_FLAGS / sizeof PLAY_FLAGS[0]; k++) {
        const PlayFlag *f = &PLAY_FLAGS[k];
        if (strcmp(flag, f->name) == 0 && n >= f->min && n <= f->max)
            return f;
    }
    return NULL;
}

/// The two engines from their words (-each first, then each one's own), checked alone and as
/// a pair; a name both share gets "-2" on the second.
static bool play_engines(PlayParse *p)
{
    PlayArgs *a = p->a;
    if (p->engines != 2) {
        fprintf(stderr, "xqforge play: two -engine groups are needed (found %d)\n", p->engines);
        return false;
    }
    for (int e = 0; e < 2; e++) {
        PlayerConfig *pc = &a->m.players[e];
        snprintf(pc->name, sizeof pc->name, "engine%d", e + 1);
        for (int k = 0; k < p->each_n; k++)
            if (!engine_word(pc, &a->m.game.tc[e], p->each[k]))
                return false;
        for (int k = 0; k < p->per_n[e]; k++)
            if (!engine_word(pc, &a->m.game.tc[e], p->per[e][k]))
                return false;
        if (pc->proto != PROTO_BUILTIN && !pc->cmd[0]) {
            fprintf(stderr, "xqforge play: engine %d: proto=%s needs cmd=PATH\n", e + 1,
                    player_proto_name(pc->proto));
            return false;
        }
        const TimeControl *tc = &a->m.game.tc[e];
        if (!tc->base_ms && !tc->inc_ms && !tc->movetime_ms && !tc->depth && !tc->nodes) {
            fprintf(stderr,
                    "xqforge play: engine %d (%s) has no time control: give tc=, st=, "
                    "depth= or nodes= (with -each for both)\n",
                    e + 1, pc->name);
            return false;
        }
        char why[512];
        if (!engine_spec_check_eval(pc, false, why, sizeof why)) {
            fprintf(stderr, "xqforge play: engine %d (%s): %s\n", e + 1, pc->name, why);
            return false;
        }
    }
    char pair_why[512];
    if (!engine_spec_check_pair(&a->m.players[0], &a->m.players[1], pair_why, sizeof pair_why)) {
        fprintf(stderr, "xqforge play: %s\n", pair_why);
        return false;
    }
    if (!strcmp(a->m.players[0].name, a->m.players[1].name)) {
        strncat(a->m.players[1].name, "-2",
                sizeof a->m.players[1].name - strlen(a->m.players[1].name) - 1);
    }
    return true;
}

/// The openings -openings names, or the embedded default set.
static bool play_openings(PlayParse *p)
{
    PlayArgs *a = p->a;
    char why[512];
    OpeningsStatus os = p->openings_file
                            ? openings_load_as(&a->openings, p->openings_file, p->openings_format,
                                               p->openings_plies, stderr, why, sizeof why)
                            : openings_load_default(&a->openings);
    if (os != OPENINGS_OK) {
        fprintf(stderr, "xqforge play: openings: %s\n",
                p->openings_file ? why : openings_strerror(os));
        return false;
    }
    a->m.openings = &a->openings;
    return true;
}

static bool parse_args(int argc, char **argv, PlayArgs *a)
{
    PlayParse p = {.a = a, .openings_format = OPENINGS_FORMAT_EPD};
    for (int i = 1; i < argc;) {
        const char *flag = argv[i], *kv[PLAY_VALUES_MAX];
        int n;
        i = collect(argc, argv, i + 1, kv, &n, PLAY_VALUES_MAX);
        const PlayFlag *f = play_flag_find(flag, n);
        if (!f) {
            fprintf(stderr, "xqforge play: unknown flag or wrong number of values: '%s'\n", flag);
            return false;
        }
        p.n = n;
        if (f->set && !f->set(&p, f, kv))
            return false;
        for (int k = 0; f->word && k < n; k++)
            if (!f->word(&p, kv[k]))
                return false;
        if (f->done && !f->done(&p))
            return false;
    }
    return play_engines(&p) && play_openings(&p);
}

/// -log: a log per external engine, opened now (after the engines' check, as the PGN); the
/// builtin engine speaks no protocol, so it has none, and the line says so.
static bool play_open_logs(PlayArgs *a)
{
    for (int e = 0; e < 2; e++) {
        PlayerConfig *pc = &a->m.players[e];
        char path[ENGLOG_PATH_MAX], why[ENGLOG_PATH_MAX + 256];
        if (pc->proto == PROTO_BUILTIN) {
            fprintf(a->log, "Engine log: %s is builtin (in-process, no protocol): none\n",
                    pc->name);
            continue;
        }
        if (!englog_file_name(path, sizeof path, a->englog_path, pc->name, -1)) {
            fprintf(stderr, "xqforge play: -log: file name too long: %s\n", a->englog_path);
            return false;
        }
        if (!(pc->log = a->englogs[e] = englog_new(path, pc->name, a->englog_size))) {
            fprintf(stderr, "xqforge play: out of memory\n");
            return false;
        }
        if (!englog_open(pc->log, why, sizeof why)) {
            fprintf(stderr, "xqforge play: -log: %s\n", why);
            return false;
        }
        fprintf(a->log, "Engine log: %s in %s\n", pc->name, path);
    }
    return true;
}

static atomic_bool interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    atomic_store(&interrupted, true);
}

static void print_summary(PlayArgs *a, const MatchTotals *t)
{
    a->summarised_games = t->games;
    // fastchess's meaning: the first -engine is the tested one, and the figures are its own.
    char roles[3 * PLAYER_NAME_MAX + 128];
    snprintf(roles, sizeof roles,
             "Roles: new = %s, base = %s (the first -engine is new, as in "
             "fastchess); every figure is %s's.",
             a->m.players[0].name, a->m.players[1].name, a->m.players[0].name);
    summary_print(a->log, a->m.players[0].name, a->m.players[1].name, roles, t, a->m.repeat,
                  a->sprt ? &a->sprt_params : NULL, (timeman_now_ms() - a->start_ms) / 60000.0);
}

static void on_game(void *ctx, const GameRecord *rec, int number, const MatchTotals *t)
{
    PlayArgs *a = ctx;
    fprintf(a->log, "Finished game %d (%s vs %s): %s {%s%s%s}\n", number, rec->names[rec->red],
            rec->names[1 - rec->red],
            rec->outcome == OUTCOME_RED_WINS     ? "1-0"
            : rec->outcome == OUTCOME_BLACK_WINS ? "0-1"
                                                 : "1/2-1/2",
            game_termination_name(rec->term), rec->detail[0] ? ": " : "", rec->detail);
    if (number % a->rating_interval == 0)
        print_summary(a, t);
}

static bool on_pair(void *ctx, const MatchTotals *t)
{
    PlayArgs *a = ctx;
    if (!a->sprt)
        return false;
    MatchResults r = summary_results(t, a->m.repeat);
    SprtResult res;
    if (sprt_evaluate(&r, &a->sprt_params, &res) != STATS_OK)
        return false;
    if (a->sprt_said)
        return true;
    if (res.decision != SPRT_CONTINUE) {
        fprintf(a->log, "SPRT: %s (LLR %.2f, bounds %.2f %.2f)\n", sprt_decision_name(res.decision),
                res.llr, res.lower, res.upper);
        a->sprt_said = true;
    }
    return res.decision != SPRT_CONTINUE;
}

int cmd_play(int argc, char **argv)
{
    if (argc > 1 &&
        (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "-help"))) {
        play_usage(stdout);
        return 0;
    }
    PlayArgs *a = calloc(1, sizeof *a);
    if (!a)
        return fprintf(stderr, "xqforge play: out of memory\n"), 1;
    a->m.game.rules = rules_config_default(RULES_SEED);
    a->m.rounds = 2;
    a->m.concurrency = 1;
    a->m.seed = 1;
    a->rating_interval = 10;
    a->log = stdout;
    setvbuf(stdout, NULL, _IOLBF, 0); // progress lines appear as they happen, even in a file
    a->sprt_params = (SprtParams){0.0, 2.0, 0.05, 0.05, SPRT_NORMALIZED};
    for (int e = 0; e < 2; e++)
        a->m.game.tc[e].margin_ms = 100;
    int rc = EXIT_USAGE;
    if (!parse_args(argc, argv, a))
        goto done;
    if (a->sprt && sprt_params_check(&a->sprt_params) != STATS_OK) {
        fprintf(stderr,
                "xqforge play: -sprt: need elo0 < elo1, 0 < alpha, beta and alpha + beta < 1\n");
        goto done;
    }
    // The engines are checked before the match (job/job_check.h): a bad option or limit, an
    // engine that does not start, is bad input (exit 2), not a failure while running.
    JobPlayer check[2] = {{a->m.players[0], a->m.game.tc[0]}, {a->m.players[1], a->m.game.tc[1]}};
    char check_why[1024];
    if (job_check_players(check, 2, check_why, sizeof check_why) != JOB_CHECK_OK) {
        fprintf(stderr, "xqforge play: %s\n", check_why);
        goto done;
    }
    if (a->pgn_path && !(a->m.pgn = fopen(a->pgn_path, "a"))) {
        fprintf(stderr, "xqforge play: cannot open %s for appending\n", a->pgn_path);
        goto done;
    }
    char host[128] = "?";
    gethostname(host, sizeof host - 1);
    a->m.site = host;
    if (a->englog_path && !play_open_logs(a))
        goto done;
    struct sigaction sa = {0};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    a->start_ms = timeman_now_ms();
    MatchHooks hooks = {a, on_game, on_pair};
    MatchTotals t;
    char msg[1024];
    fprintf(a->log, "Started %s vs %s: %d %s%s, %d opening%s, concurrency %d, rules %s\n",
            a->m.players[0].name, a->m.players[1].name, a->m.rounds,
            a->m.repeat ? "game pair" : "game", a->m.rounds == 1 ? "" : "s", a->openings.count,
            a->openings.count == 1 ? "" : "s", a->m.concurrency,
            rules_set_name(a->m.game.rules.set));
    MatchStatus st = match_run(&a->m, &hooks, &interrupted, &t, msg, sizeof msg);
    if (t.games == 0 || a->summarised_games != t.games)
        print_summary(a, &t);
    if (st != MATCH_OK) {
        fprintf(stderr, "xqforge play: %s: %s\n", match_strerror(st), msg);
        rc = 1;
    } else {
        rc = atomic_load(&interrupted) ? 130 : 0;
    }
done:
    englog_free(a->englogs[0]);
    englog_free(a->englogs[1]);
    if (a->m.pgn)
        fclose(a->m.pgn);
    openings_free(&a->openings);
    free(a);
    return rc;
}
