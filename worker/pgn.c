// SPDX-License-Identifier: MIT
#include "pgn.h"

#include <stdlib.h>
#include <ctype.h>
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

int pgn_read(FILE *in, GameRecord *rec, int *lineno, char *why, size_t why_len)
{
    char line[PGN_LINE_MAX];
    memset(rec, 0, offsetof(GameRecord, moves));
    rec->red = 0;
    Outcome result = OUTCOME_NONE;
    bool in_tags = false, in_moves = false, in_comment = false, done = false, bad = false;
    Board *b = NULL;
    char comment[256];
    size_t clen = 0;
    while (!done && fgets(line, sizeof line, in)) {
        (*lineno)++;
        if (!strchr(line, '\n') && !feof(in)) {
            snprintf(why, why_len, "line %d: longer than %d bytes", *lineno, PGN_LINE_MAX);
            bad = true;
            int c;
            while ((c = fgetc(in)) != EOF && c != '\n')
                ;
            continue;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (!in_moves && line[0] == '[') {
            char name[64], value[512];
            if (!parse_tag(line, name, sizeof name, value, sizeof value)) {
                snprintf(why, why_len, "line %d: malformed tag", *lineno);
                bad = true;
                continue;
            }
            in_tags = true;
            apply_tag(rec, name, value, &result);
            continue;
        }
        if (!in_tags && !in_moves && line[0] == '\0')
            continue;
        if (!in_moves && line[0] == '\0')
            continue;
        if (!in_moves) {
            in_moves = true;
            b = malloc(sizeof *b);
            const char *fen = rec->start_fen[0] ? rec->start_fen : BOARD_START_FEN;
            char fen_why[160];
            if (!b || board_set_fen(b, fen, fen_why, sizeof fen_why) != FEN_OK) {
                snprintf(why, why_len, "line %d: bad FEN tag: %s", *lineno,
                         b ? fen_why : "no memory");
                bad = true;
            } else {
                board_fen(b, rec->start_fen, sizeof rec->start_fen);
            }
        }
        for (char *p = line; *p && !done;) {
            if (in_comment) {
                char *end = strchr(p, '}');
                size_t n = end ? (size_t)(end - p) : strlen(p);
                if (clen + n < sizeof comment) {
                    memcpy(comment + clen, p, n);
                    clen += n;
                }
                if (!end)
                    break;
                comment[clen] = '\0';
                in_comment = false;
                p = end + 1;
                if (rec->ply_count > 0 && !bad) {
                    bool book;
                    apply_comment(&rec->moves[rec->ply_count - 1], comment, &book);
                    if (book && rec->book_plies == rec->ply_count - 1)
                        rec->book_plies = rec->ply_count;
                }
                continue;
            }
            if (isspace((unsigned char)*p)) {
                p++;
                continue;
            }
            if (*p == '{') {
                in_comment = true;
                clen = 0;
                p++;
                continue;
            }
            char tok[32];
            size_t n = strcspn(p, " \t{");
            snprintf(tok, sizeof tok, "%.*s", (int)(n < sizeof tok ? n : sizeof tok - 1), p);
            p += n;
            if (is_result(tok)) {
                if (outcome_of(tok) != result)
                    result = outcome_of(tok);
                done = true;
                break;
            }
            if (isdigit((unsigned char)tok[0]))
                continue; // move number
            if (bad)
                continue;
            Move m;
            MoveTextStatus st = move_parse_legal(b, tok, 0, &m);
            if (st != MOVE_TEXT_OK || rec->ply_count >= GAME_MAX_PLIES ||
                b->hist_len >= BOARD_HISTORY_MAX) {
                snprintf(why, why_len, "line %d: move %d '%s': %s", *lineno, rec->ply_count + 1,
                         tok, st != MOVE_TEXT_OK ? move_text_strerror(st) : "game too long");
                bad = true;
                continue;
            }
            board_make_move(b, m);
            rec->moves[rec->ply_count++] = (GameMove){m, 0, false, false, 0, 0};
        }
    }
    free(b);
    if (!in_tags && !in_moves)
        return 0;
    if (!done && !bad) {
        snprintf(why, why_len, "line %d: game without a result", *lineno);
        bad = true;
    }
    rec->outcome = result;
    return bad ? -1 : 1;
}
