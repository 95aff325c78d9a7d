// SPDX-License-Identifier: MIT
// Move generation: pseudo-legal, legal, and legal captures (for quiescence search).
#pragma once

#include "board.h"

enum { MAX_MOVES = 128 }; // no xiangqi position has more than 120 pseudo-legal moves

typedef struct {
    int count;
    Move moves[MAX_MOVES];
} MoveList;

/// Every move that follows the movement rules, whether or not it leaves the general attacked.
void movegen_pseudo(const Board *b, MoveList *list);
/// Every legal move: pseudo-legal moves that do not leave the mover's general attacked or
/// facing the other general. Returns the count.
int movegen_legal(const Board *b, MoveList *list);
/// The number of legal moves, without listing them (perft's last ply).
int movegen_count_legal(const Board *b);
/// Legal captures only. Returns the count.
int movegen_captures(const Board *b, MoveList *list);
/// Legal non-captures only; with movegen_captures, the same set as movegen_legal.
int movegen_quiets(const Board *b, MoveList *list);
/// Pseudo-legal non-captures (legality left to movegen_legal_after, for the few kept).
void movegen_pseudo_quiets(const Board *b, MoveList *list);
/// Pseudo-legal non-captures that give check (board_gives_check), generated from the enemy
/// general's lines, horse jumps and soldier steps rather than by testing every quiet move:
/// direct checks, discovered checks (a piece leaving a chariot's, a cannon's or the general's
/// line or a horse leg) and new cannon screens. Flying-general "checks" (the mover's general
/// facing the other) are included, as board_gives_check counts them; they are illegal, and
/// legality is left to movegen_legal_after. Needs the side not to move out of check, as in
/// every position reached by legal play.
void movegen_quiet_checks(const Board *b, MoveList *list);
/// Whether m follows the movement rules here (any Move value is accepted), without
/// generating the move list.
bool movegen_is_pseudo_legal(const Board *b, Move m);
/// Whether m is a legal move in this position (any Move value is accepted).
bool movegen_is_legal(const Board *b, Move m);
/// Whether a pseudo-legal move leaves the mover's general safe.
bool movegen_legal_after(const Board *b, Move m);
