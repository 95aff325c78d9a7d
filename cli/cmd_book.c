// SPDX-License-Identifier: MIT
// xqforge book probe|export: the moves a move book holds for a position (our weighted .xqb or
// ElephantEye's BOOK.DAT), and the export of a .xqb to BOOK.DAT. (Book jobs themselves run
// through `xqforge run`: coordinator/books and worker/work_book.)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "board.h"
#include "bookprune.h"
#include "commands.h"
#include "eebook.h"
#include "move.h"
#include "movebook.h"
#include "openings.h"

static void book_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge book probe [--book FILE] FEN|startpos [moves m1 m2 ...]\n"
            "       xqforge book export BOOK.xqb --format elephanteye -o BOOK.DAT\n"
            "                           [--root FEN|startpos [moves m1 m2 ...]]\n"
            "       xqforge book prune BOOK.epd --from RUNDIR... [--min-games N]\n"
            "                          [--draw MIN,MAX] [-o KEPT.epd] [--table FILE.tsv]\n\n"
            "probe: lists the moves a weighted move book (.xqb, written by a kind = book job)\n"
            "holds for a position: how many book lines played each, and its mean score\n"
            "(centipawns, mover's view). FILE defaults to book.xqb. A FILE named *.dat (any\n"
            "case) is read as ElephantEye's BOOK.DAT: the moves and their weights, found as\n"
            "ElephantEye finds them (the position, else its left-right mirror).\n\n"
            "export: writes a .xqb as ElephantEye's BOOK.DAT (8-byte entries: Zobrist lock,\n"
            "move, weight; README \"Opening books\"), walking the book from the root (the\n"
            "start position unless --root); a move's weight is its line count (at most\n"
            "65535), a position and its mirror share one set of entries.\n\n"
            "prune: reads the journals of game runs that played BOOK.epd (RUNDIR: a run's\n"
            "output directory, or its journal file; a run of another book, by content, is\n"
            "refused) and keeps each exit unless it has at least N games (default 10) and a\n"
            "draw rate outside [MIN, MAX] (default 0.1,0.9). Writes the kept lines to KEPT\n"
            "(default BOOK.pruned.epd) and a table of every exit (games, Red's score, draw\n"
            "rate, verdict) to FILE (default KEPT with .tsv for .epd).\n");
}

/// The position of a FEN/startpos line with its moves played, in *b.
static bool book_position(const char *cmd, const char *line, Board *b)
{
    Opening op;
    char why[256];
    if (!line[0] || !openings_parse_line(line, &op, why, sizeof why)) {
        fprintf(stderr, "xqforge book %s: %s\n", cmd, line[0] ? why : "no position given");
        return false;
    }
    board_set_fen(b, op.fen, NULL, 0);
    for (int i = 0; i < op.move_count; i++)
        board_make_move(b, op.moves[i]);
    return true;
}

static bool name_is_dat(const char *file)
{
    size_t n = strlen(file);
    return n >= 4 && strcasecmp(file + n - 4, ".dat") == 0;
}

static int probe_dat(const char *file, const Board *b)
{
    EebookEntry *e = NULL;
    size_t n = 0;
    char why[512];
    if (eebook_read(file, &e, &n, why, sizeof why) != EEBOOK_OK) {
        fprintf(stderr, "xqforge book probe: %s\n", why);
        return 1;
    }
    EebookMove mv[EEBOOK_PROBE_MAX];
    bool mirrored = false;
    int k = eebook_probe(e, n, b, mv, &mirrored);
    uint32_t l0, l1;
    eebook_locks(b, &l0, &l1);
    uint64_t total = 0;
    for (int i = 0; i < k; i++)
        total += mv[i].weight;
    printf("lock %08x: %d move%s, weight %llu%s\n", l1, k, k == 1 ? "" : "s",
           (unsigned long long)total, mirrored ? " (found as its mirror)" : "");
    for (int i = 0; i < k; i++) {
        char t[MOVE_TEXT_MAX];
        move_text(mv[i].move, 0, t);
        printf("  %-6s weight %6u  %5.1f%%\n", t, mv[i].weight,
               total ? 100.0 * mv[i].weight / (double)total : 0.0);
    }
    free(e);
    return 0;
}

static int probe_xqb(const char *file, const Board *b)
{
    MovebookEntry *e = NULL;
    size_t n = 0, first = 0;
    char why[256];
    uint64_t key = b->key;
    if (movebook_read(file, &e, &n, why, sizeof why) != MOVEBOOK_OK) {
        fprintf(stderr, "xqforge book probe: %s\n", why);
        return 1;
    }
    size_t k = movebook_probe(e, n, key, &first);
    uint64_t total = 0;
    for (size_t i = first; i < first + k; i++)
        total += e[i].count;
    printf("key %016llx: %zu move%s, %llu line%s\n", (unsigned long long)key, k, k == 1 ? "" : "s",
           (unsigned long long)total, total == 1 ? "" : "s");
    for (size_t i = first; i < first + k; i++) {
        char mv[MOVE_TEXT_MAX];
        move_text(e[i].move, 0, mv);
        printf("  %-6s count %8u  %5.1f%%  score %+d\n", mv, e[i].count,
               100.0 * e[i].count / (double)total, e[i].score);
    }
    free(e);
    return 0;
}

static int book_probe(int argc, char **argv)
{
    const char *file = "book.xqb";
    char line[OPENINGS_LINE_MAX] = "";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--book") && i + 1 < argc) {
            file = argv[++i];
            continue;
        }
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "%s%s", n ? " " : "", argv[i]);
    }
    Board *b = malloc(sizeof *b);
    if (!b)
        return 1;
    if (!book_position("probe", line, b)) {
        free(b);
        return EXIT_USAGE;
    }
    int rc = name_is_dat(file) ? probe_dat(file, b) : probe_xqb(file, b);
    free(b);
    return rc;
}

static int book_export(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *format = NULL;
    char root[OPENINGS_LINE_MAX] = "startpos";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--format") && i + 1 < argc)
            format = argv[++i];
        else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--root") && i + 1 < argc) {
            // The root runs to the end of the line (a FEN has spaces, moves follow it).
            root[0] = '\0';
            for (i++; i < argc; i++) {
                size_t n = strlen(root);
                snprintf(root + n, sizeof root - n, "%s%s", n ? " " : "", argv[i]);
            }
        } else if (argv[i][0] != '-' && !in)
            in = argv[i];
        else {
            fprintf(stderr, "xqforge book export: unexpected argument '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!in || !out || !format) {
        fprintf(stderr, "xqforge book export: needs BOOK.xqb, --format elephanteye and -o FILE\n");
        return EXIT_USAGE;
    }
    if (strcmp(format, "elephanteye") != 0) {
        fprintf(stderr, "xqforge book export: unknown format '%s' (known: elephanteye)\n", format);
        return EXIT_USAGE;
    }
    Board *b = malloc(sizeof *b);
    if (!b)
        return 1;
    if (!book_position("export", root, b)) {
        free(b);
        return EXIT_USAGE;
    }
    MovebookEntry *e = NULL;
    size_t n = 0;
    char why[512];
    if (movebook_read(in, &e, &n, why, sizeof why) != MOVEBOOK_OK) {
        fprintf(stderr, "xqforge book export: %s\n", why);
        free(b);
        return 1;
    }
    EebookEntry *dat = NULL;
    size_t dat_n = 0;
    EebookExportStats st;
    EebookStatus rc = eebook_from_movebook(e, n, b, &dat, &dat_n, &st);
    free(b);
    free(e);
    if (rc == EEBOOK_OK)
        rc = eebook_write(out, dat, dat_n, why, sizeof why);
    else
        snprintf(why, sizeof why, "%s", eebook_strerror(rc));
    free(dat);
    if (rc != EEBOOK_OK) {
        fprintf(stderr, "xqforge book export: %s\n", why);
        return 1;
    }
    printf("%s: %zu entries, %zu bytes: %zu positions, %zu of %zu book moves", out, st.entries,
           st.entries * EEBOOK_ENTRY_SIZE, st.positions, st.moves, n);
    printf(" (%zu not reached from the root), %zu weight%s capped at %d\n", st.unreached,
           st.saturated, st.saturated == 1 ? "" : "s", EEBOOK_WEIGHT_MAX);
    return 0;
}

/// "BOOK.epd" -> "BOOK<suffix>" (the extension replaced), into out.
static void path_with(const char *path, const char *suffix, char *out, size_t len)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - path) : (int)strlen(path);
    snprintf(out, len, "%.*s%s", stem, path, suffix);
}

static bool parse_draw(const char *s, double *lo, double *hi)
{
    char *end;
    *lo = strtod(s, &end);
    if (end == s || *end != ',')
        return false;
    const char *t = end + 1;
    *hi = strtod(t, &end);
    return end != t && !*end && *lo >= 0 && *hi <= 1 && *lo <= *hi;
}

static int book_prune(int argc, char **argv)
{
    const char *book = NULL, *kept = NULL, *table = NULL;
    const char **runs = calloc((size_t)argc, sizeof *runs);
    int nruns = 0;
    long min_games = 10;
    double lo = 0.1, hi = 0.9;
    if (!runs)
        return 1;
    int rc = EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--from")) {
            while (i + 1 < argc && argv[i + 1][0] != '-')
                runs[nruns++] = argv[++i];
        } else if (!strcmp(argv[i], "--min-games") && i + 1 < argc) {
            char *end;
            min_games = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || min_games < 0 || min_games > 1000000000) {
                fprintf(stderr, "xqforge book prune: --min-games wants 0..1000000000, not '%s'\n",
                        argv[i]);
                goto out;
            }
        } else if (!strcmp(argv[i], "--draw") && i + 1 < argc) {
            if (!parse_draw(argv[++i], &lo, &hi)) {
                fprintf(stderr,
                        "xqforge book prune: --draw wants MIN,MAX with 0 <= MIN <= MAX <= 1, "
                        "not '%s'\n",
                        argv[i]);
                goto out;
            }
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc)
            kept = argv[++i];
        else if (!strcmp(argv[i], "--table") && i + 1 < argc)
            table = argv[++i];
        else if (argv[i][0] != '-' && !book)
            book = argv[i];
        else {
            fprintf(stderr, "xqforge book prune: unexpected argument '%s'\n", argv[i]);
            goto out;
        }
    }
    if (!book || nruns == 0) {
        fprintf(stderr, "xqforge book prune: needs BOOK.epd and --from RUNDIR...\n");
        goto out;
    }
    char kept_buf[4096], table_buf[4096], why[1024];
    if (!kept) {
        path_with(book, ".pruned.epd", kept_buf, sizeof kept_buf);
        kept = kept_buf;
    }
    if (!table) {
        path_with(kept, ".tsv", table_buf, sizeof table_buf);
        table = table_buf;
    }
    BookPrune p;
    rc = 1;
    if (bookprune_open(&p, book, why, sizeof why) != BOOKPRUNE_OK) {
        fprintf(stderr, "xqforge book prune: %s\n", why);
        goto out;
    }
    for (int r = 0; r < nruns; r++)
        if (bookprune_add_run(&p, runs[r], why, sizeof why) != BOOKPRUNE_OK) {
            fprintf(stderr, "xqforge book prune: %s\n", why);
            bookprune_close(&p);
            goto out;
        }
    uint64_t n[PRUNE_VERDICT_NB];
    if (bookprune_write(&p, (uint64_t)min_games, lo, hi, kept, table, n, why, sizeof why) !=
        BOOKPRUNE_OK) {
        fprintf(stderr, "xqforge book prune: %s\n", why);
        bookprune_close(&p);
        goto out;
    }
    printf("%s: %d exits, %llu games (%llu pairs) from %llu run%s\n", book, p.count,
           (unsigned long long)p.games, (unsigned long long)p.pairs, (unsigned long long)p.runs,
           p.runs == 1 ? "" : "s");
    printf("kept %llu (%llu with fewer than %ld games), removed %llu: draw rate below %.2f %llu, "
           "above %.2f %llu\n",
           (unsigned long long)(n[PRUNE_KEPT] + n[PRUNE_FEW_GAMES]),
           (unsigned long long)n[PRUNE_FEW_GAMES], min_games,
           (unsigned long long)(n[PRUNE_LOW_DRAW] + n[PRUNE_HIGH_DRAW]), lo,
           (unsigned long long)n[PRUNE_LOW_DRAW], hi, (unsigned long long)n[PRUNE_HIGH_DRAW]);
    printf("kept lines: %s\ntable: %s\n", kept, table);
    bookprune_close(&p);
    rc = 0;
out:
    free(runs);
    return rc;
}

int cmd_book(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        book_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "probe"))
        return book_probe(argc, argv);
    if (!strcmp(argv[1], "export"))
        return book_export(argc, argv);
    if (!strcmp(argv[1], "prune"))
        return book_prune(argc, argv);
    fprintf(stderr, "xqforge book: unknown subcommand '%s'\n", argv[1]);
    book_usage(stderr);
    return EXIT_USAGE;
}
