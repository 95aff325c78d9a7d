// SPDX-License-Identifier: MIT
// A joint rating of several engines from all their games: the Bradley-Terry model fitted by
// maximum likelihood (Hunter's MM iterations), draws counted as half a win to each side.
// Ratings are logistic Elo relative to the field's mean, with 95% error bars from the
// inverse Fisher information (the Laplacian pseudo-inverse, so errors are relative to the
// mean too). One virtual draw between every pair that met keeps perfect scores finite.
#pragma once

#include <stdbool.h>
#include <stdint.h>

enum { RATING_MAX_PLAYERS = 16 };

typedef struct {
    int players;
    // Results of i against j: wins[i][j] = games i won against j; draws symmetric.
    uint64_t wins[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS];
    uint64_t draws[RATING_MAX_PLAYERS][RATING_MAX_PLAYERS];
} RatingTable;

typedef struct {
    double elo[RATING_MAX_PLAYERS];       // relative to the mean of the field
    double elo_error[RATING_MAX_PLAYERS]; // half-width of the 95% interval
    uint64_t games[RATING_MAX_PLAYERS];
    double points[RATING_MAX_PLAYERS];
    int iterations;
    bool connected; // every player is linked to every other by games (else no fit)
} RatingResult;

void rating_init(RatingTable *t, int players);
/// Adds one game: a beat b (score 1), drew (0.5) or lost (0).
void rating_add(RatingTable *t, int a, int b, double score_a);
/// Fits the ratings; false if the table is empty or not connected (result->connected).
bool rating_fit(const RatingTable *t, RatingResult *out);
