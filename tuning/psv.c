// SPDX-License-Identifier: MIT
#include "psv.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "board.h"

// The stream: lowest bit first, bit k in byte k / 8.
typedef struct {
    uint8_t *data;
    int bit;
} Bits;

static void bits_put(Bits *s, unsigned v, int n)
{
    for (int i = 0; i < n; i++, s->bit++)
        if (v >> i & 1)
            s->data[s->bit / 8] |= (uint8_t)(1u << (s->bit % 8));
}

/// n bits, or -1 past the 512 bits of the packed position.
static int bits_get(Bits *s, int n)
{
    unsigned v = 0;
    for (int i = 0; i < n; i++, s->bit++) {
        if (s->bit >= PSV_SFEN_BYTES * 8)
            return -1;
        v |= (unsigned)(s->data[s->bit / 8] >> (s->bit % 8) & 1) << i;
    }
    return (int)v;
}

// Fairy-Stockfish's piece index for xiangqi plus one (its piece types in enum order, the
// general last and not coded), by our piece type; its code is 2 * index + 1 in 5 bits.
static const int fsf_index[PIECE_TYPE_NB] = {
    [CHARIOT] = 1, [ADVISOR] = 2, [CANNON] = 3, [SOLDIER] = 4, [HORSE] = 5, [ELEPHANT] = 6};
static const PieceType by_index[7] = {NO_PIECE_TYPE, CHARIOT, ADVISOR, CANNON,
                                      SOLDIER,       HORSE,   ELEPHANT};
enum { HAND_TYPES = 7, HAND_BITS = 5, FSF_FILES = 12 };

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static unsigned get16(const uint8_t *p) { return p[0] | (unsigned)p[1] << 8; }

/// Our point as Fairy-Stockfish's square on its 12-file board, and back (-1: off our board).
static unsigned fsf_square(Square s) { return (unsigned)(sq_rank(s) * FSF_FILES + sq_file(s)); }
static Square our_square(unsigned s)
{
    unsigned f = s % FSF_FILES, r = s / FSF_FILES;
    return f < FILE_NB && r < RANK_NB ? sq_make((int)f, (int)r) : -1;
}

void psv_encode(const PosRecord *r, uint8_t out[PSV_RECORD])
{
    memset(out, 0, PSV_RECORD);
    const Board *b = &r->board;
    Bits s = {out, 0};
    bits_put(&s, b->side == BLACK, 1);
    Square king[COLOR_NB] = {0, 0};
    for (Square q = 0; q < SQUARE_NB; q++)
        if (piece_type(board_piece(b, q)) == KING)
            king[piece_color(board_piece(b, q))] = q;
    bits_put(&s, (unsigned)king[RED], 7);
    bits_put(&s, (unsigned)king[BLACK], 7);
    for (int rank = RANK_NB - 1; rank >= 0; rank--)
        for (int file = 0; file < FILE_NB; file++) {
            Piece p = board_piece(b, sq_make(file, rank));
            if (p == NO_PIECE) {
                bits_put(&s, 0, 1);
            } else if (piece_type(p) != KING) {
                bits_put(&s, 2u * (unsigned)fsf_index[piece_type(p)] - 1, 5);
                bits_put(&s, piece_color(p) == BLACK, 1);
            }
        }
    s.bit += 2 * HAND_TYPES * HAND_BITS + 4 + 1 + 6; // hands, castling, en passant, counter: 0
    int fm = 1 + (r->ply - (b->side == BLACK)) / 2;
    fm = fm < 1 ? 1 : fm > 0xffff ? 0xffff : fm;
    bits_put(&s, (unsigned)fm & 0xff, 8);
    bits_put(&s, (unsigned)fm >> 8, 8);
    int score = r->score < INT16_MIN ? INT16_MIN : r->score > INT16_MAX ? INT16_MAX : r->score;
    put16(out + 64, (unsigned)(uint16_t)(int16_t)score);
    put16(out + 66, fsf_square(move_from(r->move)) << 7 | fsf_square(move_to(r->move)));
    put16(out + 68, (unsigned)(r->ply < 0 ? 0 : r->ply > 0xffff ? 0xffff : r->ply));
    double stm = b->side == RED ? r->red_result : 1 - r->red_result;
    out[70] = (uint8_t)(int8_t)(stm == 1 ? 1 : stm == 0 ? -1 : 0);
}

#define FAIL(...) (snprintf(why, why_len, __VA_ARGS__), -1)

int psv_decode(const uint8_t in[PSV_RECORD], PosRecord *out, char *why, size_t why_len)
{
    uint8_t data[PSV_SFEN_BYTES];
    memcpy(data, in, sizeof data);
    Bits s = {data, 0};
    memset(out, 0, sizeof *out);
    Piece sq[SQUARE_NB] = {NO_PIECE};
    int side = bits_get(&s, 1);
    int kings[COLOR_NB] = {bits_get(&s, 7), bits_get(&s, 7)};
    for (int c = 0; c < COLOR_NB; c++) {
        if (kings[c] < 0 || kings[c] >= SQUARE_NB || (c && kings[1] == kings[0]))
            return FAIL("a general off the board");
        sq[kings[c]] = piece_make((Color)c, KING);
    }
    for (int rank = RANK_NB - 1; rank >= 0; rank--)
        for (int file = 0; file < FILE_NB; file++) {
            Square q = sq_make(file, rank);
            if (sq[q] != NO_PIECE)
                continue; // a general's point is not in the stream
            int first = bits_get(&s, 1);
            if (first <= 0) {
                if (first < 0)
                    return FAIL("the board runs past 512 bits");
                continue;
            }
            int high = bits_get(&s, 4), colour = bits_get(&s, 1);
            if (high < 0 || colour < 0)
                return FAIL("the board runs past 512 bits");
            int code = 1 | high << 1;
            int index = (code + 1) / 2;
            if (index < 1 || index > 6)
                return FAIL("piece code %d at %c%d is not a xiangqi piece", code, 'a' + file, rank);
            sq[q] = piece_make((Color)colour, by_index[index]);
        }
    for (int i = 0; i < 2 * HAND_TYPES; i++)
        if (bits_get(&s, HAND_BITS) != 0)
            return FAIL("pieces in hand");
    if (bits_get(&s, 4) != 0 || bits_get(&s, 1) != 0)
        return FAIL("castling or en passant");
    // The 50-move counter and the move number are not the record's (it has no history).
    // Our board, through a FEN: board_set_fen checks it as strictly as any FEN.
    char fen[BOARD_FEN_MAX];
    size_t n = 0;
    for (int rank = RANK_NB - 1; rank >= 0; rank--) {
        int empty = 0;
        for (int file = 0; file < FILE_NB; file++) {
            Piece p = sq[sq_make(file, rank)];
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                fen[n++] = (char)('0' + empty);
            empty = 0;
            char c = " kabnrcp"[piece_type(p)];
            fen[n++] = piece_color(p) == RED ? (char)(c - 'a' + 'A') : c;
        }
        if (empty)
            fen[n++] = (char)('0' + empty);
        if (rank)
            fen[n++] = '/';
    }
    snprintf(fen + n, sizeof fen - n, " %c - - 0 1", side ? 'b' : 'w');
    char fwhy[256];
    if (board_set_fen(&out->board, fen, fwhy, sizeof fwhy) != FEN_OK)
        return FAIL("%s: %s", fen, fwhy);
    out->score = (int16_t)get16(in + 64);
    unsigned m = get16(in + 66);
    Square from = our_square(m >> 7 & 0x7f), to = our_square(m & 0x7f);
    if (from < 0 || to < 0 || m >> 14)
        return FAIL("move %u is not a move on the xiangqi board", m);
    out->move = move_make(from, to);
    out->ply = (int)get16(in + 68);
    int8_t res = (int8_t)in[70];
    if (res < -1 || res > 1)
        return FAIL("result %d is not 1, 0 or -1", res);
    double stm = res == 1 ? 1 : res == -1 ? 0 : 0.5;
    out->red_result = side ? 1 - stm : stm;
    return 0;
}
