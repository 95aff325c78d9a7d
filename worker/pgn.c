// SPDX-License-Identifier: MIT
#include "pgn.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "move.h"
#include "movegen.h"

const char *pgn_result(Outcome o)
{
    switch (o) {
    case OUTCOME_RED_WINS: return "1-0";
    case OUTCOME_BLACK_WINS: return "0-1";
    case OUTCOME_DRAW: return "1/2-1/2";
    default: return "*";
    }
}

/// A tag value with quotes and backslashes escaped, as PGN requires.
static void put_tag(FILE *out, const char *name, const char *value)
{
    fprintf(out, "[%s \"", name);
    for (const char *p = value ? value : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', out);
        fputc(*p, out);
    }
    fprintf(out, "\"]\n");
}

static void put_comment(FILE *out, const GameMove *m, bool book)
{
    char score[32];
    if (book) {
        fprintf(out, " {book}");
        return;
    }
    if (!m->has_score)
        snprintf(score, sizeof score, "n/a");
    else if (m->mate)
        snprintf(score, sizeof score, "%sM%d", m->score > 0 ? "+" : "-",
                 m->score > 0 ? m->score : -m->score);
    else
        snprintf(score, sizeof score, "%+.2f", m->score / 100.0);
    fprintf(out, " {%s/%d %.3fs}", score, m->depth, m->time_ms / 1000.0);
}

int pgn_write(FILE *out, const GameRecord *rec, const PgnTags *tags)
{
    char date[16] = "????.??.??";
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y.%m.%d", &tm);
    const char *red = rec->names[rec->red], *black = rec->names[1 - rec->red];
    char round[16];
    snprintf(round, sizeof round, "%d", tags->round);
    put_tag(out, "Event", tags->event ? tags->event : "xqforge match");
    put_tag(out, "Site", tags->site ? tags->site : "?");
    put_tag(out, "Date", date);
    put_tag(out, "Round", round);
    put_tag(out, "White", red);
    put_tag(out, "Black", black);
    put_tag(out, "Red", red);
    put_tag(out, "Result", pgn_result(rec->outcome));
    put_tag(out, "FEN", rec->start_fen);
    put_tag(out, "SetUp", "1");
    put_tag(out, "Variant", "xiangqi");
    put_tag(out, "TimeControl", tags->time_control ? tags->time_control : "-");
    if (tags->rules)
        put_tag(out, "Rules", tags->rules);
    char term[GAME_DETAIL_MAX + 64];
    snprintf(term, sizeof term, "%s%s%s", game_termination_name(rec->term),
             rec->detail[0] ? ": " : "", rec->detail);
    put_tag(out, "Termination", term);
    char plies[16];
    snprintf(plies, sizeof plies, "%d", rec->ply_count);
    put_tag(out, "PlyCount", plies);
    fputc('\n', out);

    // Move numbers follow the FEN's: its side to move and full-move counter.
    Board *b = malloc(sizeof *b);
    int fullmove = 1;
    bool black_first = false;
    if (b && board_set_fen(b, rec->start_fen, NULL, 0) == FEN_OK) {
        fullmove = b->fullmove;
        black_first = b->side == BLACK;
    }
    free(b);
    int col = 0;
    for (int i = 0; i < rec->ply_count; i++) {
        bool red_moves = (i % 2 == 0) != black_first;
        if (red_moves)
            col += fprintf(out, "%d. ", fullmove);
        else if (i == 0)
            col += fprintf(out, "%d... ", fullmove);
        char mv[MOVE_TEXT_MAX];
        move_text(rec->moves[i].move, 0, mv);
        col += fprintf(out, "%s", mv);
        put_comment(out, &rec->moves[i], i < rec->book_plies);
        col += 24;
        if (!red_moves)
            fullmove++;
        if (col > 72) {
            fputc('\n', out);
            col = 0;
        } else {
            fputc(' ', out);
        }
    }
    fprintf(out, "%s\n\n", pgn_result(rec->outcome));
    return ferror(out) ? -1 : 0;
}

static Outcome outcome_of(const char *r)
{
    if (strcmp(r, "1-0") == 0)
        return OUTCOME_RED_WINS;
    if (strcmp(r, "0-1") == 0)
        return OUTCOME_BLACK_WINS;
    if (strcmp(r, "1/2-1/2") == 0)
        return OUTCOME_DRAW;
    return OUTCOME_NONE;
}

static bool is_result(const char *t)
{
    return !strcmp(t, "1-0") || !strcmp(t, "0-1") || !strcmp(t, "1/2-1/2") || !strcmp(t, "*");
}

/// Reads `[Name "value"]`; false if the line is not a tag.
static bool parse_tag(const char *line, char *name, size_t nlen, char *value, size_t vlen)
{
    const char *p = line + 1, *q = strchr(p, ' ');
    if (line[0] != '[' || !q || (size_t)(q - p) >= nlen || q[1] != '"')
        return false;
    memcpy(name, p, (size_t)(q - p));
    name[q - p] = '\0';
    size_t n = 0;
    for (p = q + 2; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        if (n + 1 < vlen)
            value[n++] = *p;
    }
    value[n] = '\0';
    return *p == '"';
}

/// Copies src into dst[cap], cut to fit.
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void apply_tag(GameRecord *rec, const char *name, const char *value, Outcome *result)
{
    if (!strcmp(name, "White"))
        copy_cut(rec->names[0], PLAYER_NAME_MAX, value);
    else if (!strcmp(name, "Black"))
        copy_cut(rec->names[1], PLAYER_NAME_MAX, value);
    else if (!strcmp(name, "FEN"))
        copy_cut(rec->start_fen, sizeof rec->start_fen, value);
    else if (!strcmp(name, "Result"))
        *result = outcome_of(value);
    else if (!strcmp(name, "Termination")) {
        for (int t = 0; t < TERM_NB; t++) {
            const char *tn = game_termination_name((Termination)t);
            size_t len = strlen(tn);
            if (!strncmp(value, tn, len) && (value[len] == '\0' || value[len] == ':')) {
                rec->term = (Termination)t;
                const char *d = value + len;
                if (*d == ':')
                    d += d[1] == ' ' ? 2 : 1;
                copy_cut(rec->detail, sizeof rec->detail, d);
            }
        }
    }
}

/// Whether a comment's score (pawns or moves) and time fit the record's integers; false for
/// NaN too (a comment like {+2e10/5 1s} would overflow the conversion).
static bool comment_in_range(double score, double secs)
{
    return score > -1e6 && score < 1e6 && secs >= 0 && secs < 1e9;
}

/// Fills a move's score, depth and time from a `{+0.17/11 0.058s}` comment.
static void apply_comment(GameMove *m, const char *c, bool *book)
{
    *book = strcmp(c, "book") == 0;
    double score, secs;
    int depth;
    if (c[0] == '+' || c[0] == '-') {
        if (c[1] == 'M' && sscanf(c + 2, "%lf/%d %lfs", &score, &depth, &secs) == 3 &&
            comment_in_range(score, secs)) {
            m->mate = true;
            m->has_score = true;
            m->score = (int)(c[0] == '-' ? -score : score);
        } else if (sscanf(c, "%lf/%d %lfs", &score, &depth, &secs) == 3 &&
                   comment_in_range(score, secs)) {
            m->has_score = true;
            m->score = (int)(score * 100 + (score < 0 ? -0.5 : 0.5));
        } else {
            return;
        }
        m->depth = depth;
        m->time_ms = (int64_t)(secs * 1000 + 0.5);
    }
}

/// The reading state of one game: its board, where its moves are, and the first fault.
typedef struct {
    GameRecord *rec;
    Board *b;
    Outcome result;
    bool in_tags, tags_done, in_moves, in_comment, done, bad;
    char comment[256];
    size_t clen;
    int *lineno;
    char *why;
    size_t why_len;
} PgnGame;

/// Records the game's first fault at the current line; reading goes on to the game's end.
__attribute__((format(printf, 2, 3))) static void game_fault(PgnGame *g, const char *fmt, ...)
{
    if (g->bad)
        return;
    g->bad = true;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(g->why, g->why_len, "line %d: %s", *g->lineno, what);
}

/// The first movetext line: the board is set up from the FEN tag (or the start position).
static void moves_begin(PgnGame *g)
{
    g->in_moves = true;
    g->b = malloc(sizeof *g->b);
    GameRecord *rec = g->rec;
    const char *fen = rec->start_fen[0] ? rec->start_fen : BOARD_START_FEN;
    char fen_why[160];
    if (!g->b || board_set_fen(g->b, fen, fen_why, sizeof fen_why) != FEN_OK)
        game_fault(g, "bad FEN tag: %s", g->b ? fen_why : "no memory");
    else
        board_fen(g->b, rec->start_fen, sizeof rec->start_fen);
}

/// The end of a comment: its score and book mark go to the move before it.
static void comment_end(PgnGame *g)
{
    g->comment[g->clen] = '\0';
    g->in_comment = false;
    GameRecord *rec = g->rec;
    if (rec->ply_count > 0 && !g->bad) {
        bool book;
        apply_comment(&rec->moves[rec->ply_count - 1], g->comment, &book);
        if (book && rec->book_plies == rec->ply_count - 1)
            rec->book_plies = rec->ply_count;
    }
}

/// A move in coordinates, made on the game's board.
static void move_token(PgnGame *g, const char *tok)
{
    GameRecord *rec = g->rec;
    if (g->bad)
        return;
    Move m;
    MoveTextStatus st = move_parse_legal(g->b, tok, 0, &m);
    if (st != MOVE_TEXT_OK || rec->ply_count >= GAME_MAX_PLIES ||
        g->b->hist_len >= BOARD_HISTORY_MAX) {
        game_fault(g, "move %d '%s': %s", rec->ply_count + 1, tok,
                   st != MOVE_TEXT_OK ? move_text_strerror(st) : "game too long");
        return;
    }
    board_make_move(g->b, m);
    rec->moves[rec->ply_count++] = (GameMove){m, 0, false, false, 0, 0};
}

/// One movetext token: a result ends the game; a move number ("12." or "12...", possibly
/// glued to its move) is skipped; anything else starting with a digit (a result misspelt,
/// like "1-O" or "2-0") is a fault, never taken for a move number.
static void token(PgnGame *g, const char *tok)
{
    if (is_result(tok)) {
        g->result = outcome_of(tok);
        g->done = true;
        return;
    }
    if (!isdigit((unsigned char)tok[0])) {
        move_token(g, tok);
        return;
    }
    const char *p = tok;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p != '.') {
        game_fault(g, "'%s' is neither a result (1-0, 0-1, 1/2-1/2, *) nor a move number", tok);
        return;
    }
    while (*p == '.')
        p++;
    if (*p)
        move_token(g, p);
}

/// The tokens and comments of one movetext line.
static void movetext_line(PgnGame *g, char *line)
{
    for (char *p = line; *p && !g->done;) {
        if (g->in_comment) {
            char *end = strchr(p, '}');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            if (g->clen + n < sizeof g->comment) {
                memcpy(g->comment + g->clen, p, n);
                g->clen += n;
            }
            if (!end)
                break;
            comment_end(g);
            p = end + 1;
        } else if (isspace((unsigned char)*p)) {
            p++;
        } else if (*p == '{') {
            g->in_comment = true;
            g->clen = 0;
            p++;
        } else {
            char tok[32];
            size_t n = strcspn(p, " \t{");
            snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
            p += n;
            token(g, tok);
        }
    }
}

/// Whether the next line starts the next game: a tag line ('[') after this game's moves, or
/// after its tags and a blank line. It is left unread (one character of push-back, so a pipe
/// works too) for the next call.
static bool next_game_starts(const PgnGame *g, FILE *in)
{
    if (!(g->in_moves ? !g->in_comment : g->tags_done))
        return false;
    int c = getc(in);
    if (c != EOF)
        ungetc(c, in);
    return c == '[';
}

typedef enum { LINE_OK, LINE_EOF, LINE_LONG, LINE_NUL } LineRead;

/// The next line, without its "\n" or "\r\n", into buf[cap]: LINE_EOF at the end of the
/// input; LINE_LONG for a line of cap bytes or more, LINE_NUL for one holding a NUL byte (not
/// text), both read to their end so that the next line reads whole.
static LineRead read_line(FILE *in, char *buf, size_t cap)
{
    size_t n = 0;
    bool nul = false;
    int c;
    while ((c = getc(in)) != EOF && c != '\n') {
        nul |= c == '\0';
        if (n + 1 < cap)
            buf[n] = (char)c;
        n++;
    }
    if (c == EOF && n == 0)
        return LINE_EOF;
    if (n + 1 >= cap)
        return LINE_LONG;
    buf[n] = '\0';
    if (n && buf[n - 1] == '\r')
        buf[n - 1] = '\0';
    return nul ? LINE_NUL : LINE_OK;
}

int pgn_read(FILE *in, GameRecord *rec, int *lineno, char *why, size_t why_len)
{
    char line[PGN_LINE_MAX];
    memset(rec, 0, offsetof(GameRecord, moves));
    rec->red = 0;
    PgnGame g = {
        .rec = rec, .result = OUTCOME_NONE, .lineno = lineno, .why = why, .why_len = why_len};
    // A game ends at its result, at a blank line after its moves, or where the next begins.
    bool ended = false;
    LineRead lr;
    while (!g.done && !ended && !next_game_starts(&g, in) &&
           (lr = read_line(in, line, sizeof line)) != LINE_EOF) {
        (*lineno)++;
        if (lr == LINE_LONG)
            game_fault(&g, "longer than %d bytes", PGN_LINE_MAX - 2);
        if (lr == LINE_NUL)
            game_fault(&g, "a NUL byte: not a text file");
        if (lr != LINE_OK)
            continue;
        if (!g.in_moves && line[0] == '[') {
            char name[64], value[512];
            if (!parse_tag(line, name, sizeof name, value, sizeof value))
                game_fault(&g, "malformed tag");
            else
                apply_tag(rec, name, value, &g.result);
            g.in_tags = true;
        } else if (line[0] == '\0' && !g.in_comment) {
            g.tags_done = g.in_tags;
            ended = g.in_moves; // a movetext ends at a blank line
        } else {
            if (!g.in_moves)
                moves_begin(&g);
            movetext_line(&g, line);
        }
    }
    free(g.b);
    if (!g.in_tags && !g.in_moves && !g.bad)
        return 0; // only blank lines were left
    if (!g.done)
        game_fault(&g, "%s",
                   g.in_moves ? "game without a result" : "tags without moves or a result");
    rec->outcome = g.result;
    return g.bad ? -1 : 1;
}
