// SPDX-License-Identifier: MIT
#include "pgn.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "move.h"

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
