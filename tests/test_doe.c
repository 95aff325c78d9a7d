// SPDX-License-Identifier: MIT
// Drop-out expansion's tree (games/doe.h) on hand-made trees: the priorities of Lincke's and
// Fuego's formula, the order leaves are chosen in, progressive widening, negamax values,
// transpositions and mirrors merged, repetitions left out, plies_max, the text dump.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "doe.h"

static DoeChild child(uint16_t move, int score, uint64_t key, uint64_t mirror)
{
    DoeChild c = {.move = move, .score = score, .key = key, .mirror_key = mirror};
    snprintf(c.fen, sizeof c.fen, "fen-%llx w - -", (unsigned long long)key);
    return c;
}

static DoeTree *root_tree(double alpha, int width, int widen, int plies_max)
{
    DoeConfig cfg = {alpha, width, widen, plies_max};
    DoeTree *t = doe_new(&cfg, "root w - -", 1, 2, false);
    assert_non_null(t);
    uint32_t leaf;
    assert_int_equal(doe_select(t, &leaf, 8), 1); // round 0: the root alone
    assert_int_equal(leaf, 0);
    return t;
}

/// Children scored -10, 0 and +30 (their side to move's view) give the root +10 and the terms
/// alpha * drop + 0 + 1 = 1, 2 and 5 with alpha 0.1: chosen in that order, one each.
static void test_priorities_order(void **state)
{
    (void)state;
    DoeTree *t = root_tree(0.1, 8, 8, 10);
    DoeChild c[3] = {child(1, 0, 10, 11), child(2, 30, 20, 21), child(3, -10, 30, 31)};
    assert_int_equal(doe_expand(t, 0, c, 3), DOE_OK);
    doe_update(t);
    assert_int_equal(doe_node(t, 0)->value, 10);
    assert_true(doe_node(t, 0)->prio > 0.999 && doe_node(t, 0)->prio < 1.001);
    uint32_t leaves[8];
    assert_int_equal(doe_select(t, leaves, 8), 3);
    assert_int_equal(doe_node(t, leaves[0])->key, 30); // drop 0
    assert_int_equal(doe_node(t, leaves[1])->key, 10); // drop 10
    assert_int_equal(doe_node(t, leaves[2])->key, 20); // drop 40
    assert_int_equal(doe_counts(t)->scored, 3);
    doe_free(t);
}

/// Width 1: only the best child is considered until widen selections went through the node.
static void test_widening(void **state)
{
    (void)state;
    DoeTree *t = root_tree(0.1, 1, 2, 10);
    DoeChild c[3] = {child(1, 0, 10, 11), child(2, 30, 20, 21), child(3, -10, 30, 31)};
    assert_int_equal(doe_expand(t, 0, c, 3), DOE_OK);
    doe_update(t);
    uint32_t leaves[8];
    // One selection (visits 1: width 1), then the best is pending and nothing else is open.
    assert_int_equal(doe_select(t, leaves, 8), 1);
    assert_int_equal(doe_node(t, leaves[0])->key, 30);
    doe_free(t);
}

/// Negamax: expanding the best child with replies that refute it turns the root to another.
static void test_negamax(void **state)
{
    (void)state;
    DoeTree *t = root_tree(0.1, 8, 8, 10);
    DoeChild c[2] = {child(1, -10, 10, 11), child(2, 0, 20, 21)};
    assert_int_equal(doe_expand(t, 0, c, 2), DOE_OK);
    doe_update(t);
    uint32_t leaves[1];
    assert_int_equal(doe_select(t, leaves, 1), 1);
    assert_int_equal(doe_node(t, leaves[0])->key, 10);
    // The side to move at node 10 finds +50 (its reply leaves the opponent -50).
    DoeChild r[1] = {child(5, -50, 100, 101)};
    assert_int_equal(doe_expand(t, leaves[0], r, 1), DOE_OK);
    doe_update(t);
    assert_int_equal(doe_node(t, leaves[0])->value, 50);
    assert_int_equal(doe_node(t, 0)->value, 0); // now the move to 20 is best
    doe_free(t);
}

/// A position reached twice is one node (an edge to it, counted as a transposition), its
/// mirror too (a mirrored edge); a move back into the line is left out.
static void test_transpositions(void **state)
{
    (void)state;
    DoeTree *t = root_tree(0.1, 8, 8, 10);
    DoeChild c[2] = {child(1, 0, 10, 11), child(2, 0, 20, 21)};
    assert_int_equal(doe_expand(t, 0, c, 2), DOE_OK);
    doe_update(t);
    uint32_t leaves[2];
    assert_int_equal(doe_select(t, leaves, 2), 2);
    DoeChild a[1] = {child(7, 0, 500, 501)};
    assert_int_equal(doe_expand(t, leaves[0], a, 1), DOE_OK);
    // From the other leaf: the mirror of 500, and the root itself (a repetition).
    DoeChild b[2] = {child(8, 0, 501, 500), child(9, 0, 1, 2)};
    assert_int_equal(doe_expand(t, leaves[1], b, 2), DOE_OK);
    doe_update(t);
    assert_int_equal(doe_node_count(t), 4);
    assert_int_equal(doe_counts(t)->transpositions, 1);
    assert_int_equal(doe_counts(t)->mirrors, 1);
    assert_int_equal(doe_counts(t)->repetitions, 1);
    assert_int_equal(doe_node(t, leaves[1])->edge_n, 1);
    assert_true(doe_edges(t, leaves[1])[0].mirrored);
    assert_int_equal(doe_edges(t, leaves[1])[0].child, doe_edges(t, leaves[0])[0].child);
    // Expanding a node that is not a chosen leaf is refused.
    assert_int_equal(doe_expand(t, 0, a, 1), DOE_ERR_STATE);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_true(doe_write(t, f));
    fclose(f);
    assert_non_null(strstr(text, ">~3"));
    assert_int_equal(strchr(text, '\n') - text,
                     strlen("0 0000000000000001 0 E 0 0 2 root w - - a0a1>1 a0a2>2"));
    free(text);
    doe_free(t);
}

/// Nodes at plies_max are never chosen; a terminal child neither.
static void test_plies_max_and_terminal(void **state)
{
    (void)state;
    DoeTree *t = root_tree(0.1, 8, 8, 1);
    DoeChild c[2] = {child(1, 0, 10, 11), child(2, 0, 20, 21)};
    c[1].terminal = true;
    assert_int_equal(doe_expand(t, 0, c, 2), DOE_OK);
    doe_update(t);
    uint32_t leaves[2];
    assert_int_equal(doe_select(t, leaves, 2), 0);
    doe_free(t);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/// Grows a tree of pseudo-random positions to about nodes nodes in rounds of round leaves:
/// children's keys come from a small space, so transpositions, mirrors and repetitions are
/// frequent; with by_ply, a space per ply (transpositions join positions of the same ply, as
/// move orders do, and none repeats). With verify, after every choice and every round the
/// incremental figures must equal a full recompute's. Returns the tree.
static DoeTree *grow(uint64_t nodes, int round, uint64_t space, bool by_ply, bool verify)
{
    DoeConfig cfg = {0.05, 2, 4, 40};
    DoeTree *t = doe_new(&cfg, "root w - -", 1, 1, false);
    assert_non_null(t);
    uint32_t leaves[256];
    int n;
    while (doe_node_count(t) < nodes && (n = doe_select(t, leaves, round)) > 0) {
        if (verify)
            assert_true(doe_verify(t));
        for (int i = 0; i < n; i++) {
            uint64_t pk = doe_node(t, leaves[i])->key;
            uint64_t ply = by_ply ? (uint64_t)doe_node(t, leaves[i])->ply + 1 : 0;
            DoeChild c[12];
            int k = (int)(mix(pk) % 12);
            for (int j = 0; j < k; j++) {
                uint64_t h = mix(pk * 31 + (uint64_t)j);
                // even keys from 2; a key and key ^ 1 are each other's mirrors.
                uint64_t key = ply << 40 | (2 + 2 * (h % space));
                c[j] = child((uint16_t)(j + 1), (int)(h >> 40) % 200 - 100, key,
                             h & 0x100 ? key ^ 1 : key);
                c[j].terminal = (h >> 20) % 50 == 0;
            }
            assert_int_equal(doe_expand(t, leaves[i], c, k), DOE_OK);
        }
        doe_update(t);
        if (verify)
            assert_true(doe_verify(t));
    }
    return t;
}

/// The incremental updates (only the changed leaves' ancestors) give, after every choice and
/// every round, exactly the figures of a recompute of the whole tree, on a tree full of
/// transpositions, mirrors and repetitions.
static void test_incremental_update(void **state)
{
    (void)state;
    for (int round = 1; round <= 16; round *= 4) {
        DoeTree *t = grow(3000, round, 2000, false, true);
        assert_true(doe_node_count(t) >= 1000);
        assert_true(doe_counts(t)->transpositions > 100);
        assert_true(doe_counts(t)->repetitions > 0);
        doe_free(t);
    }
}

/// The same tree from every build (Release, Debug, the sanitizers; any -march): the
/// priorities round alike everywhere (no FMA contraction), so a run resumed on another kind
/// of node chooses the leaves its journal holds. Figures of this build-independent growth.
static void test_same_tree_every_build(void **state)
{
    (void)state;
    DoeTree *t = grow(5000, 32, 5000, true, false);
    assert_int_equal(doe_node_count(t), 5072);
    assert_int_equal(doe_counts(t)->expansions, 1027);
    assert_int_equal(doe_counts(t)->transpositions, 667);
    doe_free(t);
}

/// test_doe --bench NODES: grows a synthetic tree of NODES nodes in rounds of 32 (the keys of
/// a ply from NODES / 8, about the transposition rate of a real run) and prints the seconds
/// rank 0 spends on it (the choice of leaves and the updates; no search).
static int bench(const char *arg)
{
    uint64_t nodes = strtoull(arg, NULL, 10);
    if (!nodes) {
        fprintf(stderr, "test_doe --bench: '%s': expected a node count\n", arg);
        return 2;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    DoeTree *t = grow(nodes, 32, nodes, true, false);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%u nodes, %llu expansions, %llu transpositions: %.2f s\n", doe_node_count(t),
           (unsigned long long)doe_counts(t)->expansions,
           (unsigned long long)doe_counts(t)->transpositions,
           (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    doe_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--bench"))
        return bench(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priorities_order),
        cmocka_unit_test(test_widening),
        cmocka_unit_test(test_negamax),
        cmocka_unit_test(test_transpositions),
        cmocka_unit_test(test_plies_max_and_terminal),
        cmocka_unit_test(test_incremental_update),
        cmocka_unit_test(test_same_tree_every_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
