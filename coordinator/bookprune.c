// SPDX-License-Identifier: MIT
// xqforge book prune: per-exit tallies from game runs' journals, verdicts, kept lines.
#include "bookprune.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "identity.h"
#include "journal.h"
#include "move.h"
#include "openings.h"
#include "wire.h"
#include "files.h"

const char *bookprune_strerror(BookpruneStatus st)
{
    static const char *const text[BOOKPRUNE_STATUS_NB] = {
        [BOOKPRUNE_OK] = "ok",
        [BOOKPRUNE_ERR_IO] = "I/O error",
        [BOOKPRUNE_ERR_NOMEM] = "out of memory",
        [BOOKPRUNE_ERR_RUN] = "not a run of this book",
    };
    return (unsigned)st < BOOKPRUNE_STATUS_NB ? text[st] : "unknown status";
}

const char *bookprune_verdict_name(PruneVerdict v)
{
    static const char *const names[PRUNE_VERDICT_NB] = {
        [PRUNE_KEPT] = "kept",
        [PRUNE_FEW_GAMES] = "kept_few_games",
        [PRUNE_LOW_DRAW] = "removed_low_draw",
        [PRUNE_HIGH_DRAW] = "removed_high_draw",
    };
    return (unsigned)v < PRUNE_VERDICT_NB ? names[v] : "?";
}

static bool push_line(BookPrune *p, int *cap, const char *text, int line_no)
{
    if (p->count == *cap) {
        int n = *cap ? 2 * *cap : 256;
        char **l = realloc(p->lines, (size_t)n * sizeof *l);
        if (l)
            p->lines = l;
        int *no = realloc(p->line_no, (size_t)n * sizeof *no);
        if (no)
            p->line_no = no;
        if (!l || !no)
            return false;
        *cap = n;
    }
    size_t len = strcspn(text, "\r\n");
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, text, len);
    copy[len] = '\0';
    p->lines[p->count] = copy;
    p->line_no[p->count++] = line_no;
    return true;
}

/// The lines openings_load keeps, in its order (games/openings.c load_lines): lines longer
/// than the buffer, blank lines, '#' comments and lines that do not parse are skipped.
static BookpruneStatus read_lines(BookPrune *p, FILE *f)
{
    char line[OPENINGS_LINE_MAX];
    int line_no = 0, cap = 0;
    while (fgets(line, sizeof line, f)) {
        line_no++;
        if (!strchr(line, '\n') && !feof(f)) {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
            continue;
        }
        const char *s = line + strspn(line, " \t\r\n");
        Opening op;
        char detail[160];
        if (!*s || *s == '#' || !openings_parse_line(s, &op, detail, sizeof detail))
            continue;
        if (p->count >= OPENINGS_MAX)
            break;
        if (!push_line(p, &cap, s, line_no))
            return BOOKPRUNE_ERR_NOMEM;
    }
    return ferror(f) ? BOOKPRUNE_ERR_IO : BOOKPRUNE_OK;
}

BookpruneStatus bookprune_open(BookPrune *p, const char *book, char *why, size_t why_len)
{
    memset(p, 0, sizeof *p);
    Identity id;
    identity_init(&id);
    if (identity_add_file(&id, "openings", book) != IDENTITY_OK) {
        identity_destroy(&id);
        snprintf(why, why_len, "%s: out of memory", book);
        return BOOKPRUNE_ERR_NOMEM;
    }
    snprintf(p->hash, sizeof p->hash, "%s", identity_get(&id, "openings"));
    identity_destroy(&id);
    FILE *f = files_open_regular(book);
    if (!f) {
        snprintf(why, why_len, "%s: %s", book, strerror(errno));
        return BOOKPRUNE_ERR_IO;
    }
    BookpruneStatus st = read_lines(p, f);
    fclose(f);
    if (st == BOOKPRUNE_OK && p->count == 0) {
        snprintf(why, why_len, "%s: no opening lines", book);
        st = BOOKPRUNE_ERR_IO;
    } else if (st != BOOKPRUNE_OK)
        snprintf(why, why_len, "%s: %s", book, bookprune_strerror(st));
    if (st == BOOKPRUNE_OK && !(p->exits = calloc((size_t)p->count, sizeof *p->exits))) {
        snprintf(why, why_len, "%s: out of memory", book);
        st = BOOKPRUNE_ERR_NOMEM;
    }
    if (st != BOOKPRUNE_OK)
        bookprune_close(p);
    return st;
}

void bookprune_close(BookPrune *p)
{
    for (int i = 0; i < p->count; i++)
        free(p->lines[i]);
    free(p->lines);
    free(p->line_no);
    free(p->exits);
    memset(p, 0, sizeof *p);
}

typedef struct {
    BookPrune *p;
    char *why;
    size_t why_len;
} ScanCtx;

int bookprune_tally_pair(PruneExit *exits, const WirePair *pair)
{
    PruneExit *e = &exits[pair->opening];
    int n = 0;
    for (int g = 0; g < pair->game_count; g++) {
        uint8_t o = pair->games[g].outcome;
        if (o == WIRE_OUTCOME_NONE)
            continue;
        n++;
        e->games++;
        e->red_wins += o == WIRE_OUTCOME_RED_WINS;
        e->black_wins += o == WIRE_OUTCOME_BLACK_WINS;
        e->draws += o == WIRE_OUTCOME_DRAW;
    }
    return n;
}

/// One journal record: a RESULT message's pairs tallied under their opening; a kind's own
/// records (COORD_KEY_EXTRA, bit 63) and other messages are not games and are passed over.
static int scan_record(void *vctx, uint64_t key, const void *payload, size_t len)
{
    ScanCtx *c = vctx;
    if (key >> 63)
        return 0;
    WireMessage m;
    char why[256] = "";
    if (wire_unpack(payload, len, &m, why, sizeof why) != WIRE_OK) {
        snprintf(c->why, c->why_len, "journal record %llu: %s", (unsigned long long)key, why);
        return 1;
    }
    int rc = 0;
    if (m.kind == WIRE_RESULT) {
        for (int u = 0; u < m.result->unit_count && !rc; u++) {
            const WirePair *pair = &m.result->units[u];
            if (pair->opening >= (uint32_t)c->p->count) {
                snprintf(c->why, c->why_len,
                         "journal record %llu: opening %u, but the book has %d lines",
                         (unsigned long long)key, pair->opening + 1, c->p->count);
                rc = 1;
                break;
            }
            c->p->pairs++;
            c->p->games += (uint64_t)bookprune_tally_pair(c->p->exits, pair);
        }
    }
    wire_message_destroy(&m);
    return rc;
}

/// Whether the journal's identity says it played this book file, as EPD, whole lines.
static BookpruneStatus check_identity(const BookPrune *p, const char *journal, char *why,
                                      size_t why_len)
{
    char *text = malloc(JOURNAL_IDENTITY_MAX + 1);
    size_t len = 0;
    if (!text)
        return BOOKPRUNE_ERR_NOMEM;
    char jwhy[512] = "";
    JournalStatus js =
        journal_peek(journal, text, JOURNAL_IDENTITY_MAX + 1, &len, NULL, jwhy, sizeof jwhy);
    if (js != JOURNAL_OK) {
        snprintf(why, why_len, "%s: %s", journal, jwhy[0] ? jwhy : journal_strerror(js));
        free(text);
        return BOOKPRUNE_ERR_RUN;
    }
    Identity id;
    BookpruneStatus st = BOOKPRUNE_OK;
    if (identity_decode(text, len, &id) != IDENTITY_OK) {
        snprintf(why, why_len, "%s: its experiment cannot be read", journal);
        st = BOOKPRUNE_ERR_RUN;
    } else {
        const char *open = identity_get(&id, "openings"),
                   *read = identity_get(&id, "openings.read");
        if (!open) {
            snprintf(why, why_len, "%s: not a game run (no openings in its experiment)", journal);
            st = BOOKPRUNE_ERR_RUN;
        } else if (strcmp(open, p->hash) != 0) {
            snprintf(why, why_len,
                     "%s: played another book (openings %.100s; this book's content is %s)",
                     journal, open, p->hash);
            st = BOOKPRUNE_ERR_RUN;
        } else if (read) {
            snprintf(why, why_len, "%s: read the book as %.100s (prune reads whole EPD lines)",
                     journal, read);
            st = BOOKPRUNE_ERR_RUN;
        }
    }
    identity_destroy(&id);
    free(text);
    return st;
}

BookpruneStatus bookprune_add_run(BookPrune *p, const char *run, char *why, size_t why_len)
{
    char journal[4096];
    struct stat sb;
    if (stat(run, &sb) != 0) {
        snprintf(why, why_len, "%s: %s", run, strerror(errno));
        return BOOKPRUNE_ERR_RUN;
    }
    if (S_ISDIR(sb.st_mode))
        snprintf(journal, sizeof journal, "%s/journal.xqj", run);
    else
        snprintf(journal, sizeof journal, "%s", run);
    BookpruneStatus st = check_identity(p, journal, why, why_len);
    if (st != BOOKPRUNE_OK)
        return st;
    // Tally into a copy first, so a run that fails half way adds nothing.
    BookPrune tmp = *p;
    tmp.exits = malloc((size_t)p->count * sizeof *tmp.exits);
    if (!tmp.exits)
        return BOOKPRUNE_ERR_NOMEM;
    memcpy(tmp.exits, p->exits, (size_t)p->count * sizeof *tmp.exits);
    char rwhy[512] = "", jwhy[512] = "";
    ScanCtx ctx = {&tmp, rwhy, sizeof rwhy};
    JournalStatus js = journal_scan(journal, scan_record, &ctx, jwhy, sizeof jwhy);
    if (js != JOURNAL_OK) {
        snprintf(why, why_len, "%s: %s", journal,
                 rwhy[0]   ? rwhy
                 : jwhy[0] ? jwhy
                           : journal_strerror(js));
        free(tmp.exits);
        return BOOKPRUNE_ERR_RUN;
    }
    free(p->exits);
    p->exits = tmp.exits;
    p->games = tmp.games;
    p->pairs = tmp.pairs;
    p->runs++;
    return BOOKPRUNE_OK;
}

PruneVerdict bookprune_verdict(const PruneExit *e, uint64_t min_games, double draw_min,
                               double draw_max)
{
    if (e->games == 0 || e->games < min_games)
        return PRUNE_FEW_GAMES;
    double d = (double)e->draws / (double)e->games;
    return d < draw_min ? PRUNE_LOW_DRAW : d > draw_max ? PRUNE_HIGH_DRAW : PRUNE_KEPT;
}

BookpruneStatus bookprune_write(const BookPrune *p, uint64_t min_games, double draw_min,
                                double draw_max, const char *kept_path, const char *table_path,
                                uint64_t counts[PRUNE_VERDICT_NB], char *why, size_t why_len)
{
    memset(counts, 0, PRUNE_VERDICT_NB * sizeof *counts);
    FILE *kept = fopen(kept_path, "w");
    FILE *table = kept ? fopen(table_path, "w") : NULL;
    if (!kept || !table) {
        snprintf(why, why_len, "%s: %s", kept ? table_path : kept_path, strerror(errno));
        if (kept)
            fclose(kept);
        return BOOKPRUNE_ERR_IO;
    }
    fprintf(table, "exit\tline\tgames\tred_wins\tdraws\tblack_wins\tscore\tdraw_rate\tverdict\t"
                   "opening\n");
    for (int i = 0; i < p->count; i++) {
        const PruneExit *e = &p->exits[i];
        PruneVerdict v = bookprune_verdict(e, min_games, draw_min, draw_max);
        counts[v]++;
        if (v == PRUNE_KEPT || v == PRUNE_FEW_GAMES)
            fprintf(kept, "%s\n", p->lines[i]);
        double g = (double)e->games;
        fprintf(table, "%d\t%d\t%llu\t%llu\t%llu\t%llu\t", i + 1, p->line_no[i],
                (unsigned long long)e->games, (unsigned long long)e->red_wins,
                (unsigned long long)e->draws, (unsigned long long)e->black_wins);
        if (e->games)
            fprintf(table, "%.4f\t%.4f", ((double)e->red_wins + 0.5 * (double)e->draws) / g,
                    (double)e->draws / g);
        else
            fprintf(table, "-\t-");
        fprintf(table, "\t%s\t%s\n", bookprune_verdict_name(v), p->lines[i]);
    }
    bool ok = !ferror(kept) && !ferror(table);
    ok = fclose(kept) == 0 && ok;
    ok = fclose(table) == 0 && ok;
    if (!ok) {
        snprintf(why, why_len, "%s: %s", kept_path, strerror(errno));
        return BOOKPRUNE_ERR_IO;
    }
    return BOOKPRUNE_OK;
}

// ---------------------------------------------------------------------------------------
// The game run's report section

typedef struct {
    uint64_t games;
    int exit;
} Played;

/// Most games first, then the lower exit number.
static int by_games(const void *pa, const void *pb)
{
    const Played *a = pa, *b = pb;
    return a->games != b->games ? (a->games > b->games ? -1 : 1)
                                : (a->exit > b->exit) - (a->exit < b->exit);
}

static void opening_text(const Opening *op, char *out, size_t len)
{
    size_t n = (size_t)snprintf(out, len, "%s", op->fen);
    for (int i = 0; i < op->move_count && n + 8 < len; i++) {
        char mv[MOVE_TEXT_MAX];
        move_text(op->moves[i], 0, mv);
        n += (size_t)snprintf(out + n, len - n, "%s%s", i ? " " : " moves ", mv);
    }
}

void bookprune_report(Report *r, const PruneExit *exits, const Openings *o)
{
    const uint64_t min_games = 10;
    const double lo = 0.1, hi = 0.9;
    int played = 0;
    uint64_t counts[PRUNE_VERDICT_NB] = {0};
    Played *order = exits && o->count > 0 ? malloc((size_t)o->count * sizeof *order) : NULL;
    for (int i = 0; order && i < o->count; i++)
        if (exits[i].games) {
            order[played++] = (Played){exits[i].games, i};
            counts[bookprune_verdict(&exits[i], min_games, lo, hi)]++;
        }
    if (played > 1)
        qsort(order, (size_t)played, sizeof *order, by_games);
    json_t *rows = json_array(), *trows = json_array();
    for (int k = 0; rows && trows && k < played && k < REPORT_OPENING_ROWS; k++) {
        const PruneExit *e = &exits[order[k].exit];
        double g = (double)e->games, score = ((double)e->red_wins + 0.5 * (double)e->draws) / g,
               draw = (double)e->draws / g;
        PruneVerdict v = bookprune_verdict(e, min_games, lo, hi);
        json_array_append_new(
            rows,
            json_pack("{s:i, s:I, s:I, s:I, s:I, s:f, s:f, s:s}", "exit", order[k].exit + 1,
                      "games", (json_int_t)e->games, "red_wins", (json_int_t)e->red_wins, "draws",
                      (json_int_t)e->draws, "black_wins", (json_int_t)e->black_wins, "score", score,
                      "draw_rate", draw, "verdict", bookprune_verdict_name(v)));
        if (k >= REPORT_OPENING_TABLE)
            continue;
        char c[5][48], text[BOARD_FEN_MAX + OPENING_MAX_MOVES * 6];
        snprintf(c[0], sizeof c[0], "%d", order[k].exit + 1);
        snprintf(c[1], sizeof c[1], "%llu", (unsigned long long)e->games);
        snprintf(c[2], sizeof c[2], "%.3f", score);
        snprintf(c[3], sizeof c[3], "%.3f", draw);
        snprintf(c[4], sizeof c[4], "%s", bookprune_verdict_name(v));
        opening_text(&o->items[order[k].exit], text, sizeof text);
        json_array_append_new(trows,
                              json_pack("[s, s, s, s, s, s]", c[0], c[1], c[2], c[3], c[4], text));
    }
    free(order);
    report_set(
        r, "openings_played",
        json_pack(
            "{s:i, s:i, s:I, s:[f, f], s:I, s:I, s:I, s:o}", "exits", o->count, "played", played,
            "min_games", (json_int_t)min_games, "draw_window", lo, hi, "would_remove_low_draw",
            (json_int_t)counts[PRUNE_LOW_DRAW], "would_remove_high_draw",
            (json_int_t)counts[PRUNE_HIGH_DRAW], "with_min_games",
            (json_int_t)(counts[PRUNE_KEPT] + counts[PRUNE_LOW_DRAW] + counts[PRUNE_HIGH_DRAW]),
            "rows", rows ? rows : json_null()));
    char title[160];
    snprintf(title, sizeof title,
             "Openings played: %d of %d, most played first (Red's score; book prune removes "
             "draw rates outside %.1f..%.1f after %llu games)",
             played, o->count, lo, hi, (unsigned long long)min_games);
    report_table(r, "openings", title,
                 json_pack("[s, s, s, s, s, s]", "exit", "games", "score (Red)", "draw rate",
                           "verdict", "opening"),
                 trows ? trows : json_array());
}
