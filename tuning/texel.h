// SPDX-License-Identifier: MIT
// Texel-style fitting of the evaluation weights over positions with game results.
//
// Dataset file (".xqd"), little-endian:
//   header, 48 bytes: "XQTEXEL\0" (8), u32 version (TEXEL_VERSION), u32 position record size
//     (48), u64 position count, u64 trace terms in all, u64 feature layout (FNV-1a of the
//     weight names in table order), u32 weights in the layout, u32 CRC-32 of bytes 0..43
//   then per position: 48 bytes: 90 points as 45 bytes of nibbles (piece code, low nibble
//     first, points rank-major from a0), u8 side (0 Red, 1 Black), u8 result for Red
//     (0 loss, 1 draw, 2 win), u8 ply bucket (ply / 4, capped at 255);
//     then its trace: u8 phase, u8 zero, u16 terms n, n x (u16 weight id, i16 coefficient);
//   after every TEXEL_BLOCK positions (and after the last), u32 CRC-32 of the block's bytes.
// Loading a million positions is a single read, the checksums and a copy of the traces (every
// 64th is checked against this build's evaluation); a damaged block is refused by its
// positions and byte offsets, a dataset of an older version (no checksums) with the advice to
// extract it again. A dataset of another feature layout, or whose
// sampled traces disagree with the evaluation, is traced again from its positions (each
// decoded as strictly as a FEN): the fit always uses the very code the search runs.
//
// Fit: minimise mean (result - sigmoid(K * eval / 400))^2 + l2 / N * sum over the tuned
// weights of ((w - start) / 100)^2, sigmoid(x) = 1 / (1 + 10^-x), eval in centipawns for Red
// computed from the trace (mg terms times phase/32, eg terms times (32 - phase)/32), N the
// training positions (those not held out, below). K is fitted once with the start weights and then
// held: the L2 pull anchors the scale (a fit may not inflate every weight to sharpen its
// predictions), and as a prior worth l2 positions per weight it matters on small datasets and fades
// on large ones. Then Adam on every tuned weight, full batch, so a run is deterministic. Sums over
// positions go through a reduce callback, so ranks of a cluster each hold a shard and add their
// sums (MPI_Allreduce lives in proto/link.c, not here). Validation: the positions of the games
// hashed into the val fraction (texel_game_held) are held out: the fit, K included, never sees
// them, and their loss is reported beside the training loss at every epoch. A dataset records no
// game: a game is a run of records whose ply bucket never falls and whose result stays the same
// (texel_writer_add_game writes a game's positions so), which keeps every game's positions together
// (two games may merge, never split). The weights written are those of the epoch of the lowest
// validation loss (epoch 0: the start weights, when the fit never improved on them: it only
// overfits).
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "board.h"
#include "params.h"

enum {
    TEXEL_VERSION = 3, // 3: records in checksummed blocks
    TEXEL_HEADER = 48,
    TEXEL_RECORD = 48,
    TEXEL_BLOCK = 256,            // positions under one CRC-32
    TEXEL_MAX_POSITIONS = 1 << 28 // refused above this before allocating
};

typedef enum {
    TEXEL_OK,
    TEXEL_ERR_IO,        // a file cannot be read or written
    TEXEL_ERR_FORMAT,    // not a dataset: bad magic, header CRC or record size
    TEXEL_ERR_VERSION,   // a dataset of another version or board encoding
    TEXEL_ERR_TRUNCATED, // fewer (or more) record bytes than the header's count
    TEXEL_ERR_POSITION,  // a record is not a legal position (named by its index)
    TEXEL_ERR_NOMEM,
    TEXEL_ERR_REDUCE,   // the reduce callback failed (another rank is gone)
    TEXEL_ERR_CONFIG,   // bad fit settings
    TEXEL_ERR_CHECKSUM, // a block of records whose CRC-32 does not match: a damaged file
    TEXEL_ERR_STALE,    // a checkpoint made from other inputs or settings (named)
    TEXEL_DRAINED,      // stopped by cfg->stop after a checkpoint: resume to finish
    TEXEL_STATUS_NB
} TexelStatus;

const char *texel_strerror(TexelStatus st);

// ---- Writing a dataset ------------------------------------------------------------------

typedef struct TexelWriter TexelWriter;

/// Creates path (through "path.tmp", renamed on close so a half-written set never appears).
TexelStatus texel_writer_open(const char *path, TexelWriter **out, char *why, size_t why_len);
/// Adds a position and the game's result for Red (0, 0.5 or 1) reached after `ply` plies.
TexelStatus texel_writer_add(TexelWriter *w, const Board *b, double red_result, int ply);
uint64_t texel_writer_count(const TexelWriter *w);
/// Adds the quiet positions of one game (from start_fen, after `skip` plies and the
/// book_plies opening moves) with the game's result for Red; b is scratch. *looked (may be
/// NULL) counts the positions considered. TEXEL_ERR_POSITION if the FEN or a move is bad.
TexelStatus texel_writer_add_game(TexelWriter *w, Board *b, const char *start_fen,
                                  const Move *moves, int n, int book_plies, double red_result,
                                  int skip, uint64_t *looked);
/// Drops what was written (the file at path is left as it was); frees w.
void texel_writer_discard(TexelWriter *w);
/// Writes the header and renames into place; frees w either way.
TexelStatus texel_writer_close(TexelWriter *w, char *why, size_t why_len);

/// Whether a position is quiet enough to label with its game's result: the side to move is
/// not in check and a short capture-only search (quiescence, up to 8 plies) finds no capture
/// better than standing pat, i.e. the best move is not a capture.
bool texel_is_quiet(Board *b, const Weights *w);

// ---- A loaded set ------------------------------------------------------------------------

typedef struct TexelSet TexelSet;

/// Loads the positions i with i % shards == shard, decoding and tracing them on `threads`
/// threads. *total receives the file's position count (may be NULL).
TexelStatus texel_set_load(const char *path, int shard, int shards, int threads, TexelSet **out,
                           uint64_t *total, char *why, size_t why_len);
void texel_set_free(TexelSet *s);
uint64_t texel_set_size(const TexelSet *s);
/// The evaluation for Red of position i from its trace and integer weights, with the same
/// integer rounding as the evaluation: equals eval_evaluate from Red's side exactly.
int texel_set_eval(const TexelSet *s, uint64_t i, const Weights *w);
/// Position i's game result for Red (0, 0.5, 1).
double texel_set_result(const TexelSet *s, uint64_t i);
/// The game of position i: its number in the file (texel.h, top, says how games are found).
uint32_t texel_set_game(const TexelSet *s, uint64_t i);
/// Whether game number `game` is held out for validation at fraction val (a hash: the same
/// games on every rank and run).
bool texel_game_held(uint32_t game, double val);

/// Reads only the header: position count (for `texel info`).
TexelStatus texel_file_info(const char *path, uint64_t *count, char *why, size_t why_len);

// ---- Loss, gradient, fit -------------------------------------------------------------------

/// Adds buf[0..n) over every rank in place; NULL means one process.
typedef bool (*TexelReduceFn)(void *ctx, double *buf, int n);

typedef struct {
    TexelReduceFn reduce;
    void *ctx;
    int threads;
} TexelExec;

/// Mean squared error over all ranks' positions with real-valued weights w[PARAM_NB].
TexelStatus texel_loss(const TexelSet *s, const double *w, double k, const TexelExec *x,
                       double *loss);
/// The loss and its gradient d loss / d w[i] for every weight (over all ranks).
TexelStatus texel_gradient(const TexelSet *s, const double *w, double k, const TexelExec *x,
                           double *loss, double *grad);
/// The K minimising the loss for weights w (golden-section search on [0.05, 5]).
TexelStatus texel_fit_k(const TexelSet *s, const double *w, const TexelExec *x, double *k);

/// What a fit is made from besides its settings: a checkpoint records these with the
/// settings, and one made from anything else is refused (never resumed, never ignored).
typedef struct {
    uint64_t data;  // FNV-1a of the dataset file's bytes (files_hash)
    uint64_t start; // of the start weights file (0: the built-in defaults)
    uint64_t job;   // the caller's identity of anything else (a run's job identity; 0: none)
    int ranks;      // the shards the positions are split into (the sums' rounding follows them)
} TexelInputs;

// The loss CSV's first line (tuning/fitrun.h): val is the held-out games' loss (empty when
// there are none).
#define TEXEL_LOSS_HEADER "epoch,loss,val"
#define TEXEL_VAL_DEFAULT 0.1 // the fraction of games held out for validation

enum {
    TEXEL_L2_DEFAULT = 10,             // the L2 pull (texel.h, top; job/job.c's default too)
    TEXEL_CHECKPOINT_EVERY = 25,       // epochs between checkpoints by default
    TEXEL_CHECKPOINT_SECONDS = 60,     // and at most this long between them by default
    TEXEL_POSITIONS_PER_WEIGHT = 1000, // fewer per tuned weight: the fit warns (overfitting)
    TEXEL_BOUNDS_WARN = 3              // this many tuned weights or more on a bound: it warns
};

typedef struct {
    int epochs;
    double lr;  // Adam step size, centipawns
    double l2;  // the pull towards the start: positions' worth per weight (above)
    double k;   // 0: fit K first
    double val; // the fraction of games held out for validation (0: none, 0 to 0.5)
    bool tuned[PARAM_NB];
    const char *checkpoint;    // resume state (NULL: none)
    int checkpoint_every;      // epochs between checkpoints (0: TEXEL_CHECKPOINT_EVERY); also
    double checkpoint_seconds; // when this long passed (0: never by time), at the end, on stop
    bool fresh;                // an existing checkpoint is not read (the first write replaces it)
    TexelInputs inputs;        // with epochs, lr, l2, k, val, tuned: what the checkpoint must match
    const atomic_bool *stop;   // set (on any rank): checkpoint after this epoch, TEXEL_DRAINED
    FILE *log;                 // progress lines (NULL: quiet)
    FILE *loss_csv; // TEXEL_LOSS_HEADER rows: the loss after `epoch` steps (fitrun_loss_open,
                    // with the checkpoint's epoch as the rows kept)
    /// Called with the training and validation loss (NaN: none) after `epoch` steps (0: the
    /// start weights) and those weights, for epoch = the resumed epoch (or 0) .. epochs (NULL:
    /// none); the report is refreshed here.
    void (*on_epoch)(void *ctx, int epoch, double loss, double val, const double *w);
    void *ctx;
} TexelFitConfig;

typedef struct {
    double k, loss_start, loss_end;
    double val_start, val_end;  // the validation loss (NaN: none held out)
    int best_epoch;             // the epoch whose weights are the output (the last without val)
    double best_val, best_loss; // its validation and training loss
    int epochs_done, resumed_from;
    double seconds_per_epoch;
    bool drained; // stopped early by cfg->stop (checkpointed at epochs_done)
} TexelFitReport;

/// The tuned weights that the fit moved (w differs from start) onto their min or max: their
/// ids into ids (room for PARAM_NB), the count returned.
int texel_at_bounds(const Weights *w, const Weights *start, const bool *tuned, int *ids);

/// Whether cfg's checkpoint (tuning/fitrun.h) will be resumed: TEXEL_OK with *found false (no
/// file there, or cfg->fresh) or true (made from these very inputs and settings) and *epoch
/// its completed epochs (0 when none); TEXEL_ERR_STALE naming the first difference
/// ("checkpoint P was made from another dataset (hash X, now Y)"), or what else is wrong with
/// the file, for anything else.
TexelStatus texel_checkpoint_check(const TexelFitConfig *cfg, bool *found, int *epoch, char *why,
                                   size_t why_len);

/// Fits from start, resuming from cfg's checkpoint when texel_checkpoint_check finds it (on the
/// rank whose cfg names one; a refused one makes every rank return TEXEL_ERR_STALE); out
/// receives the best-validation epoch's weights (the last with val 0) rounded and clamped to
/// their ranges.
TexelStatus texel_fit(const TexelSet *s, const TexelFitConfig *cfg, const Weights *start,
                      const TexelExec *x, Weights *out, TexelFitReport *rep, char *why,
                      size_t why_len);
