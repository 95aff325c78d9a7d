// SPDX-License-Identifier: MIT
// The coordinator's SPSA state over a run: theta, the iteration count, and the steps handed
// out with the game pairs each covers. Steps are serialised for the journal before their
// WORK is sent; replaying the journal (steps and pair results in file order) rebuilds theta
// bit for bit, so a killed run resumes exactly and applies each pair's result once.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "spsa.h"

typedef struct SpsaTuner SpsaTuner;

/// A tuner for pairs 0..pairs_total-1; NULL if out of memory. The config is copied.
SpsaTuner *spsa_tuner_new(const SpsaConfig *cfg, uint64_t seed, uint64_t pairs_total);
void spsa_tuner_free(SpsaTuner *t);

/// A new step from the current theta for pairs[0..n) (which it takes over from any earlier
/// step). Owned by the tuner until all its pairs are done; NULL if out of memory.
const SpsaStep *spsa_tuner_step(SpsaTuner *t, const uint64_t *pairs, int n);

/// The journal record of a step and its pairs (malloc'ed, *len bytes), or NULL.
void *spsa_tuner_encode(const SpsaStep *s, const uint64_t *pairs, int n, size_t *len);
/// Re-registers a step read from the journal; false (why says) if the record is malformed.
bool spsa_tuner_replay_step(SpsaTuner *t, const void *data, size_t len, char *why, size_t why_len);

/// A pair finished with plus scoring w_minus_l (-2..2): applies its step's update and counts
/// one iteration. False when the pair has no step (nothing applied).
bool spsa_tuner_pair_done(SpsaTuner *t, uint64_t pair, int w_minus_l);

const double *spsa_tuner_theta(const SpsaTuner *t);
const SpsaConfig *spsa_tuner_config(const SpsaTuner *t);
int64_t spsa_tuner_iterations(const SpsaTuner *t); // pairs applied

/// Trajectory CSV: a header line, then "iteration,theta..." every `every` iterations (and
/// when spsa_tuner_csv_row is called), one row per iteration at most. The tuner writes to f;
/// NULL stops writing.
void spsa_tuner_set_csv(SpsaTuner *t, FILE *f, int64_t every);
void spsa_tuner_csv_row(SpsaTuner *t);
