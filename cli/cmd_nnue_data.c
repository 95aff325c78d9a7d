// SPDX-License-Identifier: MIT
// xqforge nnue export / info: a positions file (.xqp, tuning/posdata.h) as the plain text
// Stockfish-family trainers read, and its header, counts and checks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "commands.h"
#include "keyset.h"
#include "move.h"
#include "posdata.h"
#include "psv.h"

static void export_usage(FILE *out)
{
    fprintf(out, "usage: xqforge nnue export FILE.xqp [-o OUT] [--format text|bin]\n\n"
                 "Writes every record of a positions file (checked first: header, every block's\n"
                 "checksum, every board) as the plain text of Stockfish-family trainers:\n"
                 "  fen <FEN>\n"
                 "  move <best move, e.g. h2e2>\n"
                 "  score <centipawns, side to move>\n"
                 "  ply <plies from the game's start>\n"
                 "  result <1 win, 0 draw, -1 loss, for the side to move>\n"
                 "  e\n"
                 "or, with --format bin, as Fairy-Stockfish's training data (72-byte\n"
                 "PackedSfenValue records for xiangqi, as its variant-nnue-tools read them:\n"
                 "tuning/psv.h).\n\n"
                 "  -o OUT          output file (default: standard output)\n"
                 "  --format F      text (default) or bin\n"
                 "Exit status: 0 written, 1 cannot write, 2 bad usage or a damaged file.\n");
}

static void info_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge nnue info FILE.xqp\n\n"
            "Checks a positions file (header, every block's checksum, every board) and prints\n"
            "its format, record count, results, scores, plies, repeated positions and the\n"
            "positions in check or with a capture for best move (datagen skips both by default).\n"
            "Exit status: 0 a good file, 2 bad usage or a damaged file (the reason printed).\n");
}

/// Reads and checks the whole file: blocks by posdata_read_file, boards by posdata_decode.
static int load_checked(const char *cmd, const char *path, uint8_t **recs, uint64_t *n)
{
    char why[512];
    PosdataStatus st = posdata_read_file(path, 0, 1, recs, n, NULL, why, sizeof why);
    if (st != POSDATA_OK) {
        fprintf(stderr, "xqforge nnue %s: %s: %s\n", cmd, posdata_strerror(st), why);
        return st == POSDATA_ERR_NOMEM ? 1 : EXIT_USAGE;
    }
    for (uint64_t i = 0; i < *n; i++) {
        PosRecord r;
        if (posdata_decode(*recs + i * POSDATA_RECORD, &r, why, sizeof why) != POSDATA_OK) {
            fprintf(stderr, "xqforge nnue %s: %s: record %llu: %s\n", cmd, path,
                    (unsigned long long)i, why);
            free(*recs);
            *recs = NULL;
            return EXIT_USAGE;
        }
    }
    return 0;
}

/// One record as the trainer's text; the result turned to the side to move's view.
static void export_record(FILE *out, const PosRecord *r)
{
    char fen[BOARD_FEN_MAX], mv[MOVE_TEXT_MAX];
    board_fen(&r->board, fen, sizeof fen);
    move_text(r->move, 0, mv);
    double stm = r->board.side == RED ? r->red_result : 1 - r->red_result;
    fprintf(out, "fen %s\nmove %s\nscore %d\nply %d\nresult %d\ne\n", fen, mv, r->score, r->ply,
            stm == 1   ? 1
            : stm == 0 ? -1
                       : 0);
}

static int nnue_export(int argc, char **argv)
{
    const char *in = NULL, *outp = NULL;
    bool bin = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            export_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            outp = argv[++i];
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "text") && strcmp(f, "bin")) {
                fprintf(stderr, "xqforge nnue export: --format %s: expected text or bin\n", f);
                return EXIT_USAGE;
            }
            bin = !strcmp(f, "bin");
        } else if (argv[i][0] != '-' && !in) {
            in = argv[i];
        } else {
            fprintf(stderr, "xqforge nnue export: unexpected argument '%s'\n", argv[i]);
            export_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!in) {
        export_usage(stderr);
        return EXIT_USAGE;
    }
    board_init();
    uint8_t *recs = NULL;
    uint64_t n = 0;
    int rc = load_checked("export", in, &recs, &n);
    if (rc)
        return rc;
    FILE *out = outp ? fopen(outp, bin ? "wb" : "w") : stdout;
    if (!out) {
        fprintf(stderr, "xqforge nnue export: cannot write %s\n", outp);
        free(recs);
        return 1;
    }
    for (uint64_t i = 0; i < n; i++) {
        PosRecord r;
        posdata_decode(recs + i * POSDATA_RECORD, &r, NULL, 0);
        if (bin) {
            uint8_t psv[PSV_RECORD];
            psv_encode(&r, psv);
            fwrite(psv, 1, sizeof psv, out);
        } else {
            export_record(out, &r);
        }
    }
    bool ok = !ferror(out) && fflush(out) == 0;
    if (outp && fclose(out) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "xqforge nnue export: cannot write %s\n", outp ? outp : "the output");
        rc = 1;
    } else if (outp) {
        printf("%s: %llu positions\n", outp, (unsigned long long)n);
    }
    free(recs);
    return rc;
}

typedef struct {
    uint64_t results[3]; // Red loses, draws, wins
    uint64_t red_to_move, repeated;
    uint64_t in_check, captures; // what datagen's default filters skip

    int64_t score_sum, abs_sum;
    int score_min, score_max, ply_min, ply_max, depth_min, depth_max;
} Info;

static void info_add(Info *s, const PosRecord *r, uint64_t i)
{
    s->results[r->red_result == 0 ? 0 : r->red_result == 1 ? 2 : 1]++;
    s->red_to_move += r->board.side == RED;
    s->in_check += board_in_check(&r->board);
    s->captures += board_piece(&r->board, move_to(r->move)) != NO_PIECE;
    s->score_sum += r->score;
    s->abs_sum += r->score < 0 ? -r->score : r->score;
    if (i == 0) {
        s->score_min = s->score_max = r->score;
        s->ply_min = s->ply_max = r->ply;
        s->depth_min = s->depth_max = r->depth;
    }
#define WIDEN(lo, hi, v) (lo = (v) < lo ? (v) : lo, hi = (v) > hi ? (v) : hi)
    WIDEN(s->score_min, s->score_max, r->score);
    WIDEN(s->ply_min, s->ply_max, r->ply);
    WIDEN(s->depth_min, s->depth_max, r->depth);
#undef WIDEN
}

static int nnue_info(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        info_usage(stdout);
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-') {
        info_usage(stderr);
        return EXIT_USAGE;
    }
    board_init();
    uint8_t *recs = NULL;
    uint64_t n = 0;
    int rc = load_checked("info", argv[1], &recs, &n);
    if (rc)
        return rc;
    KeySet keys;
    if (keyset_init(&keys, (size_t)n) != 0) {
        fprintf(stderr, "xqforge nnue info: out of memory\n");
        free(recs);
        return 1;
    }
    Info s = {0};
    for (uint64_t i = 0; i < n; i++) {
        PosRecord r;
        posdata_decode(recs + i * POSDATA_RECORD, &r, NULL, 0);
        info_add(&s, &r, i);
        s.repeated += keyset_add(&keys, board_compute_key(&r.board)) == 0;
    }
    double d = n ? (double)n : 1;
    printf("%s: positions file (.xqp) version %d, %d-byte records, %d records a block\n"
           "records:   %llu, every block's checksum and every board good\n"
           "results:   Red wins %llu (%.1f%%), draws %llu (%.1f%%), Black wins %llu (%.1f%%)\n"
           "to move:   Red %llu, Black %llu\n"
           "scores:    %d..%d cp (side to move), mean %.1f, mean |score| %.1f\n"
           "plies:     %d..%d; depths %d..%d\n"
           "repeated:  %llu positions (same key as an earlier record)\n"
           "filters:   %llu in check, %llu with a capture for best move\n",
           argv[1], POSDATA_VERSION, POSDATA_RECORD, POSDATA_BLOCK, (unsigned long long)n,
           (unsigned long long)s.results[2], 100 * s.results[2] / d,
           (unsigned long long)s.results[1], 100 * s.results[1] / d,
           (unsigned long long)s.results[0], 100 * s.results[0] / d,
           (unsigned long long)s.red_to_move, (unsigned long long)(n - s.red_to_move), s.score_min,
           s.score_max, s.score_sum / d, s.abs_sum / d, s.ply_min, s.ply_max, s.depth_min,
           s.depth_max, (unsigned long long)s.repeated, (unsigned long long)s.in_check,
           (unsigned long long)s.captures);
    keyset_destroy(&keys);
    free(recs);
    return 0;
}

int cmd_nnue_data(int argc, char **argv)
{
    return !strcmp(argv[0], "export") ? nnue_export(argc, argv) : nnue_info(argc, argv);
}
