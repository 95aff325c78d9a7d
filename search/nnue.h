// SPDX-License-Identifier: MIT
// NNUE: an efficiently updatable evaluation network, the alternative to eval.c's linear
// evaluation (which stays, and is what Texel and SPSA tune).
//
// Two architectures, chosen per net file by its version:
//
// "XQ1" (version 1): features are (piece colour relative to the perspective, piece type,
// square seen from the perspective): 2 x 7 x 90 = NNUE_FEATURES. A perspective sees the board
// as its own side: Red's squares as they are, Black's with the ranks flipped (rank r -> 9 - r)
// and the colours swapped, so a net learns one side's view and plays both. index =
// (rel_colour * 7 + (type - 1)) * 90 + rel_square, rel_colour 0 = the perspective's pieces.
//
// "XQ2" (version 2): king-bucketed. The perspective's own general, seen from the perspective,
// stands on one of the 9 palace points; mirrored left-right (files d and f are one column,
// the board then read with file x -> 8 - x when the general is on file f) they are
// NNUE_BUCKETS = 6: bucket = rel_rank * 2 + (file == e), rel_rank 0..2. index = bucket *
// NNUE_FEATURES + the XQ1 index of the (mirrored) square: 6 x 1260 = NNUE_FEATURES_XQ2. The
// mirror halves the side columns' weights (the rules are symmetric left-right) and so doubles
// their training data; every general move changes the bucket, so it refreshes that
// perspective's accumulator (the other perspective still updates incrementally).
//
// Each perspective has an accumulator of `hidden` int16 units (one shared feature transformer:
// bias + the sum of the active features' columns). The output is
//   out = sum_i crelu(acc_stm[i]) * w_out[i] + sum_i crelu(acc_nstm[i]) * w_out[hidden + i]
//         + b_out
// with crelu(x) = min(max(x, 0), qa), in int32, and the evaluation in centipawns for the side
// to move is out * scale / (qa * qb) (division truncating toward zero).
//
// Net file (".nnue"), little-endian:
//   header, 64 bytes: "XQNNUE\0\0" (8), u32 version (1 or 2), u32 features (NNUE_FEATURES for
//     version 1, NNUE_FEATURES_XQ2 for version 2), u32 hidden (a multiple of 32,
//     32..NNUE_HIDDEN_MAX), u32 qa, u32 qb,
//     u32 scale, u64 payload bytes, u64 content hash (FNV-1a 64 of the payload), 12 bytes of
//     description at 48..59 (NUL-padded text, e.g. the training run's name; longer text is
//     cut to 12), u32 CRC-32 of bytes 0..59 at 60
//   payload: i16 ft_weight[features][hidden] (feature-major), i16 ft_bias[hidden],
//     i16 out_weight[2 * hidden], i32 out_bias.
// A file whose magic, version, sizes, header CRC or content hash is wrong is refused with a
// sentence naming the fault. A net's id is the first 12 hex digits of its content hash.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

enum {
    NNUE_VERSION = 1, // XQ1, the version nnue_alloc makes
    NNUE_VERSION_XQ2 = 2,
    NNUE_HEADER = 64,
    NNUE_FEATURES = 2 * 7 * SQUARE_NB, // 1260, XQ1's
    NNUE_BUCKETS = 6,                  // XQ2's general buckets (9 palace points, mirrored)
    NNUE_FEATURES_XQ2 = NNUE_BUCKETS * NNUE_FEATURES, // 7560
    NNUE_HIDDEN_MAX = 1024,
    NNUE_QA = 255,    // the accumulator's clip, and the float -> int16 scale of the transformer
    NNUE_QB = 64,     // the float -> int16 scale of the output weights
    NNUE_SCALE = 400, // centipawns per unit of the float net's output
    NNUE_ID_MAX = 13, // hex id plus terminator
    NNUE_DESCRIPTION = 12, // description bytes in the header (48..59)
    NNUE_EVAL_MAX = 20000, // evaluations are clamped to +-this, well inside the mate scores
    NNUE_STACK_MAX = 160,  // accumulators a search thread keeps (plies from its root)
    NNUE_LOOKBACK = 8,     // plies an update may replay before a refresh from scratch is cheaper
    NNUE_REFRESH_SLOTS = 2 * NNUE_BUCKETS // refresh cache entries a perspective: bucket x mirror
};

typedef enum {
    NNUE_OK,
    NNUE_ERR_IO,      // the file cannot be read or written
    NNUE_ERR_FORMAT,  // bad magic or header CRC, or a size that disagrees with the header
    NNUE_ERR_VERSION, // another version or feature set
    NNUE_ERR_HASH,    // the payload's content hash does not match the header's: a damaged file
    NNUE_ERR_NOMEM,
    NNUE_STATUS_NB
} NnueStatus;

const char *nnue_strerror(NnueStatus st);

typedef struct {
    int version;  // 1 (XQ1) or 2 (XQ2)
    int features; // NNUE_FEATURES or NNUE_FEATURES_XQ2, as the version says
    int hidden, qa, qb, scale;
    uint64_t hash;
    char description[17]; // NUL-terminated; a file holds its first NNUE_DESCRIPTION bytes
    int16_t *ft_weight;   // [features][hidden], 64-byte aligned
    int16_t *ft_bias;     // [hidden]
    int16_t *out_weight;  // [2 * hidden]
    int32_t out_bias;
} NnueNet;

/// Parses a net from memory (a file's bytes, or the embedded default). On failure writes a
/// sentence naming the fault into why (if not NULL) and leaves *net empty.
NnueStatus nnue_load_memory(NnueNet *net, const void *data, size_t len, char *why, size_t why_len);
NnueStatus nnue_load_file(NnueNet *net, const char *path, char *why, size_t why_len);
/// Writes a net file (header with the content hash, then the payload).
NnueStatus nnue_save_file(const NnueNet *net, const char *path);
/// Allocates the arrays of a zeroed XQ1 net of `hidden` units (training's export fills them).
NnueStatus nnue_alloc(NnueNet *net, int hidden);
/// The same for a net of the given version (1: XQ1, 2: XQ2); NNUE_ERR_VERSION for another.
NnueStatus nnue_alloc_version(NnueNet *net, int version, int hidden);
/// The number of features of a net version (0 for an unknown version).
int nnue_version_features(int version);
/// The version's name: "XQ1", "XQ2" ("?" for an unknown version).
const char *nnue_version_name(int version);
void nnue_free(NnueNet *net);
/// Computes net->hash from the payload (after filling the arrays by hand).
void nnue_rehash(NnueNet *net);
/// The net's id: the first 12 hex digits of its content hash.
void nnue_id(const NnueNet *net, char out[NNUE_ID_MAX]);

/// Fills an allocated net with pseudo-random weights of a trained net's magnitudes (tests,
/// speed measurements: `xqforge nnue net --random`), description "random", and rehashes.
void nnue_randomize(NnueNet *net, uint64_t seed);

/// The embedded default net (NULL when the build has none).
const NnueNet *nnue_default(void);

/// The active XQ1 features of the position from perspective c, written to out (at most 32 for
/// the 32 pieces); returns their number. Shared by the engine, the trainer and tests.
int nnue_features(const Board *b, Color c, uint16_t *out);
/// The feature of piece p on square s from perspective c (XQ1).
int nnue_feature(Color c, Piece p, Square s);
/// The XQ2 bucket (0..NNUE_BUCKETS-1) of perspective c whose general stands on king, and
/// whether that perspective reads the board mirrored left-right.
int nnue_bucket(Color c, Square king, bool *mirror);
/// The XQ2 feature of piece p on square s from perspective c whose general stands on king.
int nnue_feature_xq2(Color c, Square king, Piece p, Square s);
/// The active features of a net version (1 or 2) from perspective c, as nnue_features.
int nnue_features_version(int version, const Board *b, Color c, uint16_t *out);

/// One perspective pair of accumulators and the key of the position it was computed for.
/// Each perspective is valid on its own: after an XQ2 general move only the mover's is
/// refreshed, and an entry on the way may then hold the other perspective alone.
typedef struct {
    _Alignas(64) int16_t v[COLOR_NB][NNUE_HIDDEN_MAX];
    uint64_t key;
    bool valid[COLOR_NB];
} NnueAccumulator;

/// The evaluation of b from scratch (no accumulator reuse), centipawns for the side to move.
int nnue_evaluate_full(const NnueNet *net, const Board *b);

/// The accumulators of b computed from scratch (both perspectives); acc->key = b->key.
void nnue_accumulator_refresh(const NnueNet *net, const Board *b, NnueAccumulator *acc);
/// The evaluation from a ready accumulator with side stm to move, centipawns for stm,
/// clamped to +-NNUE_EVAL_MAX. AVX2 when the build has it, else plain C; the same result.
int nnue_accumulator_evaluate(const NnueNet *net, const NnueAccumulator *acc, Color stm);

/// A search thread's accumulators, entry i for the position at board history length base + i,
/// each holding the key it was computed for, so an entry is never used for another position.
/// Evaluation is lazy: per perspective, it looks back for the nearest valid ancestor (at most
/// NNUE_LOOKBACK plies, and not past an XQ2 move of that perspective's general) and replays
/// the moves since (a null move changes no feature), else refreshes.
/// The net is shared read-only between threads; the stack is the thread's own.
/// A refresh starts from the thread's cached accumulator of the same perspective, general's
/// bucket and mirroring (a "Finny table", as Stockfish and Berserk keep one per king bucket) and
/// applies only the points whose piece differs from the cached board, instead of summing every
/// piece.
typedef struct {
    _Alignas(64) int16_t v[NNUE_HIDDEN_MAX];
    uint8_t squares[SQUARE_NB]; // the board the accumulator is for (this perspective's view)
    bool valid;
} NnueRefreshEntry;

typedef struct {
    const NnueNet *net;
    int base;
    NnueAccumulator acc[NNUE_STACK_MAX];
    NnueRefreshEntry cache[COLOR_NB][NNUE_REFRESH_SLOTS]; // by perspective, bucket and mirror
} NnueStack;

/// Forgets every entry and roots the stack at history length base (the search's root).
void nnue_stack_reset(NnueStack *st, const NnueNet *net, int base);
/// The evaluation of b (a descendant of the root position by the moves of its history),
/// equal to nnue_evaluate_full(st->net, b).
int nnue_stack_evaluate(NnueStack *st, const Board *b);
