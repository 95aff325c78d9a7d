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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priorities_order),
        cmocka_unit_test(test_widening),
        cmocka_unit_test(test_negamax),
        cmocka_unit_test(test_transpositions),
        cmocka_unit_test(test_plies_max_and_terminal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
