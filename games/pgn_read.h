// SPDX-License-Identifier: MIT
// PGN for xiangqi games, read: the strict reader of our own output (pgn.h writes it), and a
// tolerant reader of other tools' xiangqi PGNs (cutechess, fastchess: coordinate moves with
// ranks 0-9 or 1-10, SAN, ICCS or WXF) for the referee (`xqforge judge`): the game as
// written, its replay, and how it says it ended.
#pragma once

#include <stdio.h>

#include "game.h"
#include "pgn.h"

enum { PGN_LINE_MAX = 4096 };

/// Reads the next game written in this format (tags, coordinate moves, comments): 1 when a
/// game was read, 0 at the end of the input, -1 on a malformed game (why names the line and
/// the fault; reading may go on with the next game). Moves are checked for legality from
/// the FEN tag (or the start position); {book} comments mark book moves; names are taken as
/// player 0 = Red.
int pgn_read(FILE *in, GameRecord *rec, int *lineno, char *why, size_t why_len);

enum { PGN_TEXT_MAX = 256 };

/// One game of any xiangqi PGN, as written: the tags a referee needs and the move texts, not
/// yet replayed (pgn_text_replay does that).
typedef struct {
    char white[PLAYER_NAME_MAX], black[PLAYER_NAME_MAX]; // White is Red
    char fen[BOARD_FEN_INPUT_MAX];                       // "" : the start position
    char variant[32], rules[32];                         // "" when the tag is absent
    char format[16];                        // XQBase's Format tag ("ICCS", "WXF"), "" when absent
    char result_tag[16];                    // the Result tag, "" if absent
    char termination[PGN_TEXT_MAX];         // the Termination tag, "" if absent
    char termination_details[PGN_TEXT_MAX]; // TerminationDetails (ours: the specific reason)
    char end_comment[PGN_TEXT_MAX]; // the comments after the last move (cutechess and fastchess
                                    // end them with how the game ended: "White mates")
    Outcome outcome;                // the movetext's result (* is OUTCOME_NONE)
    int first_line;                 // where the game starts in the input
    int ply_count;
    char moves[GAME_MAX_PLIES][PGN_TOKEN_MAX]; // each move as written ("h2e2", "Che3", "h3-e3+")
    int move_line[GAME_MAX_PLIES];
} PgnText;

/// Reads the next game of any PGN: 1 when a game was read, 0 at the end of the input, -1 on
/// a game that cannot be read (why names the line and the fault; reading may go on with the
/// next game): a malformed tag, a line that is too long or not text, a token that is neither
/// a move, a move number nor a result, more than GAME_MAX_PLIES moves, no result. Tolerated
/// and skipped: `%` escape lines, `{...}` and `;` comments, `(...)` variations, `$n` NAGs.
/// Moves are only stored, not checked.
int pgn_read_text(FILE *in, PgnText *g, int *lineno, char *why, size_t why_len);

enum { PGN_RANKS_AUTO = -1 };

typedef struct {
    int plies;     // moves made on the board: all of the game's when why is empty
    int rank_base; // 0 or 1: the ranks the moves were read in
    char why[200]; // why move plies + 1 (or the start position) was refused; "" if none was
} PgnReplay;

/// Sets b to the game's start position (its FEN, or the start) and makes its moves. A move is
/// a coordinate move (h2e2; also H2-E2, h2-e2, h2xe2, Ch2e2), SAN as cutechess writes it
/// (Che3, Nc3, e5, Rxa10+) or WXF (C2.5, H2+3, R+.3, C2=5), with check and annotation marks
/// ignored. rank_base 0 or 1 fixes
/// the ranks (0-9 ours and Pikafish's, 1-10 Fairy-Stockfish's and cutechess's); with
/// PGN_RANKS_AUTO the game's moves decide as a whole: ranks 1-10 if a move names rank 10,
/// else ranks 0-9 if one names rank 0, else ranks 0-9 unless some move is illegal that way
/// and every move is legal read in ranks 1-10 (when neither reading is legal throughout, the
/// one that goes further, ranks 0-9 on a tie, names the refused move); a game with
/// [Format "ICCS"] or [Format "WXF"] is read in ranks 0-9, as those notations are. Returns false if
/// the start position is refused (why), true otherwise, with b after r->plies moves.
bool pgn_text_replay(const PgnText *g, int rank_base, Board *b, PgnReplay *r);

/// pgn_text_replay that also keeps the first max moves made in moves[].
bool pgn_text_replay_moves(const PgnText *g, int rank_base, Board *b, PgnReplay *r, Move *moves,
                           int max);

typedef enum {
    PGN_END_UNKNOWN,    // no Termination, "normal", or a text we do not know
    PGN_END_RULE,       // a rule ending, named by rule
    PGN_END_OTHER,      // an ending outside the rules: resignation, adjudication, time, failures
    PGN_END_UNFINISHED, // the game did not finish (aborted, unterminated)
} PgnEndKind;

typedef enum { PGN_NEEDS_ANY, PGN_NEEDS_DECISIVE, PGN_NEEDS_DRAW } PgnEndNeeds;

typedef struct {
    PgnEndKind kind;
    EndReason rule;          // with PGN_END_RULE
    PgnEndNeeds needs;       // the result an ending outside the rules must have
    char text[PGN_TEXT_MAX]; // what the game says, "" if nothing: the Termination tag, else the
                             // end of the last comment
} PgnEnd;

/// How a game says it ended: its TerminationDetails tag when there is one (ours since the
/// Termination tag holds the PGN standard's value: game_termination_name, then ": detail"),
/// else its Termination tag (ours before: game_termination_name, then ": detail";
/// cutechess and fastchess: adjudication, time forfeit, illegal move, abandoned, stalled
/// connection, unterminated, normal) or, when there is none or it says "normal", the
/// description cutechess and fastchess add to the last move's comment ("White mates", "Draw by
/// 3-fold repetition", "Black wins by adjudication"). Rule names are rules_end_name's.
PgnEnd pgn_text_end(const PgnText *g);
