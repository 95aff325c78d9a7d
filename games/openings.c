// SPDX-License-Identifier: MIT
#include "openings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "pgn_read.h"
#include "rng.h"
#include "files.h"

const char *openings_format_name(OpeningsFormat f)
{
    static const char *const names[OPENINGS_FORMAT_NB] = {"epd", "pgn"};
    return (unsigned)f < OPENINGS_FORMAT_NB ? names[f] : "unknown";
}

bool openings_format_parse(const char *name, OpeningsFormat *out)
{
    for (int f = 0; f < OPENINGS_FORMAT_NB; f++)
        if (!strcmp(name, openings_format_name((OpeningsFormat)f)))
            return *out = (OpeningsFormat)f, true;
    return false;
}

const char *openings_strerror(OpeningsStatus st)
{
    switch (st) {
    case OPENINGS_OK: return "no error";
    case OPENINGS_ERR_IO: return "cannot read the openings file";
    case OPENINGS_ERR_EMPTY: return "no valid opening position";
    case OPENINGS_ERR_NOMEM: return "out of memory";
    case OPENINGS_ERR_PGN: return "a PGN file read as EPD (give format=pgn)";
    default: return "unknown openings status";
    }
}

/// Plays the `moves` part of a line on b, recording them in out.
/// Each move is parsed against the position it is played in (move_parse_legal), so an opening
/// never holds an illegal move, and the first bad one is named with its number.
static bool parse_moves(Board *b, char *rest, Opening *out, char *why, size_t why_len)
{
    char *save;
    for (char *t = strtok_r(rest, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        Move m;
        if (out->move_count == OPENING_MAX_MOVES) {
            snprintf(why, why_len, "more than %d opening moves", OPENING_MAX_MOVES);
            return false;
        }
        MoveTextStatus st = move_parse_legal(b, t, 0, &m);
        if (st != MOVE_TEXT_OK) {
            snprintf(why, why_len, "opening move %d '%.12s': %s", out->move_count + 1, t,
                     move_text_strerror(st));
            return false;
        }
        board_make_move(b, m);
        out->moves[out->move_count++] = m;
    }
    return true;
}

bool openings_parse_line(const char *line, Opening *out, char *why, size_t why_len)
{
    char buf[OPENINGS_LINE_MAX];
    if (snprintf(buf, sizeof buf, "%s", line) >= (int)sizeof buf) {
        snprintf(why, why_len, "line too long");
        return false;
    }
    out->move_count = 0;
    // Split off "moves ..." (a standalone word), then read the position part: EPD is board
    // side castling ep [opcodes...]; FEN adds two counters; `startpos` is the start position.
    char *moves = NULL;
    // Only "moves" as a word of its own counts, not as part of a longer token.
    for (char *p = buf; (p = strstr(p, "moves")) != NULL; p += 5) {
        bool word_start = p == buf || isspace((unsigned char)p[-1]);
        bool word_end = p[5] == '\0' || isspace((unsigned char)p[5]);
        if (word_start && word_end) {
            *p = '\0';
            moves = p + 5;
            break;
        }
    }
    // At most the six FEN fields are kept; anything after them on the line is ignored.
    char tok[6][128];
    int n = 0;
    const char *p = buf;
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
    char fen[BOARD_FEN_INPUT_MAX];
    if (n >= 1 && strcmp(tok[0], "startpos") == 0) {
        snprintf(fen, sizeof fen, "%s", BOARD_START_FEN);
    } else if (n < 2) {
        snprintf(why, why_len, "expected a FEN, an EPD position or startpos");
        return false;
    } else {
        // Two fields (board and side) are enough, castling and en passant are optional. Fields 5
        // and 6 are FEN's counters only when both are numbers; otherwise the line is EPD and what
        // follows the fourth field is opcodes (ce, ply, c0 of the books this program writes), read
        // over.
        int used = n >= 4 ? 4 : n;
        bool counters = n >= 6 && strspn(tok[4], "0123456789") == strlen(tok[4]) &&
                        strspn(tok[5], "0123456789") == strlen(tok[5]);
        if (counters)
            used = 6;
        size_t off = 0;
        for (int i = 0; i < used; i++) {
            // Fields of up to 127 bytes each can add up to more than a FEN holds.
            int k = snprintf(fen + off, sizeof fen - off, "%s%s", i ? " " : "", tok[i]);
            if (k < 0 || (size_t)k >= sizeof fen - off) {
                snprintf(why, why_len, "position longer than %zu characters", sizeof fen - 1);
                return false;
            }
            off += (size_t)k;
        }
    }
    Board *b = malloc(sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    bool ok = board_set_fen(b, fen, why, why_len) == FEN_OK;
    if (ok)
        // The board's own FEN, not the line's text: one spelling per position, whatever the file
        // wrote.
        board_fen(b, out->fen, sizeof out->fen);
    if (ok && moves)
        ok = parse_moves(b, moves, out, why, why_len);
    free(b);
    return ok;
}

/// Appends one opening, doubling the array from 256 (a file's size is not known in advance).
static OpeningsStatus push(Openings *o, int *cap, const Opening *op)
{
    if (o->count == *cap) {
        int ncap = *cap ? *cap * 2 : 256;
        void *grown = realloc(o->items, (size_t)ncap * sizeof *o->items);
        if (!grown)
            return OPENINGS_ERR_NOMEM;
        o->items = grown;
        *cap = ncap;
    }
    o->items[o->count++] = *op;
    return OPENINGS_OK;
}

// The default set first: openings_load_default and the builtin list rely on that order.
static const OpeningsBuiltin BUILTINS[] = {
    {"balanced", openings_default_lines, &openings_default_count,
     "balanced openings (within +-50 cp), the default"},
    {"unbalanced", openings_unbalanced_lines, &openings_unbalanced_count,
     "unbalanced openings (side to move +60..150 cp), opt-in"},
};

const OpeningsBuiltin *openings_builtins(int *n)
{
    *n = (int)(sizeof BUILTINS / sizeof BUILTINS[0]);
    return BUILTINS;
}

const OpeningsBuiltin *openings_builtin_find(const char *spec)
{
    size_t plen = strlen(OPENINGS_BUILTIN_PREFIX);
    const char *name = strncmp(spec, OPENINGS_BUILTIN_PREFIX, plen) ? spec : spec + plen;
    for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (!strcmp(name, BUILTINS[i].name))
            return &BUILTINS[i];
    return NULL;
}

uint64_t openings_builtin_hash(const OpeningsBuiltin *b)
{
    // The hash of the set as a file would hold it, one line each: a run's identity changes when
    // the embedded lines do, and --resume refuses a run begun with other openings.
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a over the lines, each ended by a newline
    for (int i = 0; i < *b->count; i++)
        for (const char *p = b->lines[i];; p++) {
            h = (h ^ (unsigned char)(*p ? *p : '\n')) * 0x100000001b3ull;
            if (!*p)
                break;
        }
    return h;
}

/// The openings of a PGN file: each game's start position and first plies moves.
static OpeningsStatus load_pgn(Openings *o, FILE *f, const char *path, int plies, FILE *warn,
                               int *bad)
{
    PgnText *g = malloc(sizeof *g);
    Board *b = malloc(sizeof *b);
    int cap = 0, lineno = 0, got;
    char gwhy[256];
    OpeningsStatus st = g && b ? OPENINGS_OK : OPENINGS_ERR_NOMEM;
    while (st == OPENINGS_OK && o->count < OPENINGS_MAX &&
           (got = pgn_read_text(f, g, &lineno, gwhy, sizeof gwhy)) != 0) {
        Opening op = {.move_count = 0};
        PgnReplay r;
        if (got > 0 && pgn_text_replay_moves(g, PGN_RANKS_AUTO, b, &r, op.moves, plies)) {
            // The moves past the opening's may be wrong: only the first plies must be legal.
            op.move_count = r.plies < plies ? r.plies : plies;
            if (r.why[0] && r.plies < plies && r.plies < g->ply_count)
                snprintf(gwhy, sizeof gwhy, "line %d: move %d %s", g->move_line[r.plies],
                         r.plies + 1, r.why);
            else
                got = 2; // read, and its opening is legal
        } else if (got > 0) {
            snprintf(gwhy, sizeof gwhy, "line %d: %s", g->first_line, r.why);
        }
        if (got != 2) {
            if (warn)
                fprintf(warn, "%s: %s, skipped\n", path, gwhy);
            (*bad)++;
            continue;
        }
        // The start position as the board writes it: one spelling per position.
        board_set_fen(b, g->fen[0] ? g->fen : BOARD_START_FEN, NULL, 0);
        board_fen(b, op.fen, sizeof op.fen);
        st = push(o, &cap, &op);
    }
    free(g);
    free(b);
    return st;
}

/// The EPD/FEN lines of a file.
static OpeningsStatus load_lines(Openings *o, FILE *f, const char *path, FILE *warn, int *bad)
{
    char line[OPENINGS_LINE_MAX];
    int lineno = 0, cap = 0;
    OpeningsStatus st = OPENINGS_OK;
    while (st == OPENINGS_OK && fgets(line, sizeof line, f)) {
        lineno++;
        // A line longer than the buffer is skipped as a whole (the rest of it read over), never
        // parsed in pieces as if it were several lines.
        if (!strchr(line, '\n') && !feof(f)) {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n')
                ;
            if (warn)
                fprintf(warn, "%s:%d: line longer than %d bytes, skipped\n", path, lineno,
                        OPENINGS_LINE_MAX);
            (*bad)++;
            continue;
        }
        const char *p = line + strspn(line, " \t\r\n");
        if (!*p || *p == '#')
            continue;
        Opening op;
        char detail[160];
        if (!openings_parse_line(p, &op, detail, sizeof detail)) {
            // A PGN read as EPD would give a warning for each of its lines: one says why.
            if (*p == '[' && o->count == 0) {
                if (warn)
                    fprintf(warn, "%s:%d: a PGN tag: give format=pgn for a PGN file\n", path,
                            lineno);
                return OPENINGS_ERR_PGN;
            }
            if (warn)
                fprintf(warn, "%s:%d: %s, skipped\n", path, lineno, detail);
            (*bad)++;
            continue;
        }
        // OPENINGS_MAX bounds the memory a huge file can take; the lines past it are not read.
        if (o->count >= OPENINGS_MAX)
            break;
        st = push(o, &cap, &op);
    }
    return st;
}

OpeningsStatus openings_load(Openings *o, const char *path, FILE *warn, char *why, size_t why_len)
{
    return openings_load_as(o, path, OPENINGS_FORMAT_EPD, 0, warn, why, why_len);
}

OpeningsStatus openings_load_as(Openings *o, const char *path, OpeningsFormat fmt, int plies,
                                FILE *warn, char *why, size_t why_len)
{
    o->items = NULL;
    o->count = 0;
    if (!strncmp(path, OPENINGS_BUILTIN_PREFIX, strlen(OPENINGS_BUILTIN_PREFIX))) {
        const OpeningsBuiltin *b = openings_builtin_find(path);
        OpeningsStatus st = b ? openings_load_builtin(o, b) : OPENINGS_ERR_IO;
        if (st != OPENINGS_OK)
            snprintf(why, why_len, "%s: %s", path,
                     b ? openings_strerror(st)
                       : "no such embedded set (builtin:balanced or builtin:unbalanced)");
        return st;
    }
    FILE *f = files_open_regular(path);
    if (!f) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return OPENINGS_ERR_IO;
    }
    int bad = 0;
    if (plies <= 0 || plies > OPENING_MAX_MOVES)
        plies = OPENING_MAX_MOVES;
    OpeningsStatus st = fmt == OPENINGS_FORMAT_PGN ? load_pgn(o, f, path, plies, warn, &bad)
                                                   : load_lines(o, f, path, warn, &bad);
    bool io_error = ferror(f);
    fclose(f);
    if (st == OPENINGS_OK && io_error)
        st = OPENINGS_ERR_IO;
    if (st == OPENINGS_OK && o->count == 0)
        st = OPENINGS_ERR_EMPTY;
    if (st != OPENINGS_OK) {
        snprintf(why, why_len, "%s: %s (%d bad %s)", path, openings_strerror(st), bad,
                 fmt == OPENINGS_FORMAT_PGN ? "games" : "lines");
        openings_free(o);
    }
    // An EPD line's moves past plies are left out (a PGN's were never taken).
    for (int i = 0; i < o->count; i++)
        if (o->items[i].move_count > plies)
            o->items[i].move_count = plies;
    return st;
}

OpeningsStatus openings_load_builtin(Openings *o, const OpeningsBuiltin *b)
{
    o->items = malloc((size_t)*b->count * sizeof *o->items);
    o->count = 0;
    if (!o->items)
        return OPENINGS_ERR_NOMEM;
    for (int i = 0; i < *b->count; i++) {
        char why[160];
        if (!openings_parse_line(b->lines[i], &o->items[o->count], why, sizeof why))
            continue; // cannot happen: the tests parse every embedded line
        o->count++;
    }
    if (o->count == 0)
        openings_free(o);
    return o->count ? OPENINGS_OK : OPENINGS_ERR_EMPTY;
}

OpeningsStatus openings_load_default(Openings *o) { return openings_load_builtin(o, &BUILTINS[0]); }

void openings_free(Openings *o)
{
    free(o->items);
    o->items = NULL;
    o->count = 0;
}

int openings_pick(const Openings *o, uint64_t pair, bool random, uint64_t seed, int start)
{
    // Pair i plays opening i (from start), cycling through the book: a function of the pair alone,
    // so that any rank, thread or resumed run gives a pair the same opening.
    uint64_t i = pair + (uint64_t)(start > 0 ? start : 0);
    if (!random)
        return (int)(i % (uint64_t)o->count);
    // A seeded shuffle per pass over the book: each pass visits every opening once.
    uint64_t pass = i / (uint64_t)o->count, k = i % (uint64_t)o->count;
    Rng r;
    rng_seed(&r, seed ^ (pass * 0x9E3779B97F4A7C15ull));
    // Fisher-Yates on the fly would need the whole permutation; an affine map modulo n
    // with a multiplier coprime to n is a cheap permutation.
    // a * k stays below n^2 <= OPENINGS_MAX^2, far from overflow. The search below moves a through
    // 1..n-1 until gcd(a, n) = 1, which a = 1 always meets, so it ends.
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
