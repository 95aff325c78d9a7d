// SPDX-License-Identifier: MIT
// Basic xiangqi types shared by every module: squares, colours, pieces and moves.
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum { FILE_NB = 9, RANK_NB = 10, SQUARE_NB = 90 };

/// A point on the board: rank * 9 + file, a0 = 0 (Red's lower left) .. i9 = 89.
typedef int Square;
enum { SQ_A0 = 0, SQ_I9 = 89, SQ_NONE = 90 };

typedef enum { RED, BLACK, COLOR_NB } Color;

typedef enum {
    NO_PIECE_TYPE,
    KING, // general
    ADVISOR,
    ELEPHANT,
    HORSE,
    CHARIOT,
    CANNON,
    SOLDIER,
    PIECE_TYPE_NB
} PieceType;

/// A piece is (colour << 3) | type, so NO_PIECE = 0 and Black pieces are 9..15.
typedef enum {
    NO_PIECE,
    RED_KING = 1,
    RED_ADVISOR,
    RED_ELEPHANT,
    RED_HORSE,
    RED_CHARIOT,
    RED_CANNON,
    RED_SOLDIER,
    BLACK_KING = 9,
    BLACK_ADVISOR,
    BLACK_ELEPHANT,
    BLACK_HORSE,
    BLACK_CHARIOT,
    BLACK_CANNON,
    BLACK_SOLDIER,
    PIECE_NB = 16
} Piece;

/// A move is from | to << 7. MOVE_NONE (a0a0) is never a legal move.
typedef uint16_t Move;
enum { MOVE_NONE = 0 };

static inline Piece piece_make(Color c, PieceType t) { return (Piece)((c << 3) | t); }
static inline PieceType piece_type(Piece p) { return (PieceType)(p & 7); }
static inline Color piece_color(Piece p) { return (Color)(p >> 3); }

static inline int sq_file(Square s) { return s % FILE_NB; }
static inline int sq_rank(Square s) { return s / FILE_NB; }
static inline Square sq_make(int file, int rank) { return rank * FILE_NB + file; }

static inline Move move_make(Square from, Square to) { return (Move)(from | (to << 7)); }
static inline Square move_from(Move m) { return m & 0x7f; }
static inline Square move_to(Move m) { return m >> 7; }
