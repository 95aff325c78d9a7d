// SPDX-License-Identifier: MIT
// perft counts against numbers produced by Fairy-Stockfish (tests/data/perft.epd, one
// position a line: `FEN ;D1 n ;D2 n ... ;c "what it exercises"`). The unit tier checks
// every position to the depths whose count is at most UNIT_NODE_LIMIT; --full checks all.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "board.h"
#include "perft.h"

enum { UNIT_NODE_LIMIT = 1000000, MIN_SUITE_POSITIONS = 40 };

static bool full_run;

/// The start position's counts, the published numbers every xiangqi generator matches.
static void test_startpos(void **state)
{
    (void)state;
    static const uint64_t expect[] = {1, 44, 1920, 79666, 3290240, 133312995};
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    assert_int_equal(board_set_fen(b, BOARD_START_FEN, NULL, 0), FEN_OK);
    int max_depth = full_run ? 5 : 4;
    for (int d = 0; d <= max_depth; d++)
        assert_int_equal(perft(b, d), expect[d]);
    uint64_t nodes = 0;
    assert_int_equal(perft_parallel(b, 4, 3, &nodes), 0);
    assert_int_equal(nodes, expect[4]);
    free(b);
}

/// Every position of the reference suite gives Fairy-Stockfish's count at every depth
/// checked; the suite is large enough to cover the movement rules.
static void test_suite(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/perft.epd", XQ_TEST_DATA);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    Board *b = malloc(sizeof *b);
    assert_non_null(b);
    char line[1024];
    int positions = 0, checks = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *semi = strchr(line, ';');
        if (!semi)
            fail_msg("%s:%d: no ';D1' field", path, lineno);
        *semi = '\0';
        char why[160];
        if (board_set_fen(b, line, why, sizeof why) != FEN_OK)
            fail_msg("%s:%d: bad FEN '%s': %s", path, lineno, line, why);
        positions++;
        for (char *p = semi + 1; p; p = strchr(p, ';')) {
            if (*p == ';')
                p++;
            int depth;
            unsigned long long expect;
            if (sscanf(p, " D%d %llu", &depth, &expect) != 2)
                continue;
            if (!full_run && expect > UNIT_NODE_LIMIT)
                continue;
            uint64_t got = perft(b, depth);
            if (got != expect)
                fail_msg("%s:%d: %s depth %d: got %llu, expected %llu", path, lineno, line, depth,
                         (unsigned long long)got, expect);
            checks++;
        }
    }
    fclose(f);
    free(b);
    assert_true(positions >= MIN_SUITE_POSITIONS);
    assert_true(checks >= 3 * positions);
}

int main(int argc, char **argv)
{
    full_run = argc > 1 && strcmp(argv[1], "--full") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startpos),
        cmocka_unit_test(test_suite),
    };
    return cmocka_run_group_tests_name("perft", tests, NULL, NULL);
}
