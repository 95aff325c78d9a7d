// SPDX-License-Identifier: MIT
#include "pgn_read.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "move.h"
#include "movegen.h"

static bool is_result(const char *t)
{
    return !strcmp(t, "1-0") || !strcmp(t, "0-1") || !strcmp(t, "1/2-1/2") || !strcmp(t, "*");
}

/// Reads `[Name "value"]`; false if the line is not a tag.
// A value longer than vlen is cut but still read to its closing quote; an unclosed value is
// not a tag.
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
    // pgn_read sets red = 0: names[0] is Red, the White tag.
    if (!strcmp(name, "White"))
        copy_cut(rec->names[0], PLAYER_NAME_MAX, value);
    else if (!strcmp(name, "Black"))
        copy_cut(rec->names[1], PLAYER_NAME_MAX, value);
    else if (!strcmp(name, "FEN"))
        copy_cut(rec->start_fen, sizeof rec->start_fen, value);
    else if (!strcmp(name, "Result"))
        *result = pgn_outcome(value);
    else if (!strcmp(name, "TerminationDetails") ||
             (!strcmp(name, "Termination") && rec->term == TERM_NONE)) {
        // Our name in TerminationDetails, or in Termination as we wrote it before; a standard
        // value in Termination ("normal", "adjudication") is no name of ours and changes nothing
        // ("time forfeit" is both, and the same termination).
        for (int t = 0; t < TERM_NB; t++) {
            const char *tn = game_termination_name((Termination)t);
            // A name must be followed by the end or ':' (our "name: detail"), so that one name that
            // begins another cannot be mistaken for it.
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
            // Pawns back to centipawns, rounded half away from zero: pgn_write's %+.2f then reads
            // back exactly.
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

/// Records a game's first fault at line; reading goes on to the game's end.
/// The first fault is the cause (later ones follow from it); going on to the game's end lets
/// the next game be read from its start.
__attribute__((format(printf, 5, 0))) static void fault_at(bool *bad, char *why, size_t why_len,
                                                           int line, const char *fmt, va_list ap)
{
    if (*bad)
        return;
    *bad = true;
    char what[200];
    vsnprintf(what, sizeof what, fmt, ap);
    snprintf(why, why_len, "line %d: %s", line, what);
}

__attribute__((format(printf, 2, 3))) static void game_fault(PgnGame *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_at(&g->bad, g->why, g->why_len, *g->lineno, fmt, ap);
    va_end(ap);
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
        // The board's own FEN, as game_play records it, so game_verify compares like with like.
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
        // Book moves are the opening's first plies: a {book} mark extends book_plies only while
        // every move before it was a book move too.
        if (book && rec->book_plies == rec->ply_count - 1)
            rec->book_plies = rec->ply_count;
    }
}

static bool decode_notation(const Board *b, const char *tok, Move *out);
static bool wxf_shaped(const char *s);

/// A move in coordinates (or, as pgn_write may write them, ICCS or WXF), made on the game's
/// board.
static void move_token(PgnGame *g, const char *tok)
{
    GameRecord *rec = g->rec;
    if (g->bad)
        return;
    Move m;
    MoveTextStatus st = move_parse_legal(g->b, tok, 0, &m);
    if (st != MOVE_TEXT_OK && decode_notation(g->b, tok, &m))
        st = MOVE_TEXT_OK;
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
        g->result = pgn_outcome(tok);
        g->done = true;
        return;
    }
    // A WXF move may begin with a digit (3+.4): a move, not a move number.
    if (!isdigit((unsigned char)tok[0]) || wxf_shaped(tok)) {
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
    // Everything but the moves array: only its first ply_count entries are ever read.
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

// ---- The tolerant reader: any xiangqi PGN, moves kept as text ----

/// The reading state of one game text: where its tags and moves are, and the first fault.
typedef struct {
    PgnText *g;
    bool in_tags, tags_done, in_moves, in_comment, comment_kept, done, bad;
    int rav; // depth of (...) variations, whose moves are not the game's
    char comment[PGN_TEXT_MAX];
    size_t clen;
    int *lineno;
    char *why;
    size_t why_len;
} TextReader;

__attribute__((format(printf, 2, 3))) static void text_fault(TextReader *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fault_at(&t->bad, t->why, t->why_len, *t->lineno, fmt, ap);
    va_end(ap);
}

/// Whether a line holds only white space (other tools leave spaces on "empty" lines).
static bool blank(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return *s == '\0';
}

/// Whether a token has the shape of a WXF move: piece (a letter, a file digit, + or -), its
/// file (a digit, + or -), the direction (+ - . or =) and a digit 1-9. No coordinate, ICCS or
/// SAN move has a direction sign third.
static bool wxf_shaped(const char *s)
{
    return strlen(s) == 4 && strchr("KAEBHNRCPkaebhnrcp+-123456789", s[0]) &&
           strchr("+-123456789", s[1]) && strchr("+-.=", s[2]) && s[3] >= '1' && s[3] <= '9';
}

static void text_tag(TextReader *t, const char *name, const char *value)
{
    PgnText *g = t->g;
    if (!strcmp(name, "White"))
        copy_cut(g->white, sizeof g->white, value);
    else if (!strcmp(name, "Black"))
        copy_cut(g->black, sizeof g->black, value);
    else if (!strcmp(name, "FEN"))
        copy_cut(g->fen, sizeof g->fen, value);
    else if (!strcmp(name, "Variant"))
        copy_cut(g->variant, sizeof g->variant, value);
    else if (!strcmp(name, "Rules"))
        copy_cut(g->rules, sizeof g->rules, value);
    else if (!strcmp(name, "Format"))
        copy_cut(g->format, sizeof g->format, value);
    else if (!strcmp(name, "Result"))
        copy_cut(g->result_tag, sizeof g->result_tag, value);
    else if (!strcmp(name, "Termination"))
        copy_cut(g->termination, sizeof g->termination, value);
    else if (!strcmp(name, "TerminationDetails"))
        copy_cut(g->termination_details, sizeof g->termination_details, value);
    if (!strcmp(name, "Variant") && strcasecmp(value, "xiangqi") != 0)
        text_fault(t, "variant '%s' is not xiangqi", value);
}

/// A comment of the game's main line: the ones after its last move are kept (joined by ", ",
/// as cutechess joins a move's score and the game's end).
static void text_comment(TextReader *t, const char *text)
{
    PgnText *g = t->g;
    size_t n = strlen(g->end_comment);
    if (t->comment_kept && n + 2 < sizeof g->end_comment)
        n += (size_t)snprintf(g->end_comment + n, sizeof g->end_comment - n, ", ");
    while (isspace((unsigned char)*text))
        text++;
    snprintf(g->end_comment + n, sizeof g->end_comment - n, "%s", text);
    n = strlen(g->end_comment);
    while (n && isspace((unsigned char)g->end_comment[n - 1]))
        g->end_comment[--n] = '\0';
    t->comment_kept = true;
}

/// Keeps a main-line move as text: decoding waits for pgn_text_replay, as the rank numbering
/// (0-9 or 1-10) can only be told from the whole game. A move also clears the comments kept so
/// far: only those after the last move say how the game ended.
static void text_move(TextReader *t, const char *tok)
{
    PgnText *g = t->g;
    if (g->ply_count >= GAME_MAX_PLIES) {
        text_fault(t, "more than %d moves", GAME_MAX_PLIES);
        return;
    }
    copy_cut(g->moves[g->ply_count], PGN_TOKEN_MAX, tok);
    g->move_line[g->ply_count++] = *t->lineno;
    g->end_comment[0] = '\0';
    t->comment_kept = false;
}

/// One main-line token: a result ends the game; a move number ("12.", "12...", possibly glued
/// to its move) or an ellipsis is skipped; anything else is kept as a move.
static void text_token(TextReader *t, const char *tok, size_t len)
{
    if (len >= PGN_TOKEN_MAX) {
        text_fault(t, "'%.*s...' is too long for a move", PGN_TOKEN_MAX, tok);
        return;
    }
    char s[PGN_TOKEN_MAX];
    memcpy(s, tok, len);
    s[len] = '\0';
    if (is_result(s)) {
        t->g->outcome = pgn_outcome(s);
        t->done = true;
        return;
    }
    // A WXF move can begin with a digit (3+.4, a soldier of two tandem files; 33.4): it is a
    // move, not a move number.
    if (wxf_shaped(s)) {
        text_move(t, s);
        return;
    }
    const char *p = s;
    if (isdigit((unsigned char)*p)) {
        while (isdigit((unsigned char)*p))
            p++;
        if (*p != '.') {
            text_fault(t, "'%s' is neither a result (1-0, 0-1, 1/2-1/2, *) nor a move number", s);
            return;
        }
    }
    while (*p == '.')
        p++;
    if (*p)
        text_move(t, p);
}

/// The comments, variations, NAGs and tokens of one movetext line.
static void text_movetext(TextReader *t, const char *line)
{
    for (const char *p = line; *p && !t->done;) {
        if (t->in_comment) {
            const char *end = strchr(p, '}');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            size_t room = sizeof t->comment - 1 - t->clen;
            memcpy(t->comment + t->clen, p, n < room ? n : room);
            t->clen += n < room ? n : room;
            if (!end) {
                if (t->clen < sizeof t->comment - 1)
                    t->comment[t->clen++] = ' '; // the comment goes on on the next line
                break;
            }
            t->comment[t->clen] = '\0';
            t->in_comment = false;
            if (t->rav == 0)
                text_comment(t, t->comment);
            p = end + 1;
        } else if (isspace((unsigned char)*p)) {
            p++;
        } else if (*p == '{') {
            t->in_comment = true;
            t->clen = 0;
            p++;
        } else if (*p == ';') {
            if (t->rav == 0)
                text_comment(t, p + 1);
            break;
        } else if (*p == '}') { // a comment's end without its start: nothing to keep
            p++;
            // Variations are skipped by depth: an unmatched ')' never makes the depth negative.
        } else if (*p == '(' || *p == ')') {
            t->rav += *p == '(' ? 1 : t->rav > 0 ? -1 : 0;
            p++;
        } else {
            size_t n = strcspn(p, " \t\r{}();");
            if (t->rav == 0 && *p != '$') // a NAG ($1) annotates, it is no move
                text_token(t, p, n);
            p += n;
        }
    }
}

/// Whether the next line, left unread, is a tag: the next game when this one's moves (or its
/// tags and a blank line) are behind.
static bool text_next_game(const TextReader *t, FILE *in)
{
    if (!(t->in_moves ? !t->in_comment : t->tags_done))
        return false;
    int c = getc(in);
    if (c != EOF)
        ungetc(c, in);
    return c == '[';
}

/// One line of a game text: a tag, an escape, a blank line or movetext. Returns false at the
/// game's end.
static bool text_line(TextReader *t, char *line)
{
    const char *s = line;
    while (!t->in_moves && isspace((unsigned char)*s))
        s++;
    if (!t->in_moves && *s == '[') {
        char name[64], value[512];
        if (!parse_tag(s, name, sizeof name, value, sizeof value))
            text_fault(t, "malformed tag");
        else
            text_tag(t, name, value);
        t->in_tags = true;
    } else if (line[0] == '%' && !t->in_comment) {
        // PGN escape: the rest of the line is for other programs
    } else if (blank(line) && !t->in_comment) {
        t->tags_done = t->in_tags;
        t->rav = 0;
        return !t->in_moves; // a movetext ends at a blank line (an unclosed variation too)
    } else {
        t->in_moves = true;
        text_movetext(t, line);
    }
    return !t->done;
}

// first_line: the game's first line that is not blank or an escape, for the referee's messages.
int pgn_read_text(FILE *in, PgnText *g, int *lineno, char *why, size_t why_len)
{
    char line[PGN_LINE_MAX];
    memset(g, 0, offsetof(PgnText, moves));
    g->outcome = OUTCOME_NONE;
    TextReader t = {.g = g, .lineno = lineno, .why = why, .why_len = why_len};
    LineRead lr;
    bool more = true;
    while (more && !text_next_game(&t, in) && (lr = read_line(in, line, sizeof line)) != LINE_EOF) {
        (*lineno)++;
        if (!g->first_line && (lr != LINE_OK || (!blank(line) && line[0] != '%')))
            g->first_line = *lineno;
        if (lr == LINE_LONG)
            text_fault(&t, "longer than %d bytes", PGN_LINE_MAX - 2);
        if (lr == LINE_NUL)
            text_fault(&t, "a NUL byte: not a text file");
        if (lr != LINE_OK) {
            t.in_moves = true; // a broken line is part of this game, not the start of the next
            continue;
        }
        more = text_line(&t, line);
    }
    if (!t.in_tags && !t.in_moves && !t.bad)
        return 0; // only blank lines were left
    if (!t.done)
        text_fault(&t, "%s",
                   t.in_moves ? "game without a result" : "tags without moves or a result");
    return t.bad ? -1 : 1;
}

// ---- Replaying a game text: coordinate moves in either rank numbering, or SAN ----

typedef enum { DECODE_OK, DECODE_SYNTAX, DECODE_ILLEGAL, DECODE_AMBIGUOUS } Decode;

static const char *decode_strerror(Decode d)
{
    switch (d) {
    case DECODE_SYNTAX: return "not a move (coordinates like h2e2, SAN like Che3, WXF like C2.5)";
    case DECODE_ILLEGAL: return "illegal in this position";
    case DECODE_AMBIGUOUS: return "ambiguous: more than one legal move fits";
    default: return "no error";
    }
}

/// The piece type of a SAN piece letter (cutechess writes B and N, others E and H).
static PieceType letter_type(char c)
{
    switch (c) {
    case 'K': return KING;
    case 'A': return ADVISOR;
    case 'B':
    case 'E': return ELEPHANT;
    case 'N':
    case 'H': return HORSE;
    case 'R': return CHARIOT;
    case 'C': return CANNON;
    case 'P': return SOLDIER;
    default: return NO_PIECE_TYPE;
    }
}

/// Reads a rank at s[*i] (one digit, or "10" in ranks 1-10) into a 0-based rank; -1 if none.
/// -2 for a digit that is no rank in this numbering, so a caller can tell a bad rank from
/// none written.
static int read_rank(const char *s, size_t *i, size_t end, int base)
{
    if (*i >= end || !isdigit((unsigned char)s[*i]))
        return -1;
    int r = s[*i] - '0';
    (*i)++;
    if (base == 1 && r == 1 && *i < end && s[*i] == '0') {
        r = 10;
        (*i)++;
    }
    r -= base;
    return r >= 0 && r < RANK_NB ? r : -2;
}

/// The text of a move with check and annotation marks dropped and ICCS (H2-E2) lower-cased.
static void move_core(const char *tok, char out[PGN_TOKEN_MAX])
{
    copy_cut(out, PGN_TOKEN_MAX, tok);
    size_t n = strlen(out);
    while (n && strchr("+#!?", out[n - 1]))
        out[--n] = '\0';
    // ICCS writes H2-E2 in capitals; lower-cased it reads as coordinates. Only a token made of
    // A-I, digits and '-' qualifies, so a SAN move (a piece letter, lower-case files) is left
    // as it is.
    bool iccs = n >= 5 && out[0] >= 'A' && out[0] <= 'I' && strchr(out, '-');
    for (size_t i = 0; iccs && i < n; i++)
        iccs = out[i] == '-' || isdigit((unsigned char)out[i]) || (out[i] >= 'A' && out[i] <= 'I');
    for (size_t i = 0; iccs && i < n; i++)
        out[i] = (char)tolower((unsigned char)out[i]);
}

/// Whether one text names m in WXF: as pgn_move_wxf writes it, else (when canonical is false)
/// with the piece named by letter and file also for pieces in tandem (A6+5, which some
/// writers keep for advisors and elephants) or by letter and place for tandem soldiers of two
/// files (P+.4 for 3+.4).
static bool wxf_names(const Board *b, Move m, const char *text, bool canonical)
{
    char w[PGN_TOKEN_MAX];
    pgn_move_wxf(b, m, w);
    if (canonical)
        return !strcmp(w, text);
    if (isdigit((unsigned char)w[0]) && (w[1] == '+' || w[1] == '-')) {
        w[0] = 'P';
        if (!strcmp(w, text))
            return true;
    }
    pgn_move_wxf_plain(b, m, w);
    return !strcmp(w, text);
}

/// A WXF move (wxf_shaped): the legal move whose WXF text it is; failing that, the only one it
/// names in a looser spelling. Piece letters in either case, B and N for E and H, = for '.'.
static Decode decode_wxf(const Board *b, const char *tok, Move *out)
{
    char s[PGN_TOKEN_MAX];
    copy_cut(s, sizeof s, tok);
    s[0] = (char)toupper((unsigned char)s[0]);
    s[0] = s[0] == 'B' ? 'E' : s[0] == 'N' ? 'H' : s[0];
    s[2] = s[2] == '=' ? '.' : s[2];
    MoveList list;
    movegen_legal(b, &list);
    for (int pass = 0; pass < 2; pass++) {
        int found = 0;
        for (int k = 0; k < list.count; k++) {
            if (wxf_names(b, list.moves[k], s, pass == 0)) {
                *out = list.moves[k];
                found++;
            }
        }
        if (found)
            return found == 1 ? DECODE_OK : DECODE_AMBIGUOUS;
    }
    return DECODE_ILLEGAL;
}

/// One move as text: [piece letter][from file][from rank][x or -]<to point>. Without a piece
/// letter a whole from-point makes a coordinate move (any piece), anything less a soldier's
/// SAN move. The move must be the only legal one that fits.
static Decode decode_move(const Board *b, const char *tok, int base, Move *out)
{
    char s[PGN_TOKEN_MAX];
    move_core(tok, s);
    if (wxf_shaped(s))
        return decode_wxf(b, s, out);
    size_t i = 0, end = strlen(s);
    PieceType type = letter_type(s[0]);
    i += type != NO_PIECE_TYPE;
    // The destination: the last point of the text.
    size_t d = end;
    while (d > i && isdigit((unsigned char)s[d - 1]))
        d--;
    if (d == i || d == end || s[d - 1] < 'a' || s[d - 1] > 'i')
        return DECODE_SYNTAX;
    size_t ri = d;
    int to_file = s[d - 1] - 'a', to_rank = read_rank(s, &ri, end, base);
    if (to_rank < 0 || ri != end)
        return DECODE_SYNTAX;
    end = d - 1;
    if (end > i && (s[end - 1] == 'x' || s[end - 1] == '-' || s[end - 1] == ':'))
        end--;
    // The origin, as much of it as is written.
    int from_file = -1, from_rank = -1;
    if (i < end && s[i] >= 'a' && s[i] <= 'i')
        from_file = s[i++] - 'a';
    if (i < end && (from_rank = read_rank(s, &i, end, base)) < -1)
        return DECODE_SYNTAX;
    if (i != end)
        return DECODE_SYNTAX;
    if (type == NO_PIECE_TYPE && (from_file < 0 || from_rank < 0))
        type = SOLDIER;
    // The text is matched against the legal moves, whatever it left out acting as a wildcard: an
    // illegal text never becomes a move, and one that fits two moves is refused as ambiguous.
    MoveList list;
    movegen_legal(b, &list);
    int found = 0;
    Square to = sq_make(to_file, to_rank);
    for (int k = 0; k < list.count; k++) {
        Move m = list.moves[k];
        Square from = move_from(m);
        if (move_to(m) != to || (from_file >= 0 && sq_file(from) != from_file) ||
            (from_rank >= 0 && sq_rank(from) != from_rank) ||
            (type != NO_PIECE_TYPE && piece_type(board_piece(b, from)) != type))
            continue;
        *out = m;
        found++;
    }
    return found == 1 ? DECODE_OK : found ? DECODE_AMBIGUOUS : DECODE_ILLEGAL;
}

/// An ICCS (H2-E2) or WXF (C2.5) move, the notations pgn_write writes besides coordinates;
/// false for any other text (SAN, coordinates in other ranks) and for a move not legal in b.
static bool decode_notation(const Board *b, const char *tok, Move *out)
{
    size_t n = strlen(tok);
    bool iccs = n == 5 && tok[0] >= 'A' && tok[0] <= 'I' && isdigit((unsigned char)tok[1]) &&
                tok[2] == '-' && tok[3] >= 'A' && tok[3] <= 'I' && isdigit((unsigned char)tok[4]);
    return (iccs || wxf_shaped(tok)) && decode_move(b, tok, 0, out) == DECODE_OK;
}

/// Which ranks the moves name outright: 1 if one names rank 10, else 0 if one names rank 0,
/// else -1.
/// A file letter then "10" exists only in ranks 1-10, then "0" only in ranks 0-9.
static int ranks_named(const PgnText *g)
{
    bool zero = false;
    for (int k = 0; k < g->ply_count; k++) {
        char s[PGN_TOKEN_MAX];
        move_core(g->moves[k], s);
        if (wxf_shaped(s))
            continue; // WXF names no rank
        for (const char *p = s; *p; p++) {
            if (*p < 'a' || *p > 'i' || !isdigit((unsigned char)p[1]))
                continue;
            if (p[1] == '1' && p[2] == '0')
                return 1;
            zero |= p[1] == '0';
        }
    }
    return zero ? 0 : -1;
}

/// Makes the game's moves from its start position read in ranks base (0 or 1), keeping the
/// first max in moves (when not NULL).
static void replay_with(const PgnText *g, int base, Board *b, PgnReplay *r, Move *moves, int max)
{
    board_set_fen(b, g->fen[0] ? g->fen : BOARD_START_FEN, NULL, 0); // checked by the caller
    r->plies = 0;
    r->rank_base = base;
    r->why[0] = '\0';
    for (; r->plies < g->ply_count; r->plies++) {
        Move m;
        Decode d = decode_move(b, g->moves[r->plies], base, &m);
        if (d != DECODE_OK) {
            snprintf(r->why, sizeof r->why, "'%s' (ranks %s): %s", g->moves[r->plies],
                     base ? "1-10" : "0-9", decode_strerror(d));
            return;
        }
        if (moves && r->plies < max)
            moves[r->plies] = m;
        board_make_move(b, m);
    }
}

bool pgn_text_replay(const PgnText *g, int rank_base, Board *b, PgnReplay *r)
{
    return pgn_text_replay_moves(g, rank_base, b, r, NULL, 0);
}

bool pgn_text_replay_moves(const PgnText *g, int rank_base, Board *b, PgnReplay *r, Move *moves,
                           int max)
{
    char why[160];
    if (board_set_fen(b, g->fen[0] ? g->fen : BOARD_START_FEN, why, sizeof why) != FEN_OK) {
        r->plies = 0;
        r->rank_base = rank_base > 0;
        snprintf(r->why, sizeof r->why, "bad FEN: %s", why);
        return false;
    }
    // ICCS is in ranks 0-9 by definition (WXF names none): no guessing for XQBase's games.
    bool xqbase = !strcasecmp(g->format, "ICCS") || !strcasecmp(g->format, "WXF");
    int base = rank_base >= 0 ? rank_base : xqbase ? 0 : ranks_named(g);
    replay_with(g, base > 0, b, r, moves, max);
    if (base >= 0 || !r->why[0])
        return true;
    // Nothing names the ranks and ranks 0-9 fail: ranks 1-10 if they go further.
    PgnReplay one;
    replay_with(g, 1, b, &one, moves, max);
    if (!one.why[0] || one.plies > r->plies)
        *r = one;
    else
        replay_with(g, 0, b, r, moves, max);
    return true;
}

// ---- How a game says it ended ----

/// Whether text holds word, ignoring case.
/// A substring test, not a whole-word one: "resigns" and "resignation" both hold "resign".
static bool has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, word, n) == 0)
            return true;
    return false;
}

/// Classifies one text (up to its first ':'): our rule and termination names, the PGN
/// standard's and cutechess's Termination values, cutechess's and fastchess's descriptions.
static void classify_end(PgnEnd *e, const char *text)
{
    char head[PGN_TEXT_MAX];
    copy_cut(head, sizeof head, text);
    head[strcspn(head, ":")] = '\0';
    for (int r = END_NONE + 1; r < END_REASON_NB; r++) {
        if (has_word(head, rules_end_name((EndReason)r))) {
            *e = (PgnEnd){PGN_END_RULE, (EndReason)r, PGN_NEEDS_ANY, ""};
            return;
        }
    }
    // First match wins, so each phrase comes before any shorter one it contains ("draw
    // adjudication" and "wins by adjudication" before "adjudication").
    static const struct {
        const char *word;
        PgnEndKind kind;
        EndReason rule;
        PgnEndNeeds needs;
    } words[] = {
        {"mates", PGN_END_RULE, END_CHECKMATE, PGN_NEEDS_DECISIVE},
        {"fifty move", PGN_END_RULE, END_MOVE_RULE, PGN_NEEDS_DRAW},
        {"50-move", PGN_END_RULE, END_MOVE_RULE, PGN_NEEDS_DRAW},
        {"insufficient", PGN_END_RULE, END_INSUFFICIENT, PGN_NEEDS_DRAW},
        {"draw adjudication", PGN_END_OTHER, END_NONE, PGN_NEEDS_DRAW},
        {"draw by adjudication", PGN_END_OTHER, END_NONE, PGN_NEEDS_DRAW},
        {"agree", PGN_END_OTHER, END_NONE, PGN_NEEDS_DRAW},
        {"wins by adjudication", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"resign", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"adjudication", PGN_END_OTHER, END_NONE, PGN_NEEDS_ANY},
        {"time", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"illegal", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"crash", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"stall", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"abandoned", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"disconnect", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"rules infraction", PGN_END_OTHER, END_NONE, PGN_NEEDS_DECISIVE},
        {"emergency", PGN_END_OTHER, END_NONE, PGN_NEEDS_ANY},
        {"death", PGN_END_OTHER, END_NONE, PGN_NEEDS_ANY},
        {"unterminated", PGN_END_UNFINISHED, END_NONE, PGN_NEEDS_ANY},
        {"aborted", PGN_END_UNFINISHED, END_NONE, PGN_NEEDS_ANY},
        {"interrupt", PGN_END_UNFINISHED, END_NONE, PGN_NEEDS_ANY},
    };
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        if (has_word(head, words[k].word)) {
            *e = (PgnEnd){words[k].kind, words[k].rule, words[k].needs, ""};
            return;
        }
    }
    *e = (PgnEnd){PGN_END_UNKNOWN, END_NONE, PGN_NEEDS_ANY, ""};
}

PgnEnd pgn_text_end(const PgnText *g)
{
    PgnEnd e;
    // Ours since the standard's value went to Termination: the specific reason, beside it.
    if (g->termination_details[0]) {
        classify_end(&e, g->termination_details);
        copy_cut(e.text, sizeof e.text, g->termination_details);
        return e;
    }
    // "normal" (the PGN standard's value for a game ended by the rules) says nothing of which rule:
    // the comment after the last move is read then, as for a game without the tag.
    if (g->termination[0] && strcasecmp(g->termination, "normal") != 0) {
        classify_end(&e, g->termination);
        copy_cut(e.text, sizeof e.text, g->termination);
        return e;
    }
    // cutechess and fastchess: the last part of the last move's comment.
    const char *d = g->end_comment, *comma;
    while ((comma = strstr(d, ", ")) != NULL)
        d = comma + 2;
    classify_end(&e, d);
    if (e.kind != PGN_END_UNKNOWN)
        copy_cut(e.text, sizeof e.text, d);
    else if (g->termination[0])
        copy_cut(e.text, sizeof e.text, g->termination);
    return e;
}
