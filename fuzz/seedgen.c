// SPDX-License-Identifier: MIT
// Writes the seeds of the binary formats with the program's own writers, so the committed
// corpora (fuzz/corpus/NAME/) start from valid files: fuzz_seedgen DIR. Each seed starts with
// the harness's control byte (1: recompute CRCs) where the harness takes one.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "movebook.h"
#include "movegen.h"
#include "texel.h"
#include "wire.h"

static const char *out_dir;

/// Writes a seed: the control byte (if >= 0) then the bytes.
static void seed(const char *harness, const char *name, int control, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", out_dir, harness);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, harness, name);
    FILE *f = fopen(path, "wb");
    if (!f || (control >= 0 && fputc(control, f) == EOF) || fwrite(data, 1, len, f) != len ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/// A whole file's bytes (malloc'd).
static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0)
        exit(1);
    *len = (size_t)ftell(f);
    rewind(f);
    void *buf = malloc(*len + 1);
    if (!buf || fread(buf, 1, *len, f) != *len)
        exit(1);
    fclose(f);
    return buf;
}

static void seed_file(const char *harness, const char *name, int control, const char *path)
{
    size_t len;
    void *buf = slurp(path, &len);
    seed(harness, name, control, buf, len);
    free(buf);
    unlink(path);
}

static void journal_seeds(const char *tmp)
{
    Journal *j;
    char why[256];
    unlink(tmp);
    static const char identity[] = "kind=match\nfuzz=journal\n"; // fuzz_journal.c's
    JournalIdentity id = {identity, sizeof identity - 1};
    if (journal_open(&j, tmp, &id, NULL, NULL, NULL, why, sizeof why))
        exit(1);
    journal_append(j, 1, "\x93\xa2XQ\x03\x04", 6);
    journal_append(j, 2, "second record", 13);
    journal_append(j, 1, "duplicate", 9);
    journal_close(j);
    seed_file("journal", "three_records", 1, tmp);
}

static void movebook_seeds(const char *tmp)
{
    Movebook *b = movebook_new();
    char why[256];
    movebook_add(b, 0x1234, 7 | 25 << 7, 10);
    movebook_add(b, 0x1234, 7 | 25 << 7, 20);
    movebook_add(b, 0x1234, 1 | 20 << 7, -5);
    movebook_add(b, 0x9999, 64 | 66 << 7, 0);
    if (movebook_write(b, tmp, why, sizeof why))
        exit(1);
    movebook_free(b);
    seed_file("movebook", "four_entries", 1, tmp);
}

static void texel_seeds(const char *tmp)
{
    TexelWriter *w;
    char why[256];
    Board b;
    if (texel_writer_open(tmp, &w, why, sizeof why))
        exit(1);
    board_set_fen(&b, BOARD_START_FEN, why, sizeof why);
    texel_writer_add(w, &b, 0.5, 0);
    MoveList list;
    movegen_legal(&b, &list);
    board_make_move(&b, list.moves[3]);
    texel_writer_add(w, &b, 1.0, 1);
    board_set_fen(&b, "3akab2/9/4b4/p3p1C1p/2p6/6P2/P3P3P/1C2B4/9/2BAKA3 b - - 0 20", why,
                  sizeof why);
    texel_writer_add(w, &b, 0.0, 40);
    if (texel_writer_close(w, why, sizeof why))
        exit(1);
    seed_file("texel", "three_positions", 1, tmp);
}

static void wire_seed(const char *name, const WireMessage *m)
{
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    if (wire_pack(m, &sb) != WIRE_OK)
        exit(1);
    seed("wire", name, -1, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
}

static void wire_seeds(void)
{
    WireMessage m = {.kind = WIRE_HELLO};
    m.hello = (WireHello){
        .rank = 2, .threads = 1, .concurrency = 2, .bench_signature = 668302, .bench_nps = 1000000};
    snprintf(m.hello.hostname, sizeof m.hello.hostname, "node07");
    snprintf(m.hello.version, sizeof m.hello.version, "0.1.0");
    wire_seed("hello", &m);
    m = (WireMessage){.kind = WIRE_REFUSE};
    snprintf(m.refuse.reason, sizeof m.refuse.reason, "bench signature differs");
    wire_seed("refuse", &m);
    m = (WireMessage){.kind = WIRE_REQUEST, .request = {.rank = 1, .units = 4}};
    wire_seed("request", &m);
    m = (WireMessage){.kind = WIRE_WORK};
    m.work.job_id = 77;
    m.work.unit_count = 2;
    m.work.unit_ids[0] = 5;
    m.work.unit_ids[1] = 9;
    m.work.spsa.id = 3;
    m.work.spsa.count = 2;
    m.work.spsa.param[0] = 4;
    m.work.spsa.param[1] = 11;
    m.work.spsa.plus[0] = 105;
    m.work.spsa.minus[0] = 95;
    m.work.spsa.plus[1] = -3;
    m.work.spsa.minus[1] = 3;
    wire_seed("work", &m);
    m = (WireMessage){.kind = WIRE_STOP, .stop = {.code = WIRE_STOP_DONE}};
    snprintf(m.stop.text, sizeof m.stop.text, "SPRT accepted H1");
    wire_seed("stop", &m);
    m = (WireMessage){.kind = WIRE_BYE, .bye = {.rank = 1, .games_played = 40}};
    wire_seed("bye", &m);

    WireResult *r = wire_result_new();
    r->job_id = 77;
    r->rank = 1;
    r->unit_count = 1;
    r->games_played = 2;
    r->nodes = 123456;
    r->play_ms = 999;
    WirePair *p = &r->units[0];
    p->pair_id = 5;
    p->opening = 3;
    p->game_count = 2;
    for (int g = 0; g < 2; g++) {
        WireGame *wg = &p->games[g];
        wg->red = (uint8_t)g;
        wg->outcome = g ? WIRE_OUTCOME_DRAW : WIRE_OUTCOME_RED_WINS;
        wg->term = 1;
        snprintf(wg->start_fen, sizeof wg->start_fen, "%s", BOARD_START_FEN);
        snprintf(wg->detail, sizeof wg->detail, "checkmate");
        wg->ply_count = 2;
        wg->book_plies = 1;
        wg->moves[0] = (WireGameMove){.move = 7 | 25 << 7, .flags = WIRE_MOVE_BOOK};
        wg->moves[1] = (WireGameMove){.move = 64 | 66 << 7,
                                      .flags = WIRE_MOVE_HAS_SCORE,
                                      .depth = 9,
                                      .score = 31,
                                      .time_ms = 250};
    }
    m = (WireMessage){.kind = WIRE_RESULT, .result = r};
    wire_seed("result", &m);
    wire_result_free(r);

    WireBookResult *bk = wire_book_result_new();
    bk->job_id = 8;
    bk->rank = 2;
    bk->unit_id = 12;
    bk->candidate_count = 1;
    bk->candidates_done = 1;
    snprintf(bk->candidates[0].start_fen, sizeof bk->candidates[0].start_fen, "%s",
             BOARD_START_FEN);
    bk->candidates[0].path_len = 1;
    bk->candidates[0].path[0] = (WireBookMove){.move = 7 | 25 << 7, .score = 12};
    bk->candidates[0].score = 15;
    m = (WireMessage){.kind = WIRE_BOOK, .book = bk};
    wire_seed("book", &m);
    wire_book_result_free(bk);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seedgen DIR\n");
        return 2;
    }
    out_dir = argv[1];
    board_init();
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/seedgen.tmp", out_dir);
    journal_seeds(tmp);
    movebook_seeds(tmp);
    texel_seeds(tmp);
    wire_seeds();
    return 0;
}
