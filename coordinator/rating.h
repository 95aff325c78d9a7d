// SPDX-License-Identifier: MIT
// A joint rating of several engines from all their games: the Bradley-Terry model fitted by
// maximum likelihood (Hunter's MM iterations), draws counted as half a win to each side.
// Ratings are logistic Elo relative to an anchor (rating 0, as in cutechess and Ordo), with
// 95% error bars on the difference to the anchor (from the inverse Fisher information).
// The prior: one virtual draw added to every pair of engines that met (RATING_PRIOR_DRAWS),
// which keeps the fit finite; an engine whose rating is nevertheless not estimable (its side
// never scored, or never dropped, a point against the anchor's) is flagged, not given the
// number the prior makes up. Only the engines linked to the anchor by games are rated.
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum {
    RATING_MAX_PLAYERS = 16,
    RATING_PRIOR_DRAWS = 1, // virtual draws added to each pair of engines that met
};

typedef struct {
    int players;
    // Results of i against j: wins[i][j] = games i won against j; draws symmetric.
    uint64_t wins[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS];
    uint64_t draws[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS];
} RatingTable;

/// What one engine's rating is.
typedef enum {
    RATING_FINITE,    // a finite Elo relative to the anchor (the anchor itself: 0 +/- 0)
    RATING_ABOVE,     // no finite estimate: its side never dropped a point to the anchor's
    RATING_BELOW,     // no finite estimate: its side never scored a point against the anchor's
    RATING_UNBOUNDED, // no finite estimate: linked to the anchor only through an engine that
                      // has none (e.g. both beat every game against a common opponent)
    RATING_UNLINKED,  // never met the anchor, directly or through others: no common scale
    RATING_KIND_NB
} RatingKind;

typedef struct {
    int anchor;                           // the engine rated 0
    double elo[RATING_MAX_PLAYERS];       // relative to the anchor (meaningful when FINITE)
    double elo_error[RATING_MAX_PLAYERS]; // half-width of the 95% interval of elo (the anchor: 0)
    RatingKind kind[RATING_MAX_PLAYERS];
    uint64_t games[RATING_MAX_PLAYERS];
    double points[RATING_MAX_PLAYERS];
    int iterations;
    bool connected; // every player is linked to every other by games
} RatingResult;

void rating_init(RatingTable *t, int players);
/// Adds one game: a beat b (score 1), drew (0.5) or lost (0).
void rating_add(RatingTable *t, int a, int b, double score_a);
/// Fits the ratings of the engines linked to `anchor` (0 when out of range); false when the
/// anchor has no games (nothing is rated then; games and points are still filled in).
bool rating_fit(const RatingTable *t, int anchor, RatingResult *out);
/// "rated", "above", "below", "unbounded", "not connected" (report.json's `status`).
const char *rating_kind_name(RatingKind k);
