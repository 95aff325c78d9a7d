// SPDX-License-Identifier: MIT
#include "openings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

const char *openings_strerror(OpeningsStatus st)
{
    switch (st) {
    case OPENINGS_OK: return "no error";
    case OPENINGS_ERR_IO: return "cannot read the openings file";
    case OPENINGS_ERR_EMPTY: return "no valid opening position";
    case OPENINGS_ERR_NOMEM: return "out of memory";
    default: return "unknown openings status";
    }
}

bool openings_parse_line(const char *line, char fen[BOARD_FEN_MAX], char *why, size_t why_len)
{
    // EPD: board side castling ep [opcodes...]; FEN: the same with two counters. Anything
    // after the fourth field that is not two numbers is taken as EPD opcodes.
    char tok[6][128];
    int n = 0;
    const char *p = line;
    while (n < 6) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " \t\r\n");
        if (len >= sizeof tok[0]) {
            snprintf(why, why_len, "field %d too long", n + 1);
            return false;
        }
        memcpy(tok[n], p, len);
        tok[n][len] = '\0';
        n++;
        p += len;
    }
    if (n < 2) {
        snprintf(why, why_len, "expected at least a board and a side to move");
        return false;
    }
    char buf[BOARD_FEN_INPUT_MAX];
    int used = n >= 4 ? 4 : n;
    bool counters = n >= 6 && strspn(tok[4], "0123456789") == strlen(tok[4]) &&
                    strspn(tok[5], "0123456789") == strlen(tok[5]) &&
                    tok[5][strlen(tok[5]) - 1] != ';';
    if (counters)
        used = 6;
    int off = 0;
    for (int i = 0; i < used; i++)
        off += snprintf(buf + off, sizeof buf - (size_t)off, "%s%s", i ? " " : "", tok[i]);
    Board *b = malloc(sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    FenStatus st = board_set_fen(b, buf, why, why_len);
    if (st == FEN_OK)
        board_fen(b, fen, BOARD_FEN_MAX);
    free(b);
    return st == FEN_OK;
}

static OpeningsStatus push(Openings *o, int *cap, const char *fen)
{
    if (o->count == *cap) {
        int ncap = *cap ? *cap * 2 : 256;
        void *grown = realloc(o->fens, (size_t)ncap * sizeof *o->fens);
        if (!grown)
            return OPENINGS_ERR_NOMEM;
        o->fens = grown;
        *cap = ncap;
    }
    snprintf(o->fens[o->count++], BOARD_FEN_MAX, "%s", fen);
    return OPENINGS_OK;
}

OpeningsStatus openings_load(Openings *o, const char *path, FILE *warn, char *why, size_t why_len)
{
    o->fens = NULL;
    o->count = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return OPENINGS_ERR_IO;
    }
    char line[OPENINGS_LINE_MAX];
    int lineno = 0, cap = 0, bad = 0;
    OpeningsStatus st = OPENINGS_OK;
    while (st == OPENINGS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
            if (warn)
                fprintf(warn, "%s:%d: line longer than %d bytes, skipped\n", path, lineno,
                        OPENINGS_LINE_MAX);
            bad++;
            continue;
        }
        const char *p = line + strspn(line, " \t\r\n");
        if (!*p || *p == '#')
            continue;
        char fen[BOARD_FEN_MAX], detail[160];
        if (!openings_parse_line(p, fen, detail, sizeof detail)) {
            if (warn)
                fprintf(warn, "%s:%d: %s, skipped\n", path, lineno, detail);
            bad++;
            continue;
        }
        if (o->count >= OPENINGS_MAX)
            break;
        st = push(o, &cap, fen);
    }
    bool io_error = ferror(f);
    fclose(f);
    if (st == OPENINGS_OK && io_error)
        st = OPENINGS_ERR_IO;
    if (st == OPENINGS_OK && o->count == 0)
        st = OPENINGS_ERR_EMPTY;
    if (st != OPENINGS_OK) {
        snprintf(why, why_len, "%s: %s (%d bad lines)", path, openings_strerror(st), bad);
        openings_free(o);
    }
    return st;
}

OpeningsStatus openings_load_default(Openings *o)
{
    o->fens = malloc((size_t)openings_default_count * sizeof *o->fens);
    o->count = 0;
    if (!o->fens)
        return OPENINGS_ERR_NOMEM;
    for (int i = 0; i < openings_default_count; i++)
        snprintf(o->fens[o->count++], BOARD_FEN_MAX, "%s", openings_default_fens[i]);
    return OPENINGS_OK;
}

void openings_free(Openings *o)
{
    free(o->fens);
    o->fens = NULL;
    o->count = 0;
}

int openings_pick(const Openings *o, uint64_t pair, bool random, uint64_t seed, int start)
{
    uint64_t i = pair + (uint64_t)(start > 0 ? start : 0);
    if (!random)
        return (int)(i % (uint64_t)o->count);
    // A seeded shuffle per pass over the book: each pass visits every opening once.
    uint64_t pass = i / (uint64_t)o->count, k = i % (uint64_t)o->count;
    Rng r;
    rng_seed(&r, seed ^ (pass * 0x9E3779B97F4A7C15ull));
    // Fisher-Yates on the fly would need the whole permutation; an affine map modulo n
    // with a multiplier coprime to n is a cheap permutation.
    uint64_t n = (uint64_t)o->count, a = rng_next(&r) % n, b = rng_next(&r) % n;
    if (a == 0)
        a = 1;
    while (n > 1) {
        uint64_t x = a, y = n;
        while (y) {
            uint64_t t = x % y;
            x = y;
            y = t;
        }
        if (x == 1)
            break;
        a = a % (n - 1) + 1;
    }
    return (int)((a * k + b) % n);
}
