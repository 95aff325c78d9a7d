// SPDX-License-Identifier: MIT
// A local match between two players (fastchess-style): game pairs on openings with colours
// swapped, played concurrently in threads, results totalled for player 0 (the first
// engine), PGN written as games finish. Statistics and stopping rules (SPRT) are the
// caller's, through hooks, so this module stays free of them.
#pragma once

#include <stdatomic.h>
#include <stdio.h>

#include "game.h"
#include "openings.h"
#include "pgn.h"

enum { MATCH_MAX_CONCURRENCY = 256 };

typedef struct {
    int games, wins, draws, losses;         // for player 0
    int ptnml[5];                           // pairs scoring 0, 1/2, 1, 3/2, 2 for player 0
    int pair_wins, pair_draws, pair_losses; // the games of finished pairs (those in ptnml)
    int terms[TERM_NB];
    int pairs_started;
} MatchTotals;

/// Books one finished game worth pts (1, 1/2, 0) to player 0 that ended by term.
void match_totals_game(MatchTotals *t, double pts, int term);

/// Books a finished pair whose two games were worth pts[0] and pts[1] to player 0 (each
/// already booked by match_totals_game): the pentanomial and the finished pairs' W/D/L.
void match_totals_pair(MatchTotals *t, const double pts[2]);

typedef struct {
    void *ctx;
    /// Called (under the match lock) after every finished game, in finishing order.
    void (*game_done)(void *ctx, const GameRecord *rec, int game_number, const MatchTotals *t);
    /// Called after every finished pair; returning true ends the match (e.g. SPRT decided).
    bool (*should_stop)(void *ctx, const MatchTotals *t);
} MatchHooks;

typedef struct {
    PlayerConfig players[2];
    GameConfig game;
    const Openings *openings;
    bool random_order;
    uint64_t seed;
    int start;            // first opening index
    int rounds;           // rounds to play; with repeat each round is a game pair
    bool repeat;          // play each opening twice with colours swapped
    int concurrency;      // games at once
    FILE *pgn;            // NULL: no PGN
    PgnNotation notation; // the PGN's moves: coordinates (0, the default), ICCS or WXF
    int pgn_rank_base;    // coordinates in the PGN: ranks 0-9 (0) or 1-10 (1)
    const char *event, *site;
} MatchConfig;

typedef enum {
    MATCH_OK,
    MATCH_ERR_PLAYER,
    MATCH_ERR_NOMEM,
    MATCH_ERR_IO,
    MATCH_ABORTED
} MatchStatus;

const char *match_strerror(MatchStatus st);

/// Starts (or restarts) player i of the match into *p.
MatchStatus match_seat_start(const MatchConfig *cfg, int i, Player **p, char *msg, size_t msg_len);

/// Plays game g (0, or 1 with repeat) of pair `pair`: the pair id fixes the opening and the
/// colours, so a pair replayed anywhere is the same pair. A player that failed in the game
/// (crash, stall, illegal move, time) is restarted afterwards. MATCH_ABORTED if stop was
/// raised during the game (the record then is no result). *nodes (nodes may be NULL): what
/// the two players reported searching for their moves of this game.
MatchStatus match_play_game(const MatchConfig *cfg, Player *players[2], uint64_t pair, int g,
                            const atomic_bool *stop, GameRecord *rec, uint64_t *nodes, char *msg,
                            size_t msg_len);

/// Runs the match until all rounds are played, a hook stops it, or *interrupt becomes true
/// (games then in progress are abandoned, finished ones are kept). msg explains an error.
MatchStatus match_run(const MatchConfig *cfg, const MatchHooks *hooks, atomic_bool *interrupt,
                      MatchTotals *totals, char *msg, size_t msg_len);
