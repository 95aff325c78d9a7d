// SPDX-License-Identifier: MIT
#include "pgn.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "move.h"
#include "movegen.h"

// The PGN standard's result texts; "*" for a game without a result.
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

/// cutechess's {score/depth time} after each move (score in pawns from the mover's view, mate as
/// +M5 / -M5 in moves, n/a when the engine gave none); {book} marks the opening's moves, so that
/// the strict reader restores book_plies.
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

const char *pgn_notation_name(PgnNotation n)
{
    static const char *const names[PGN_NOTATION_NB] = {"coordinate", "iccs", "wxf"};
    return (unsigned)n < PGN_NOTATION_NB ? names[n] : "unknown";
}

bool pgn_notation_parse(const char *name, PgnNotation *out)
{
    for (int n = 0; n < PGN_NOTATION_NB; n++)
        if (!strcmp(name, pgn_notation_name((PgnNotation)n)))
            return *out = (PgnNotation)n, true;
    return false;
}

const char *pgn_termination_standard(Termination t)
{
    switch (t) {
    case TERM_RESIGN_ADJ:
    case TERM_DRAW_ADJ:
    case TERM_PLY_LIMIT: return "adjudication";
    case TERM_TIME_FORFEIT: return "time forfeit";
    case TERM_ILLEGAL_MOVE: return "rules infraction";
    case TERM_CRASH:
    case TERM_STALL: return "abandoned";
    case TERM_NONE:
    case TERM_ABORTED: return "unterminated";
    default: return "normal"; // the rules ended it, or the engine resigned
    }
}

/// The mover's WXF file number: files 1-9 counted from the mover's right.
static int wxf_file(Color c, int file) { return c == RED ? FILE_NB - file : file + 1; }

/// How far rank r lies from side c's own back rank.
static int wxf_depth(Color c, int rank) { return c == RED ? rank : RANK_NB - 1 - rank; }

/// The letter WXF gives a piece type.
static char wxf_letter(PieceType t) { return "?KAEHRCP"[t]; }

/// Whether two or more of piece p (a soldier) stand on a file other than file.
static bool wxf_other_tandem(const Board *b, Piece p, int file)
{
    for (int f = 0; f < FILE_NB; f++) {
        int n = 0;
        for (int r = 0; r < RANK_NB; r++)
            n += f != file && board_piece(b, sq_make(f, r)) == p;
        if (n >= 2)
            return true;
    }
    return false;
}

/// The WXF text that names the moving piece: letter and file (C2), or for pieces of a kind
/// on one file their place, front (+) to rear (-): R+ R-; P+ P3 P- for three; ++ P+ P- -- for
/// four (P3 in the middle of five); a file digit for the letter when soldiers stand in tandem
/// on two files (3+). Advisors and elephants keep letter and file (A6+5, A6-5): the direction
/// tells two on a file apart, and Chinese notation (and XQBase) writes them so. plain: always
/// letter and file.
static void wxf_piece(const Board *b, Square from, bool plain, char out[4])
{
    Piece p = board_piece(b, from);
    Color c = piece_color(p);
    PieceType t = piece_type(p);
    int file = sq_file(from), depth = wxf_depth(c, sq_rank(from)), n = 0, ahead = 0;
    for (int r = 0; r < RANK_NB; r++) {
        if (board_piece(b, sq_make(file, r)) == p) {
            n++;
            ahead += wxf_depth(c, r) > depth;
        }
    }
    int behind = n - 1 - ahead, digit = wxf_file(c, file), edge = n >= 4 ? 1 : 0;
    char lead = t == SOLDIER && wxf_other_tandem(b, p, file) ? (char)('0' + digit) : wxf_letter(t);
    if (plain || n < 2 || t == ADVISOR || t == ELEPHANT)
        snprintf(out, 4, "%c%d", wxf_letter(t), digit);
    else if (n >= 4 && (ahead == 0 || behind == 0))
        snprintf(out, 4, "%s", ahead == 0 ? "++" : "--");
    else if (ahead == edge || behind == edge)
        snprintf(out, 4, "%c%c", lead, ahead == edge ? '+' : '-');
    else
        snprintf(out, 4, "%c%d", lead, digit); // the middle one of three or five
}

/// The WXF text of m with the piece named as wxf_piece names it.
static void wxf_text(const Board *b, Move m, bool plain, char out[PGN_TOKEN_MAX])
{
    Square from = move_from(m), to = move_to(m);
    Piece p = board_piece(b, from);
    Color c = piece_color(p);
    PieceType t = piece_type(p);
    int d0 = wxf_depth(c, sq_rank(from)), d1 = wxf_depth(c, sq_rank(to));
    char op = d1 == d0 ? '.' : d1 > d0 ? '+' : '-';
    // The last digit: the file reached for a move along a rank and for the pieces that move
    // diagonally (advisor, elephant, horse), else the number of ranks moved.
    bool to_file = op == '.' || t == ADVISOR || t == ELEPHANT || t == HORSE;
    int last = to_file ? wxf_file(c, sq_file(to)) : abs(d1 - d0);
    char who[4];
    wxf_piece(b, from, plain, who);
    snprintf(out, PGN_TOKEN_MAX, "%s%c%d", who, op, last);
}

void pgn_move_wxf(const Board *b, Move m, char out[PGN_TOKEN_MAX]) { wxf_text(b, m, false, out); }

void pgn_move_wxf_plain(const Board *b, Move m, char out[PGN_TOKEN_MAX])
{
    wxf_text(b, m, true, out);
}

/// A move in the notation asked for, in position b (before the move).
static void notation_text(const Board *b, Move m, const PgnTags *tags, char out[PGN_TOKEN_MAX])
{
    char mv[MOVE_TEXT_MAX];
    if (tags->notation == PGN_NOTATION_WXF) {
        wxf_text(b, m, false, out);
        return;
    }
    bool iccs = tags->notation == PGN_NOTATION_ICCS;
    move_text(m, iccs ? 0 : tags->rank_base, mv);
    if (!iccs) {
        snprintf(out, PGN_TOKEN_MAX, "%s", mv);
        return;
    }
    // ICCS: H2-E2, capital files, ranks 0-9.
    snprintf(out, PGN_TOKEN_MAX, "%c%c-%c%c", toupper((unsigned char)mv[0]), mv[1],
             toupper((unsigned char)mv[2]), mv[3]);
}

int pgn_write(FILE *out, const GameRecord *rec, const PgnTags *tags)
{
    char date[16] = "????.??.??";
    time_t now = time(NULL);
    struct tm tm;
    // The date of writing, in local time: the tag is for people.
    if (localtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y.%m.%d", &tm);
    const char *red = rec->names[rec->red], *black = rec->names[1 - rec->red];
    char round[16];
    snprintf(round, sizeof round, "%d", tags->round);
    put_tag(out, "Event", tags->event ? tags->event : "xqforge match");
    put_tag(out, "Site", tags->site ? tags->site : "?");
    put_tag(out, "Date", date);
    put_tag(out, "Round", round);
    // White and Black for PGN tools that know no xiangqi (Red moves first, as White does), Red to
    // say it plainly; FEN with SetUp always, so a game from any opening replays anywhere;
    // Termination is the PGN standard's value, TerminationDetails our name with its detail
    // (apply_tag reads both, and the older form with our name in Termination).
    put_tag(out, "White", red);
    put_tag(out, "Black", black);
    put_tag(out, "Red", red);
    put_tag(out, "Result", pgn_result(rec->outcome));
    put_tag(out, "FEN", rec->start_fen);
    put_tag(out, "SetUp", "1");
    put_tag(out, "Variant", "xiangqi");
    // XQBase's tag for ICCS and WXF games; coordinates need none.
    if (tags->notation == PGN_NOTATION_ICCS)
        put_tag(out, "Format", "ICCS");
    else if (tags->notation == PGN_NOTATION_WXF)
        put_tag(out, "Format", "WXF");
    put_tag(out, "TimeControl", tags->time_control ? tags->time_control : "-");
    if (tags->rules)
        put_tag(out, "Rules", tags->rules);
    char term[GAME_DETAIL_MAX + 64];
    snprintf(term, sizeof term, "%s%s%s", game_termination_name(rec->term),
             rec->detail[0] ? ": " : "", rec->detail);
    put_tag(out, "Termination", pgn_termination_standard(rec->term));
    put_tag(out, "TerminationDetails", term);
    char plies[16];
    snprintf(plies, sizeof plies, "%d", rec->ply_count);
    put_tag(out, "PlyCount", plies);
    fputc('\n', out);

    // Move numbers follow the FEN's: its side to move and full-move counter. The board follows
    // the game for WXF, whose text depends on the position.
    Board *b = malloc(sizeof *b);
    int fullmove = 1;
    bool black_first = false, have_board = false;
    if (b && board_set_fen(b, rec->start_fen, NULL, 0) == FEN_OK) {
        fullmove = b->fullmove;
        black_first = b->side == BLACK;
        have_board = true;
    }
    int col = 0;
    for (int i = 0; i < rec->ply_count; i++) {
        bool red_moves = (i % 2 == 0) != black_first;
        if (red_moves)
            col += fprintf(out, "%d. ", fullmove);
        else if (i == 0)
            col += fprintf(out, "%d... ", fullmove);
        char mv[PGN_TOKEN_MAX];
        Move m = rec->moves[i].move;
        // WXF needs the position: without it (no memory, or a record whose FEN or moves are
        // wrong) the move is written in coordinates, which every reader takes.
        bool wxf = tags->notation == PGN_NOTATION_WXF;
        have_board = have_board && wxf && b->hist_len < BOARD_HISTORY_MAX && movegen_is_legal(b, m);
        if (wxf && !have_board)
            move_text(m, 0, mv);
        else
            notation_text(b, m, tags, mv);
        if (have_board)
            board_make_move(b, m);
        col += fprintf(out, "%s", mv);
        put_comment(out, &rec->moves[i], i < rec->book_plies);
        // A comment's width is estimated, not measured: lines stay near PGN's 80 columns.
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
    free(b);
    fprintf(out, "%s\n\n", pgn_result(rec->outcome));
    return ferror(out) ? -1 : 0;
}

Outcome pgn_outcome(const char *r)
{
    if (strcmp(r, "1-0") == 0)
        return OUTCOME_RED_WINS;
    if (strcmp(r, "0-1") == 0)
        return OUTCOME_BLACK_WINS;
    if (strcmp(r, "1/2-1/2") == 0)
        return OUTCOME_DRAW;
    return OUTCOME_NONE;
}
