// SPDX-License-Identifier: MIT
#include "board.h"

#include <assert.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "zobrist.h"
#include "why.h"

const char BOARD_START_FEN[] =
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

static const char PIECE_CHARS[] = " KABNRCP KABNRCP";
static const char *const COLOR_NAMES[COLOR_NB] = {"Red", "Black"};
static const char *const TYPE_NAMES[PIECE_TYPE_NB] = {"",      "general", "advisor", "elephant",
                                                      "horse", "chariot", "cannon",  "soldier"};
static const int TYPE_MAX[PIECE_TYPE_NB] = {0, 1, 2, 2, 2, 2, 2, 5};

void board_init(void)
{
    attacks_init();
    zobrist_init();
}

const char *fen_strerror(FenStatus status)
{
    static const char *const text[FEN_STATUS_NB] = {
        [FEN_OK] = "no error",
        [FEN_ERR_EMPTY] = "empty FEN",
        [FEN_ERR_TOO_LONG] = "FEN too long",
        [FEN_ERR_RANK_COUNT] = "wrong number of ranks",
        [FEN_ERR_FILE_COUNT] = "wrong number of points in a rank",
        [FEN_ERR_BAD_CHAR] = "unknown character in the board field",
        [FEN_ERR_KING_MISSING] = "a general is missing",
        [FEN_ERR_KING_EXTRA] = "more than one general of a colour",
        [FEN_ERR_KING_PALACE] = "general outside its palace",
        [FEN_ERR_ADVISOR_POINT] = "advisor outside its palace points",
        [FEN_ERR_ELEPHANT_POINT] = "elephant on a point it can never reach",
        [FEN_ERR_SOLDIER_RANK] = "soldier behind its starting rank",
        [FEN_ERR_PIECE_COUNT] = "too many pieces of a kind",
        [FEN_ERR_SIDE] = "bad side to move",
        [FEN_ERR_FIELDS] = "bad or extra FEN field",
        [FEN_ERR_COUNTERS] = "bad move counters",
        [FEN_ERR_KINGS_FACING] = "the generals face each other",
        [FEN_ERR_OPPONENT_IN_CHECK] = "the side not to move is in check",
    };
    return (unsigned)status < FEN_STATUS_NB ? text[status] : "unknown FEN status";
}

static void sq_name(Square s, char out[3])
{
    out[0] = (char)('a' + sq_file(s));
    out[1] = (char)('0' + sq_rank(s));
    out[2] = '\0';
}

static void put_piece(Board *b, Piece p, Square s)
{
    Color c = piece_color(p);
    b->squares[s] = (uint8_t)p;
    b->pieces[c][piece_type(p)] |= bb_square(s);
    b->pieces[c][NO_PIECE_TYPE] |= bb_square(s);
    b->rank_occ[c][sq_rank(s)] |= (uint16_t)(1u << sq_file(s));
    b->file_occ[c][sq_file(s)] |= (uint16_t)(1u << sq_rank(s));
    if (piece_type(p) == KING)
        b->king_sq[c] = s;
}

static Piece piece_from_char(char ch)
{
    // H and E are accepted as the horse and elephant letters some engines (Sjaak) use.
    static const char red[] = "KABNRCPHE";
    static const PieceType types[] = {KING,   ADVISOR, ELEPHANT, HORSE,   CHARIOT,
                                      CANNON, SOLDIER, HORSE,    ELEPHANT};
    const char *at = ch ? strchr(red, toupper((unsigned char)ch)) : NULL;
    if (!at)
        return NO_PIECE;
    return piece_make(islower((unsigned char)ch) ? BLACK : RED, types[at - red]);
}

/// Parses the placement field: 10 ranks from rank 9 down, each exactly 9 points.
static FenStatus parse_placement(Board *b, const char *f, size_t len, char *why, size_t wl)
{
    int rank = RANK_NB - 1, file = 0;
    for (size_t i = 0; i <= len; i++) {
        char ch = i < len ? f[i] : '/';
        if (ch == '/') {
            if (rank < 0)
                return WHY_FAIL(FEN_ERR_RANK_COUNT, why, wl, "more than 10 ranks");
            if (file != FILE_NB)
                return WHY_FAIL(FEN_ERR_FILE_COUNT, why, wl, "rank %d has %d points, 9 expected",
                                rank, file);
            rank--, file = 0;
            continue;
        }
        if (rank < 0)
            return WHY_FAIL(FEN_ERR_RANK_COUNT, why, wl, "more than 10 ranks");
        if (ch >= '1' && ch <= '9') {
            file += ch - '0';
        } else {
            Piece p = piece_from_char(ch);
            if (p == NO_PIECE)
                return WHY_FAIL(FEN_ERR_BAD_CHAR, why, wl, "unknown character '%c' in rank %d",
                                isprint((unsigned char)ch) ? ch : '?', rank);
            if (file < FILE_NB)
                put_piece(b, p, sq_make(file, rank));
            file++;
        }
        if (file > FILE_NB)
            return WHY_FAIL(FEN_ERR_FILE_COUNT, why, wl, "rank %d has more than 9 points", rank);
    }
    if (rank >= 0)
        return WHY_FAIL(FEN_ERR_RANK_COUNT, why, wl, "%d ranks, 10 expected", RANK_NB - 1 - rank);
    return FEN_OK;
}

/// Checks where each piece stands and how many there are of each kind.
static FenStatus check_pieces(const Board *b, char *why, size_t wl)
{
    for (Color c = RED; c < COLOR_NB; c++) {
        for (PieceType t = KING; t < PIECE_TYPE_NB; t++) {
            int n = bb_count(b->pieces[c][t]);
            if (t == KING && n == 0)
                return WHY_FAIL(FEN_ERR_KING_MISSING, why, wl, "%s has no general", COLOR_NAMES[c]);
            if (t == KING && n > 1)
                return WHY_FAIL(FEN_ERR_KING_EXTRA, why, wl, "%s has %d generals", COLOR_NAMES[c],
                                n);
            if (n > TYPE_MAX[t])
                return WHY_FAIL(FEN_ERR_PIECE_COUNT, why, wl, "%s has %d %ss, at most %d allowed",
                                COLOR_NAMES[c], n, TYPE_NAMES[t], TYPE_MAX[t]);
        }
    }
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = board_piece(b, s);
        if (p == NO_PIECE)
            continue;
        Color c = piece_color(p);
        PieceType t = piece_type(p);
        char name[3];
        sq_name(s, name);
        if (t == KING && !attacks_in_palace(c, s))
            return WHY_FAIL(FEN_ERR_KING_PALACE, why, wl, "%s general on %s, outside its palace",
                            COLOR_NAMES[c], name);
        if (t == ADVISOR && !attacks_advisor_point(c, s))
            return WHY_FAIL(FEN_ERR_ADVISOR_POINT, why, wl,
                            "%s advisor on %s, not one of its five palace points", COLOR_NAMES[c],
                            name);
        if (t == ELEPHANT && !attacks_elephant_point(c, s))
            return WHY_FAIL(FEN_ERR_ELEPHANT_POINT, why, wl,
                            "%s elephant on %s, a point it can never reach", COLOR_NAMES[c], name);
        if (t == SOLDIER && (c == RED ? sq_rank(s) < 3 : sq_rank(s) > 6))
            return WHY_FAIL(FEN_ERR_SOLDIER_RANK, why, wl,
                            "%s soldier on %s, behind its starting rank", COLOR_NAMES[c], name);
    }
    return FEN_OK;
}

/// Strict non-negative decimal within [lo, hi]; no sign, no spaces, no trailing junk.
static bool parse_counter(const char *s, size_t len, int lo, int hi, int *out)
{
    if (len == 0 || len > 6)
        return false;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool kings_facing(const Board *b)
{
    Square r = b->king_sq[RED], k = b->king_sq[BLACK];
    if (sq_file(r) != sq_file(k))
        return false;
    unsigned occ = b->file_occ[RED][sq_file(r)] | b->file_occ[BLACK][sq_file(r)];
    unsigned between = ((1u << sq_rank(k)) - 1) & ~((2u << sq_rank(r)) - 1);
    return (occ & between) == 0;
}

FenStatus board_set_fen(Board *b, const char *fen, char *why, size_t wl)
{
    board_init();
    memset(b, 0, offsetof(Board, hist));
    b->hist_len = 0;
    if (why && wl)
        why[0] = '\0';
    if (!fen)
        return WHY_FAIL(FEN_ERR_EMPTY, why, wl, "no FEN given");
    size_t total = strnlen(fen, BOARD_FEN_INPUT_MAX + 1);
    if (total > BOARD_FEN_INPUT_MAX)
        return WHY_FAIL(FEN_ERR_TOO_LONG, why, wl, "FEN longer than %d characters",
                        BOARD_FEN_INPUT_MAX);

    // Split into whitespace-separated fields.
    const char *field[7];
    size_t flen[7];
    int nf = 0;
    for (const char *p = fen; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (nf == 6)
            return WHY_FAIL(FEN_ERR_FIELDS, why, wl, "more than 6 fields");
        field[nf] = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        flen[nf] = (size_t)(p - field[nf]);
        nf++;
    }
    if (nf == 0)
        return WHY_FAIL(FEN_ERR_EMPTY, why, wl, "empty FEN");

    FenStatus st = parse_placement(b, field[0], flen[0], why, wl);
    if (st == FEN_OK)
        st = check_pieces(b, why, wl);
    if (st != FEN_OK)
        return st;

    if (nf < 2)
        return WHY_FAIL(FEN_ERR_SIDE, why, wl, "side to move missing (w or b)");
    if (flen[1] != 1 || !strchr("wrb", field[1][0]))
        return WHY_FAIL(FEN_ERR_SIDE, why, wl, "side to move '%.*s', expected w or b",
                        (int)(flen[1] > 8 ? 8 : flen[1]), field[1]);
    b->side = field[1][0] == 'b' ? BLACK : RED;
    for (int i = 2; i < 4 && i < nf; i++)
        if (flen[i] != 1 || field[i][0] != '-')
            return WHY_FAIL(FEN_ERR_FIELDS, why, wl, "field %d is '%.*s', expected '-'", i + 1,
                            (int)(flen[i] > 8 ? 8 : flen[i]), field[i]);
    b->halfmove = 0;
    b->fullmove = 1;
    if (nf >= 5 && !parse_counter(field[4], flen[4], 0, 99999, &b->halfmove))
        return WHY_FAIL(FEN_ERR_COUNTERS, why, wl,
                        "halfmove counter '%.*s' is not a number 0-99999",
                        (int)(flen[4] > 8 ? 8 : flen[4]), field[4]);
    if (nf >= 6 && !parse_counter(field[5], flen[5], 1, 99999, &b->fullmove))
        return WHY_FAIL(FEN_ERR_COUNTERS, why, wl, "move number '%.*s' is not a number 1-99999",
                        (int)(flen[5] > 8 ? 8 : flen[5]), field[5]);

    if (kings_facing(b))
        return WHY_FAIL(FEN_ERR_KINGS_FACING, why, wl,
                        "the generals face each other on file %c with nothing between",
                        'a' + sq_file(b->king_sq[RED]));
    Color them = (Color)(b->side ^ 1);
    if (board_attacked_after(b, them, b->king_sq[them], SQ_NONE, SQ_NONE))
        return WHY_FAIL(FEN_ERR_OPPONENT_IN_CHECK, why, wl, "%s is to move but %s is in check",
                        COLOR_NAMES[b->side], COLOR_NAMES[them]);
    b->in_check = board_attacked_after(b, b->side, b->king_sq[b->side], SQ_NONE, SQ_NONE);
    b->key = board_compute_key(b);
    return FEN_OK;
}

void board_fen(const Board *b, char *out, size_t out_len)
{
    char buf[BOARD_FEN_MAX];
    size_t n = 0;
    for (int r = RANK_NB - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < FILE_NB; f++) {
            Piece p = board_piece(b, sq_make(f, r));
            if (p == NO_PIECE) {
                empty++;
                continue;
            }
            if (empty)
                buf[n++] = (char)('0' + empty), empty = 0;
            char ch = PIECE_CHARS[p];
            buf[n++] = piece_color(p) == BLACK ? (char)tolower((unsigned char)ch) : ch;
        }
        if (empty)
            buf[n++] = (char)('0' + empty);
        if (r)
            buf[n++] = '/';
    }
    snprintf(buf + n, sizeof buf - n, " %c - - %d %d", b->side == RED ? 'w' : 'b', b->halfmove,
             b->fullmove);
    snprintf(out, out_len, "%s", buf);
}

uint64_t board_compute_key(const Board *b)
{
    uint64_t k = b->side == BLACK ? zobrist_side : 0;
    for (Square s = 0; s < SQUARE_NB; s++)
        k ^= zobrist_psq[b->squares[s]][s];
    return k;
}

static inline void toggle(Board *b, Color c, PieceType t, Square s)
{
    Bitboard bb = bb_square(s);
    b->pieces[c][t] ^= bb;
    b->pieces[c][NO_PIECE_TYPE] ^= bb;
    b->rank_occ[c][sq_rank(s)] ^= (uint16_t)(1u << sq_file(s));
    b->file_occ[c][sq_file(s)] ^= (uint16_t)(1u << sq_rank(s));
}

void board_make_move(Board *b, Move m)
{
    assert(b->hist_len < BOARD_HISTORY_MAX);
    Square from = move_from(m), to = move_to(m);
    Piece p = board_piece(b, from), cap = board_piece(b, to);
    Color us = b->side;
    // Most moves are seen not to check from the geometry alone, before they are made.
    const bool check = board_gives_check(b, m);
    BoardUndo *u = &b->hist[b->hist_len++];
    u->key = b->key;
    u->move = m;
    u->captured = (uint8_t)cap;
    u->piece = (uint8_t)p;
    u->in_check = b->in_check;
    u->halfmove = b->halfmove;

    if (cap != NO_PIECE) {
        toggle(b, (Color)(us ^ 1), piece_type(cap), to);
        b->key ^= zobrist_psq[cap][to];
        b->halfmove = 0;
    } else {
        b->halfmove++;
    }
    toggle(b, us, piece_type(p), from);
    toggle(b, us, piece_type(p), to);
    b->squares[from] = NO_PIECE;
    b->squares[to] = (uint8_t)p;
    if (piece_type(p) == KING)
        b->king_sq[us] = to;
    b->key ^= zobrist_psq[p][from] ^ zobrist_psq[p][to] ^ zobrist_side;
    if (us == BLACK)
        b->fullmove++;
    b->side = (Color)(us ^ 1);
    b->in_check = check;
    assert(b->key == board_compute_key(b));
    assert(board_is_ok(b));
}

void board_unmake_move(Board *b)
{
    assert(b->hist_len > 0);
    const BoardUndo *u = &b->hist[--b->hist_len];
    Square from = move_from(u->move), to = move_to(u->move);
    Piece p = board_piece(b, to), cap = (Piece)u->captured;
    Color us = (Color)(b->side ^ 1);

    toggle(b, us, piece_type(p), to);
    toggle(b, us, piece_type(p), from);
    b->squares[from] = (uint8_t)p;
    b->squares[to] = (uint8_t)cap;
    if (cap != NO_PIECE)
        toggle(b, b->side, piece_type(cap), to);
    if (piece_type(p) == KING)
        b->king_sq[us] = from;
    if (us == BLACK)
        b->fullmove--;
    b->side = us;
    b->in_check = u->in_check;
    b->key = u->key;
    b->halfmove = u->halfmove;
    assert(board_is_ok(b));
}

void board_make_null(Board *b)
{
    assert(b->hist_len < BOARD_HISTORY_MAX);
    BoardUndo *u = &b->hist[b->hist_len++];
    u->key = b->key;
    u->move = MOVE_NONE;
    u->captured = NO_PIECE;
    u->piece = NO_PIECE;
    u->in_check = b->in_check;
    u->halfmove = b->halfmove;
    assert(!b->in_check);
    b->halfmove++;
    if (b->side == BLACK)
        b->fullmove++;
    b->side = (Color)(b->side ^ 1);
    b->key ^= zobrist_side;
}

void board_unmake_null(Board *b)
{
    const BoardUndo *u = &b->hist[--b->hist_len];
    b->side = (Color)(b->side ^ 1);
    if (b->side == BLACK)
        b->fullmove--;
    b->in_check = u->in_check;
    b->key = u->key;
    b->halfmove = u->halfmove;
}

bool board_is_ok(const Board *b)
{
    Bitboard pieces[COLOR_NB][PIECE_TYPE_NB] = {{0}};
    uint16_t rank_occ[COLOR_NB][RANK_NB] = {{0}}, file_occ[COLOR_NB][FILE_NB] = {{0}};
    int kings[COLOR_NB] = {0};
    for (Square s = 0; s < SQUARE_NB; s++) {
        Piece p = board_piece(b, s);
        if (p == NO_PIECE)
            continue;
        if (p == 8 || p >= PIECE_NB)
            return false;
        Color c = piece_color(p);
        pieces[c][piece_type(p)] |= bb_square(s);
        pieces[c][NO_PIECE_TYPE] |= bb_square(s);
        rank_occ[c][sq_rank(s)] |= (uint16_t)(1u << sq_file(s));
        file_occ[c][sq_file(s)] |= (uint16_t)(1u << sq_rank(s));
        if (piece_type(p) == KING) {
            kings[c]++;
            if (b->king_sq[c] != s)
                return false;
        }
    }
    if (kings[RED] != 1 || kings[BLACK] != 1)
        return false;
    if (memcmp(pieces, b->pieces, sizeof pieces) ||
        memcmp(rank_occ, b->rank_occ, sizeof rank_occ) ||
        memcmp(file_occ, b->file_occ, sizeof file_occ))
        return false;
    if ((b->side != RED && b->side != BLACK) || b->halfmove < 0 || b->fullmove < 1)
        return false;
    if (b->hist_len < 0 || b->hist_len > BOARD_HISTORY_MAX)
        return false;
    if (b->in_check != board_attacked_after(b, b->side, b->king_sq[b->side], SQ_NONE, SQ_NONE))
        return false;
    return b->key == board_compute_key(b);
}

bool board_gives_check(const Board *b, Move m)
{
    Color them = (Color)(b->side ^ 1);
    return board_may_give_check(b, m) &&
           board_attacked_after(b, them, b->king_sq[them], move_from(m), move_to(m));
}
