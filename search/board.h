// SPDX-License-Identifier: MIT
// The xiangqi position: piece placement, side to move, counters, Zobrist key and the undo
// history of the game so far. FEN in the Pikafish convention, make/unmake, check detection.
#pragma once

#include <stddef.h>

#include "attacks.h"
#include "bitboard.h"
#include "types.h"
#include "zobrist.h"

enum {
    BOARD_HISTORY_MAX = 2048, // plies a board can make from its FEN before unmaking
    BOARD_FEN_MAX = 128,      // bytes, terminator included, of any FEN board_fen() writes
    BOARD_FEN_INPUT_MAX = 256 // longer input is rejected before parsing
};

typedef struct {
    uint64_t key; // key before the move
    Move move;
    uint8_t captured; // Piece taken by the move
    uint8_t piece;    // Piece that moved
    bool in_check;    // whether the side to move was in check before the move
    int32_t halfmove;
} BoardUndo;

typedef struct {
    uint8_t squares[SQUARE_NB]; // Piece on each point
    Square king_sq[COLOR_NB];
    Bitboard pieces[COLOR_NB][PIECE_TYPE_NB]; // [c][NO_PIECE_TYPE] holds all of c's pieces
    uint16_t rank_occ[COLOR_NB][RANK_NB];     // bit f: a piece of that colour on (f, rank)
    uint16_t file_occ[COLOR_NB][FILE_NB];     // bit r: a piece of that colour on (file, r)
    Color side;
    bool in_check; // the side to move is in check (kept by make/unmake)
    uint64_t key;
    int halfmove; // plies since the last capture (FEN field 5)
    int fullmove; // FEN field 6, incremented after Black's move
    int hist_len;
    BoardUndo hist[BOARD_HISTORY_MAX];
} Board;

typedef enum {
    FEN_OK,
    FEN_ERR_EMPTY,
    FEN_ERR_TOO_LONG,
    FEN_ERR_RANK_COUNT,
    FEN_ERR_FILE_COUNT,
    FEN_ERR_BAD_CHAR,
    FEN_ERR_KING_MISSING,
    FEN_ERR_KING_EXTRA,
    FEN_ERR_KING_PALACE,
    FEN_ERR_ADVISOR_POINT,
    FEN_ERR_ELEPHANT_POINT,
    FEN_ERR_SOLDIER_RANK,
    FEN_ERR_PIECE_COUNT,
    FEN_ERR_SIDE,
    FEN_ERR_FIELDS,
    FEN_ERR_COUNTERS,
    FEN_ERR_KINGS_FACING,
    FEN_ERR_OPPONENT_IN_CHECK,
    FEN_STATUS_NB
} FenStatus;

extern const char BOARD_START_FEN[];

/// Builds the move tables and Zobrist keys; cheap and idempotent, safe from any thread.
void board_init(void);

/// Parses and validates a FEN. On failure returns the fault, writes a sentence naming the
/// offending rank, point or field into why (if not NULL) and leaves *b unspecified.
FenStatus board_set_fen(Board *b, const char *fen, char *why, size_t why_len);
const char *fen_strerror(FenStatus status);

/// Writes the position's FEN (at most BOARD_FEN_MAX bytes with the terminator).
void board_fen(const Board *b, char *out, size_t out_len);

void board_make_move(Board *b, Move m);
void board_unmake_move(Board *b);
/// Passes the turn; only valid when the side to move is not in check (null-move search).
void board_make_null(Board *b);
void board_unmake_null(Board *b);

/// Recomputes the key from scratch (debug checks, tests).
uint64_t board_compute_key(const Board *b);
/// Full consistency check of every redundant field; for asserts and tests.
bool board_is_ok(const Board *b);

static inline bool board_in_check(const Board *b) { return b->in_check; }

/// Whether the move at history index i (0 = first move made from the FEN) gave check.
static inline bool board_move_gave_check(const Board *b, int i)
{
    return i + 1 < b->hist_len ? b->hist[i + 1].in_check : b->in_check;
}

static inline Piece board_piece(const Board *b, Square s) { return (Piece)b->squares[s]; }

/// The key the position will have after move m (to prefetch table entries).
static inline uint64_t board_key_after(const Board *b, Move m)
{
    Square from = move_from(m), to = move_to(m);
    Piece p = board_piece(b, from);
    return b->key ^ zobrist_psq[p][from] ^ zobrist_psq[p][to] ^
           zobrist_psq[board_piece(b, to)][to] ^ zobrist_side;
}

/// False only if move m (pseudo-legal here) cannot give check; true if it may. Without a
/// make: a move gives check only by landing on a line, jump or step of the enemy general, or
/// by leaving its lines or a horse-leg point beside it (a discovered chariot, cannon or horse
/// check, or a general uncovered on the file). The search prunes on it before making a move.
static inline bool board_may_give_check(const Board *b, Move m)
{
    const uint8_t *expo = attacks_exposure[b->king_sq[b->side ^ 1]];
    Square from = move_from(m), to = move_to(m);
    if ((expo[from] & 1) | (expo[to] & 2))
        return true;
    PieceType pt = piece_type(board_piece(b, from));
    return (pt == HORSE && (expo[to] & 4)) || (pt == SOLDIER && (expo[to] & 8));
}

/// Whether legal move m gives check, computed without making it (equal to board_in_check()
/// after board_make_move(b, m)).
bool board_gives_check(const Board *b, Move m);

/// The occupancy of ksq's rank (bit = file) and file (bit = rank) once the piece on from has
/// moved to to; from = SQ_NONE for the position as it is.
static inline void board_lines_after(const Board *b, Square ksq, Square from, Square to,
                                     unsigned *rocc, unsigned *focc)
{
    const int kf = sq_file(ksq), kr = sq_rank(ksq);
    *rocc = b->rank_occ[RED][kr] | b->rank_occ[BLACK][kr];
    *focc = b->file_occ[RED][kf] | b->file_occ[BLACK][kf];
    if (from == SQ_NONE)
        return;
    if (sq_rank(from) == kr)
        *rocc &= ~(1u << sq_file(from));
    if (sq_file(from) == kf)
        *focc &= ~(1u << sq_rank(from));
    if (sq_rank(to) == kr)
        *rocc |= 1u << sq_file(to);
    if (sq_file(to) == kf)
        *focc |= 1u << sq_rank(to);
}

/// The piece on s once the piece on from has moved to to (from = to = SQ_NONE: as it is).
static inline Piece board_piece_after(const Board *b, Square s, Square from, Square to)
{
    return s == from ? NO_PIECE : s == to ? board_piece(b, from) : board_piece(b, s);
}

/// Whether the general of colour us, standing on ksq, is attacked once the piece on from
/// has moved to to (capturing what stood there). from = to = SQ_NONE asks about the position
/// as it is. Flying general counts as an attack. The piece moving may be the general itself
/// (then ksq = to), or a piece of the attacking side (a check given by the move).
static inline bool board_attacked_after(const Board *b, Color us, Square ksq, Square from,
                                        Square to)
{
    const Color them = (Color)(us ^ 1);
    const int kf = sq_file(ksq), kr = sq_rank(ksq);
    const Piece e_chariot = piece_make(them, CHARIOT), e_cannon = piece_make(them, CANNON);
    const Piece e_horse = piece_make(them, HORSE), e_soldier = piece_make(them, SOLDIER);
    const Piece e_king = piece_make(them, KING);

    unsigned rocc, focc;
    board_lines_after(b, ksq, from, to, &rocc, &focc);

    // Chariots (and the other general, on the file) hit by the first piece each way,
    // cannons by the second.
    LineEntry e = attacks_rank[kf][rocc];
    for (unsigned m = LINE_HIT(e); m; m &= m - 1)
        if (board_piece_after(b, kr * FILE_NB + __builtin_ctz(m), from, to) == e_chariot)
            return true;
    for (unsigned m = LINE_SCREEN(e); m; m &= m - 1)
        if (board_piece_after(b, kr * FILE_NB + __builtin_ctz(m), from, to) == e_cannon)
            return true;
    e = attacks_file[kr][focc];
    for (unsigned m = LINE_HIT(e); m; m &= m - 1) {
        Piece p = board_piece_after(b, __builtin_ctz(m) * FILE_NB + kf, from, to);
        if (p == e_chariot || p == e_king)
            return true;
    }
    for (unsigned m = LINE_SCREEN(e); m; m &= m - 1)
        if (board_piece_after(b, __builtin_ctz(m) * FILE_NB + kf, from, to) == e_cannon)
            return true;

    // Horses whose leg is free.
    const StepList *h = &attacks_horse_from[ksq];
    for (int i = 0; i < h->n; i++)
        if (board_piece_after(b, h->to[i], from, to) == e_horse &&
            board_piece_after(b, h->via[i], from, to) == NO_PIECE)
            return true;

    // Soldiers: a soldier of them attacks ksq if ksq is among its steps; the general always
    // stands in its own half, where every enemy soldier has crossed, so the three points
    // beside and in front of the general are the only candidates.
    Square front = us == RED ? ksq + FILE_NB : ksq - FILE_NB;
    return board_piece_after(b, front, from, to) == e_soldier ||
           (kf > 0 && board_piece_after(b, ksq - 1, from, to) == e_soldier) ||
           (kf < FILE_NB - 1 && board_piece_after(b, ksq + 1, from, to) == e_soldier);
}
