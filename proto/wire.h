// SPDX-License-Identifier: MIT
// The msgpack wire protocol between MPI workers and the coordinator (rank 0). Both sides link
// this library and nothing of each other. Every message is the array
// ["XQ", WIRE_VERSION, kind, body]; the body layouts are listed in proto/README.md.
// wire_unpack validates a received message completely (size, encoding, magic, version, kind,
// every field's type and range) before the caller sees any of it.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "types.h"

#define WIRE_MAGIC "XQ"

enum {
    WIRE_VERSION = 8,                 // bumped on any change to a body layout
    WIRE_MAX_MESSAGE = 4 << 20,       // bytes, checked before parsing and after packing
    WIRE_MAX_PAIRS_PER_WORK = 64,     // pair ids in a WORK, pair results in a RESULT
    WIRE_MAX_GAMES_PER_PAIR = 2,      // a pair result holds 1 or 2 games
    WIRE_MAX_PLIES = 1200,            // moves in one game (GAME_MAX_PLIES)
    WIRE_MAX_TEXT = 255,              // hostname, reasons, game detail (bytes, no NUL)
    WIRE_MAX_FEN = 127,               // start FEN
    WIRE_MAX_VERSION_TEXT = 63,       // xqforge version string
    WIRE_MAX_THREADS = 65535,         // threads and concurrency in a HELLO
    WIRE_MAX_ENGINES = 8,             // engine bench signatures in a HELLO (JOB_PLAYERS_MAX)
    WIRE_TERM_LIMIT = 32,             // termination codes are < 32 (TERM_NB today is 17)
    WIRE_MAX_RANK = 0x7fffffff,       // MPI ranks are ints
    WIRE_MAX_SPSA_PARAMS = 1024,      // tuned weights in one SPSA step
    WIRE_MAX_PARAM_ID = 4095,         // engine weight ids (the table has a few hundred)
    WIRE_MAX_BOOK_CANDS = 256,        // candidates in a BOOK message (one work unit)
    WIRE_MAX_BOOK_PATH = 64,          // moves from a candidate's start position
    WIRE_DATAGEN_RECORD = 64,         // bytes of one training record (tuning/posdata.h)
    WIRE_MAX_DATAGEN_GAMES = 16,      // games in one DATAGEN unit
    WIRE_MAX_DATAGEN_RECORDS = 20000, // records in one DATAGEN message (1.28 MB)
};

typedef enum {
    WIRE_HELLO,   // worker -> coordinator: who I am, what I can do
    WIRE_REFUSE,  // coordinator -> worker: you are not admitted, and why
    WIRE_REQUEST, // worker -> coordinator: give me up to N units
    WIRE_WORK,    // coordinator -> worker: a job id and the unit ids to play
    WIRE_RESULT,  // worker -> coordinator: the played pairs and counters
    WIRE_STOP,    // coordinator -> worker: stop playing, with a reason
    WIRE_BYE,     // worker -> coordinator: I am leaving
    WIRE_BOOK,    // worker -> coordinator: the candidates of one book work unit
    WIRE_DATAGEN, // worker -> coordinator: the training records of one datagen work unit
    WIRE_KIND_NB
} WireKind;

typedef enum {
    WIRE_OK,
    WIRE_ERR_TOO_LARGE, // over WIRE_MAX_MESSAGE
    WIRE_ERR_MALFORMED, // not one complete msgpack object (truncated, bad byte, bad encoding)
    WIRE_ERR_TRAILING,  // bytes after the message
    WIRE_ERR_MAGIC,     // not an ["XQ", ...] envelope
    WIRE_ERR_VERSION,   // another protocol version
    WIRE_ERR_KIND,      // unknown message kind
    WIRE_ERR_FIELD,     // a body field of the wrong type, out of range or inconsistent
    WIRE_ERR_INVALID,   // wire_pack_*: the struct to send breaks the same rules
    WIRE_ERR_PACK,      // wire_pack_*: the output buffer refused bytes
    WIRE_ERR_NOMEM,
    WIRE_STATUS_NB
} WireStatus;

typedef enum {
    WIRE_OUTCOME_NONE, // aborted: no result
    WIRE_OUTCOME_RED_WINS,
    WIRE_OUTCOME_BLACK_WINS,
    WIRE_OUTCOME_DRAW,
    WIRE_OUTCOME_NB
} WireOutcome;

typedef enum {
    WIRE_STOP_DONE,        // the job is finished
    WIRE_STOP_INTERRUPTED, // the operator stopped the run
    WIRE_STOP_ERROR,       // the coordinator failed
    WIRE_STOP_NB
} WireStopCode;

/// Bits of WireGameMove.flags; no other bit may be set.
enum { WIRE_MOVE_HAS_SCORE = 1, WIRE_MOVE_MATE = 2, WIRE_MOVE_BOOK = 4, WIRE_MOVE_FLAGS = 7 };

typedef struct {
    uint32_t rank;
    char hostname[WIRE_MAX_TEXT + 1];
    uint32_t threads, concurrency; // 1..WIRE_MAX_THREADS
    uint64_t bench_signature, bench_nps;
    char version[WIRE_MAX_VERSION_TEXT + 1];
    // The bench signature of each engine of the job built from source, in the job's order (0:
    // not checked); engine_count 0..WIRE_MAX_ENGINES.
    int engine_count;
    uint64_t engine_bench[WIRE_MAX_ENGINES];
} WireHello;

typedef struct {
    char reason[WIRE_MAX_TEXT + 1];
} WireRefuse;

typedef struct {
    uint32_t rank;
    uint32_t units; // 1..WIRE_MAX_PAIRS_PER_WORK (game pairs, book or datagen units)
} WireRequest;

/// An SPSA step attached to a WORK: every pair of the WORK plays "plus" (the pair's first
/// player) with the weights `plus` against "minus" with `minus`. count 0: no step.
typedef struct {
    uint64_t id;
    int count;                            // 0..WIRE_MAX_SPSA_PARAMS
    uint16_t param[WIRE_MAX_SPSA_PARAMS]; // engine weight ids, distinct
    int32_t plus[WIRE_MAX_SPSA_PARAMS], minus[WIRE_MAX_SPSA_PARAMS];
} WireSpsaStep;

typedef struct {
    uint64_t job_id;
    int unit_count; // 1..WIRE_MAX_PAIRS_PER_WORK, ids distinct (pair ids in a games job)
    uint64_t unit_ids[WIRE_MAX_PAIRS_PER_WORK];
    WireSpsaStep spsa;
    // A position per unit, in unit_ids' order (a DOE book job: the leaf each unit expands);
    // fen_count is 0 (none) or unit_count.
    int fen_count;
    char fen[WIRE_MAX_PAIRS_PER_WORK][WIRE_MAX_FEN + 1];
} WireWork;

typedef struct {
    Move move;     // from | to << 7, both on the board, from != to
    uint8_t flags; // WIRE_MOVE_*; BOOK set exactly on the first book_plies moves
    uint8_t depth;
    int32_t score; // mover's view; mate distance in moves when MATE is set
    uint32_t time_ms;
} WireGameMove;

typedef struct {
    uint8_t red;     // index (0/1) of the player with Red
    uint8_t outcome; // WireOutcome
    uint8_t term;    // Termination code (games/game.h), < WIRE_TERM_LIMIT
    char detail[WIRE_MAX_TEXT + 1];
    char start_fen[WIRE_MAX_FEN + 1];
    int book_plies; // 0..ply_count
    int ply_count;  // 0..WIRE_MAX_PLIES
    WireGameMove moves[WIRE_MAX_PLIES];
} WireGame;

typedef struct {
    uint64_t pair_id;
    uint32_t opening; // index in the job's opening book
    int game_count;   // 1..WIRE_MAX_GAMES_PER_PAIR
    WireGame games[WIRE_MAX_GAMES_PER_PAIR];
} WirePair;

/// About 2 MB: allocate with wire_result_new.
typedef struct {
    uint64_t job_id;
    uint32_t rank;
    int unit_count;                          // 1..WIRE_MAX_PAIRS_PER_WORK, pair ids distinct
    WirePair units[WIRE_MAX_PAIRS_PER_WORK]; // a games job's unit is one pair
    // The worker's running totals since its HELLO (games_played >= the games in this result).
    uint64_t games_played, nodes, play_ms;
} WireResult;

typedef struct {
    uint32_t code; // WireStopCode
    char text[WIRE_MAX_TEXT + 1];
} WireStop;

typedef struct {
    uint32_t rank;
    uint64_t games_played;
    char error[WIRE_MAX_TEXT + 1]; // why the worker could not go on; "" when it could
} WireBye;

typedef struct {
    Move move;     // from | to << 7, both on the board, from != to
    int32_t score; // the shallow search's score of the move, mover's view
} WireBookMove;

/// A book candidate: a start position, the moves played from it, and the verification
/// search's score of the position reached. The coordinator replays the moves itself.
typedef struct {
    char start_fen[WIRE_MAX_FEN + 1];
    int path_len; // 0..WIRE_MAX_BOOK_PATH
    WireBookMove path[WIRE_MAX_BOOK_PATH];
    int32_t score; // Red's view, cp
} WireBookCandidate;

/// About 170 KB: allocate with wire_book_result_new. In a book job WORK's ids are work-unit
/// ids; a BOOK message reports one unit, all of its candidates in the order generated.
typedef struct {
    uint64_t job_id;
    uint32_t rank;
    uint64_t unit_id;
    int candidate_count; // 0..WIRE_MAX_BOOK_CANDS
    WireBookCandidate candidates[WIRE_MAX_BOOK_CANDS];
    // The worker's running totals since its HELLO (candidates >= the candidates here).
    uint64_t candidates_done, nodes, busy_ms;
} WireBookResult;

/// A datagen unit's positions by filter, in the order of DATAGEN's `filtered` array: every
/// position of the unit's games (seen), then the ones each filter skipped, the first that
/// applied (worker/work_datagen.h names them).
typedef enum {
    WIRE_DG_SEEN,
    WIRE_DG_OPENING,  // the opening line, the random plies, before min_ply
    WIRE_DG_UNSCORED, // no score, or a mate score
    WIRE_DG_IN_CHECK,
    WIRE_DG_CAPTURE,
    WIRE_DG_EARLY,    // the soft early-ply filter
    WIRE_DG_WDL,      // the score contradicts the game's result
    WIRE_DG_OVERFLOW, // past the records one message holds
    WIRE_DATAGEN_FILTERS
} WireDatagenFilter;

/// About 1.3 MB: allocate with wire_datagen_result_new. A datagen unit's games and the
/// records they gave, each WIRE_DATAGEN_RECORD bytes in the format of tuning/posdata.h
/// (the coordinator decodes and checks every one; this layer checks only sizes).
typedef struct {
    uint64_t job_id;
    uint32_t rank;
    uint64_t unit_id;
    uint32_t games; // played in the unit, 1..WIRE_MAX_DATAGEN_GAMES
    int count;      // records, 0..WIRE_MAX_DATAGEN_RECORDS
    uint8_t records[WIRE_MAX_DATAGEN_RECORDS * WIRE_DATAGEN_RECORD];
    // The worker's running totals since its HELLO (games_done >= games).
    uint64_t games_done, nodes, busy_ms;
    // The unit's positions by datagen's filters (WireDatagenFilter): seen, then each reason a
    // position was not recorded; seen = count + every skip (checked here).
    uint64_t filtered[WIRE_DATAGEN_FILTERS];
} WireDatagenResult;

/// A decoded message. Only `result`, `book` and `datagen` own memory; release with
/// wire_message_destroy.
typedef struct {
    WireKind kind; // WIRE_KIND_NB when nothing was decoded
    union {
        WireHello hello;
        WireRefuse refuse;
        WireRequest request;
        WireWork work;
        WireResult *result;
        WireStop stop;
        WireBye bye;
        WireBookResult *book;
        WireDatagenResult *datagen;
    };
} WireMessage;

/// A zeroed result on the heap, or NULL. wire_result_free(NULL) is a no-op.
WireResult *wire_result_new(void);
void wire_result_free(WireResult *r);
/// A zeroed book result on the heap, or NULL. wire_book_result_free(NULL) is a no-op.
WireBookResult *wire_book_result_new(void);
void wire_book_result_free(WireBookResult *r);
/// A zeroed datagen result on the heap, or NULL. wire_datagen_result_free(NULL) is a no-op.
WireDatagenResult *wire_datagen_result_new(void);
void wire_datagen_result_free(WireDatagenResult *r);

/// Appends one message to `out`. The struct is checked against the rules wire_unpack enforces
/// first (WIRE_ERR_INVALID, nothing appended); on WIRE_ERR_PACK `out` may hold a partial
/// message and should be cleared.
WireStatus wire_pack_hello(const WireHello *m, msgpack_sbuffer *out);
WireStatus wire_pack_refuse(const WireRefuse *m, msgpack_sbuffer *out);
WireStatus wire_pack_request(const WireRequest *m, msgpack_sbuffer *out);
WireStatus wire_pack_work(const WireWork *m, msgpack_sbuffer *out);
WireStatus wire_pack_result(const WireResult *m, msgpack_sbuffer *out);
WireStatus wire_pack_stop(const WireStop *m, msgpack_sbuffer *out);
WireStatus wire_pack_bye(const WireBye *m, msgpack_sbuffer *out);
WireStatus wire_pack_book(const WireBookResult *m, msgpack_sbuffer *out);
WireStatus wire_pack_datagen(const WireDatagenResult *m, msgpack_sbuffer *out);
/// Packs the message of out->kind's type.
WireStatus wire_pack(const WireMessage *m, msgpack_sbuffer *out);

/// Decodes exactly one message of `len` bytes. On failure `out->kind` is WIRE_KIND_NB and
/// `why` (may be NULL) holds a one-line reason for the log. Memory used is bounded by a small
/// multiple of `len`, itself capped at WIRE_MAX_MESSAGE. Always call wire_message_destroy.
WireStatus wire_unpack(const char *data, size_t len, WireMessage *out, char *why, size_t why_len);
void wire_message_destroy(WireMessage *m);

const char *wire_strerror(WireStatus s);
const char *wire_kind_name(WireKind k);

/// Whether messages of this kind report finished work units (RESULT, BOOK, DATAGEN): the ones
/// the coordinator stages and journals, whatever the job kind.
bool wire_is_unit_result(WireKind kind);
/// The work unit a decoded result message reports, its job id and the sending rank. False
/// when m is not one unit's result: another kind, or a RESULT holding other than one pair
/// (the coordinator journals per unit, and workers send each pair alone).
bool wire_unit_of(const WireMessage *m, uint64_t *unit, uint64_t *job_id, uint32_t *rank);
