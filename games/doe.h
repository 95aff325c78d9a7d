// SPDX-License-Identifier: MIT
// Drop-out expansion (Lincke 2000, "Strategies for the automatic construction of opening
// books"; the form of Fuego's SgBookBuilder): an opening book grown as a DAG of positions.
// Positions are keyed by the rules' Zobrist key with a position and its left-right mirror
// merged into one node; transpositions join. An expanded node's value is the negamax of its
// children's (side to move's view, cp); a leaf's is its search score. Which leaf is expanded
// next is set by priorities, for both sides alike (both may deviate):
//
//   priority(leaf) = 0   (INF when terminal, at plies_max, or already chosen this round)
//   priority(p)    = min over the children c that p considers of
//                    alpha * (value(p) + value(c)) + priority(c) + 1
//
// value(p) + value(c) is the drop-out: how many cp the move to c gives up against p's best
// (0 for the best move), so alpha trades cp of drop-out against one ply of depth. Progressive
// widening: p considers its best width + floor(visits(p) / widen) children by value, where
// visits(p) counts the selections that passed through p. The descent from the root takes the
// child of lowest term (the first in value order on a tie) and ends at a leaf.
//
// The cluster's part is the scoring: a round chooses up to `round` leaves (each chosen leaf's
// priority set to INF and its ancestors' priorities recomputed before the next choice), the
// worker ranks score every child of each, and the round's expansions are applied in the
// order the leaves were chosen. Nothing depends on timing, so the tree is the same on 1 or N
// ranks and after any kill and resume. A move that reaches a position from which the leaf is
// reachable (a repetition) is left out: repetitions are the rules' business in the game
// (RULES.md rules 6-9 and C), and the DAG stays acyclic.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "board.h"

#define DOE_INF 1e30

typedef enum { DOE_LEAF, DOE_EXPANDED, DOE_TERMINAL } DoeState;

typedef struct {
    double alpha;  // priority per cp of drop-out
    int width;     // children considered at first (>= 1)
    int widen;     // selections through a node per child more (>= 1)
    int plies_max; // nodes at this ply or deeper are not expanded
} DoeConfig;

typedef struct {
    uint64_t key, mirror_key; // of the stored orientation
    char fen[BOARD_FEN_MAX];  // EPD position (board, side, "- -"), the stored orientation
    int ply;                  // plies from the root when first reached
    int eval;                 // the search's score (side to move's view)
    int value;                // negamax: eval for a leaf, the best child's for an expanded node
    double prio;
    uint32_t edge0, edge_n; // its edges, once expanded
    uint32_t visits;
    uint32_t parent;      // the node it was first reached from (UINT32_MAX: the root)
    uint16_t parent_move; // by that move, in the parent's stored orientation
    uint8_t state;        // DoeState
    bool in_check, pending;
} DoeNode;

typedef struct {
    uint32_t child, parent;
    uint16_t move; // in the parent's stored orientation
    bool mirrored; // the child's stored orientation is the mirror of the position reached
} DoeEdge;

/// A scored child of a leaf, replayed by the caller (coordinator/doe_coord.c).
typedef struct {
    uint16_t move;
    int score; // the child's search score, the child's side to move's view
    uint64_t key, mirror_key;
    char fen[BOARD_FEN_MAX]; // EPD position
    bool terminal;           // no legal move, or a draw by material
    bool in_check;
} DoeChild;

typedef struct {
    uint64_t scored;         // children scored (the budget's count)
    uint64_t expansions;     // leaves expanded
    uint64_t transpositions; // edges to a node that existed already (mirrors included)
    uint64_t mirrors;        // ... of them, to its mirror
    uint64_t repetitions;    // moves left out: they lead back into the line
} DoeCounts;

typedef struct DoeTree DoeTree;

typedef enum { DOE_OK, DOE_ERR_NOMEM, DOE_ERR_STATE, DOE_STATUS_NB } DoeStatus;
const char *doe_strerror(DoeStatus st);

/// A tree of the root alone (a leaf, scored later by its own expansion); NULL when out of
/// memory. The root's EPD position and keys are the caller's.
DoeTree *doe_new(const DoeConfig *cfg, const char *root_epd, uint64_t key, uint64_t mirror_key,
                 bool in_check);
void doe_free(DoeTree *t);

/// Chooses up to max leaves for the next round, most urgent first; returns how many (0: no
/// leaf left to expand). The leaves stay pending until doe_expand.
int doe_select(DoeTree *t, uint32_t *leaves, int max);
/// Applies the scored children of a pending leaf (n = 0: it has no legal move); then
/// doe_update, once the round is applied.
DoeStatus doe_expand(DoeTree *t, uint32_t leaf, const DoeChild *c, int n);
/// Brings values and priorities up to date after doe_expand: only the expanded leaves and
/// their ancestors are recomputed (doe_select does the same for each leaf it chooses), so a
/// round costs the few nodes above its leaves, not the tree.
void doe_update(DoeTree *t);
/// Recomputes every node from the root and says whether the figures (values, priorities,
/// bit for bit) were already those: the check of the incremental updates (tests).
bool doe_verify(DoeTree *t);

const DoeNode *doe_node(const DoeTree *t, uint32_t i);
const DoeEdge *doe_edges(const DoeTree *t, uint32_t i); // node i's edge_n edges
uint32_t doe_node_count(const DoeTree *t);
const DoeCounts *doe_counts(const DoeTree *t);
size_t doe_bytes(const DoeTree *t);

/// The tree as text, a line per node in creation order (index, key, ply, state, eval, value,
/// visits, FEN, then "move>child" per edge, '~' marking a mirrored child): the same text for
/// the same tree, so runs are compared with cmp. false on a write error.
bool doe_write(const DoeTree *t, FILE *f);
