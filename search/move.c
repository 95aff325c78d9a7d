// SPDX-License-Identifier: MIT
#include "move.h"

#include <stdio.h>

#include "movegen.h"

const char *move_text_strerror(MoveTextStatus st)
{
    switch (st) {
    case MOVE_TEXT_OK: return "no error";
    case MOVE_TEXT_SYNTAX: return "not a move in coordinate form (like h2e2)";
    case MOVE_TEXT_ILLEGAL: return "illegal move in this position";
    default: return "unknown move text status";
    }
}

void move_text(Move m, int rank_base, char out[MOVE_TEXT_MAX])
{
    if (m == MOVE_NONE) {
        snprintf(out, MOVE_TEXT_MAX, "0000");
        return;
    }
    Square from = move_from(m), to = move_to(m);
    snprintf(out, MOVE_TEXT_MAX, "%c%d%c%d", 'a' + sq_file(from), sq_rank(from) + rank_base,
             'a' + sq_file(to), sq_rank(to) + rank_base);
}

/// Reads one point: a file letter, then a rank of one digit (or "10" when ranks start at 1).
static const char *parse_point(const char *s, int rank_base, Square *out)
{
    if (*s < 'a' || *s > 'i' || s[1] < '0' || s[1] > '9')
        return NULL;
    int file = *s - 'a', rank = s[1] - '0';
    s += 2;
    if (rank_base == 1 && rank == 1 && *s == '0')
        rank = 10, s++;
    rank -= rank_base;
    if (rank < 0 || rank >= RANK_NB)
        return NULL;
    *out = sq_make(file, rank);
    return s;
}

MoveTextStatus move_parse(const char *text, int rank_base, Move *out)
{
    Square from, to;
    const char *s = text ? parse_point(text, rank_base, &from) : NULL;
    if (s)
        s = parse_point(s, rank_base, &to);
    if (!s || *s != '\0' || from == to)
        return MOVE_TEXT_SYNTAX;
    *out = move_make(from, to);
    return MOVE_TEXT_OK;
}

MoveTextStatus move_parse_legal(const Board *b, const char *text, int rank_base, Move *out)
{
    Move m;
    MoveTextStatus st = move_parse(text, rank_base, &m);
    if (st != MOVE_TEXT_OK)
        return st;
    if (!movegen_is_legal(b, m))
        return MOVE_TEXT_ILLEGAL;
    *out = m;
    return MOVE_TEXT_OK;
}
