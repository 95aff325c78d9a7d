// SPDX-License-Identifier: MIT
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

// Openings, middlegames and endgames from Fairy-Stockfish self-play at fixed depth from seven
// openings, plus a few hand-picked endgames. Data, not code: change it and the signature moves.
const char *const bench_positions[] = {
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
    "3k5/4a4/4b4/9/2p6/9/9/4B4/4A4/2BAK1N2 w - - 0 60",
    "4k4/4a4/3a5/9/9/9/4p4/9/4A4/3AK1R2 w - - 0 70",
    "2bak4/4a4/2R1b1n2/3rp3p/p1P3p2/9/Pc2P1P1c/1CN3C2/4Nr3/2BAKABR1 w - - 1 16",
    "rnbakab2/9/2c3nc1/p1p1p1p1p/9/1C7/P1P1PrP1P/2N1C1N2/4A4/R1BAK1B1R w - - 10 6",
    "1nbakab2/9/2c3n2/pC1rp1p1p/2p6/2P3Pc1/P3P1r1P/B1NC2N1R/4A4/R2AK1B2 w - - 22 12",
    "1nbakab2/4n4/1Cc6/p3p1p1p/2p3rc1/2P6/P2rP3P/B1NCB1N1R/4A4/2RAK4 w - - 8 18",
    "1nbakab2/2C1n4/3c5/p3p1p1p/6rc1/9/PR2P3P/B2pB1N2/4A3R/3AK4 w - - 0 24",
    "2bakab2/3C5/nR7/p2np1p1p/2r4c1/9/P3P3P/4B1N1R/3cA4/4K4 w - - 5 30",
    "2baka3/3c5/4b4/p1nR5/2r5p/P8/4Pc2P/4B1NR1/4A4/4K4 w - - 5 36",
    "3aka3/9/4b4/p5R2/9/P7p/4Pc2P/2Rcr1N2/4A4/4K4 w - - 3 42",
    "rnbakab1r/9/1c4n2/p1N1p3p/9/2P4c1/P3P1p1P/1C2B2C1/9/R1BAKA1NR w - - 0 6",
    "r1bakab2/1r2n4/n3c4/p3p3p/2N6/2P4c1/P3Pp2P/2C1B2C1/5N3/R1BAKAR2 w - - 12 12",
    "r1bakab2/7r1/4c1R2/p1n1p3p/2N6/2P1P4/P7P/4B2C1/5p3/R1BAKA3 w - - 2 18",
    "r1bak1b2/4a2r1/9/p5n1p/4p4/2P1N4/P7P/4B4/4A4/R1B1KR3 w - - 0 24",
    "3ak1b2/r3a4/4b4/5Rnrp/3R2N2/P1P1p4/8P/4B4/4A4/2B1K4 w - - 1 30",
    "3ak1b2/r3a4/4b4/3R1R2p/5N3/2P5P/7r1/4n4/9/2B1KA3 w - - 0 36",
    "3ak1b2/4a4/4b4/5R2p/9/2PN4P/8r/r3B4/4A4/3RK4 w - - 11 42",
    "r1baka2r/5n3/1cn1b1c2/p3p3p/2p6/6C2/P1P1P1P1P/4C3N/9/RNBAKAB1R w - - 5 6",
    "r2aka3/5n3/b1c1b1c2/p3p3p/2p6/4C4/P1n1P1P1P/2N1B2rN/4C4/R1BAKA2R w - - 0 12",
    "r2ak4/4a4/b1c1b3c/p5n1p/2p1p4/4C1B1P/P1nrP1P2/2N5R/4C4/R1BAKA1N1 w - - 12 18",
    "3ak4/4a4/b2cb3c/p7p/3np4/1Np2nB1P/P2rP1P2/5R3/1C7/1RBAKA1N1 w - - 3 24",
    "3ak4/4a4/bc2b4/p1n5p/4p4/5nB1c/PC1rP1P2/1R4N2/4A4/1RBAK4 w - - 3 30",
    "2bak4/4a4/4b4/p1n6/1C2p3p/6B1c/P3n1P2/3A5/9/2BAKN3 w - - 0 36",
    "2bak4/4a4/4b4/p1n6/4p3C/P7c/5nP2/3AB4/4A4/2B1KN3 w - - 11 42",
    "rnbaka1n1/1C6r/c1c1b4/p3p1p1p/2p6/9/P1P1P1P1P/1C4N2/4A4/RNB1KABR1 w - - 10 6",
    "r1baka3/5n2r/cC2b4/p3p1pRp/2p6/5n3/P3P1c1P/2NCB1N2/4A4/R1B1KA3 w - - 0 12",
    "1rbak4/1C2an2r/c3b4/4p1p2/p1p3c1p/4P4/P6RP/2N1B1C2/4A4/1RB1KA3 w - - 7 18",
    "1rbak4/1Cc1an3/4b4/4p1p2/p1p2R3/3NP3r/P8/4BC3/3cA4/1RB1KA3 w - - 0 24",
    "1rbak4/2cca4/4b4/1C2N4/p1p2Cp2/4P4/P6n1/B3B4/4A4/1R2KA3 w - - 5 30",
    "2bak4/4a4/1r2b4/2ccN4/pCp1PCp2/9/PR1n5/4B4/4A4/2BK1A3 w - - 17 36",
    "2bak4/4a4/1r2b4/1C2c4/p1p2Cp2/2n6/P2c5/4B4/1R2A4/2B1KA3 w - - 8 42",
    "rnbakab1r/9/c5n2/2p1p1p1p/p8/P1P3P2/4P2cP/1C2B1NC1/9/RNBAKA2R w - - 10 6",
    "rnbaka2r/9/4b1n2/4p3p/p5p2/cCB2N1c1/4P3P/2N1B2C1/9/R2AKA2R w - - 2 12",
    "1nbaka1r1/r8/4b4/4p3p/p6n1/cCB2N1c1/4P3P/2N1B2C1/4A4/R3KAR2 w - - 7 18",
    "2baka3/9/2n1b4/4p3p/p1r6/cCBRP4/8P/2N6/4A4/R3KA3 w - - 4 24",
    "2bak4/2R1a4/1Cn6/4p3p/p1b6/4R4/8P/9/4A4/2r1KA3 w - - 4 30",
    "2ba1k3/4a4/2R6/1C3r2p/2b1p4/pR6P/9/9/4A4/4KA3 w - - 9 36",
    "2bak4/4a4/4b4/1C6p/4p4/5r2P/R6R1/1p7/4A4/4KA3 w - - 21 42",
    "r1bak2nr/4a4/2n1c1c1b/p1C1p1p1p/9/2P6/P3P1P1P/4C1N2/9/RNBAKAB1R w - - 1 6",
    "1rbak4/4an3/2n1crc1b/p1C1p1p1p/9/2PN2P2/P3P3P/4B1N1R/4C4/R1BAKA3 w - - 13 12",
    "r2ak4/2R1an3/b1nc2c1b/p3p3p/1P4p2/3N2P2/P3P3P/2C1B1N1R/4Cr3/2BAKA3 w - - 25 18",
    "3a1k3/n1N1an3/3c1c2b/p3p3p/2P2rp2/6P2/P3P3P/2C1B1N2/5C2R/2BAKA3 w - - 7 24",
    "3a1k3/2N1an3/3c4b/pn2p1c1p/2CP5/5r3/P3P3P/4B4/2C2R3/2BAKA3 w - - 0 30",
    "5k3/4an3/1R6b/p3p3p/2CP5/1c7/P3c3P/4B4/2C1A4/2BA1K3 w - - 4 36",
    "4ka2R/2C6/9/p3pcn1p/3P5/4c4/P7P/4B4/2C1A4/2BA1K3 w - - 3 42",
    "rnbak1b1r/4a4/4c1n2/p3p1C1p/2p6/9/PcP1P1P1P/1CN1B4/5N3/R1BAKA2R w - - 1 6",
    "rnbak1b1r/4a4/6n2/p1C5p/2P1p4/P8/1c2c1P1P/BCNNB4/9/R2AKA2R w - - 0 12",
    "r1bak3r/4a4/2n1b4/pCC5p/2P2n3/P2p2B2/2N2cP1P/B8/9/R2AKA2R w - - 7 18",
    "r1bak3r/4a4/4b4/p1Cn5/1P1N1n2p/P2p2B2/1CR3P1P/B8/5c3/3AKA2R w - - 19 24",
    "r1bak3r/4a4/4b4/1PCn5/p2N4p/P2p2B2/C3ncP1P/B1R6/8R/3AKA3 w - - 31 30",
    "r1bak3r/4a4/4bn3/1PC2N3/9/p5B1p/6R1P/B8/3R5/3AKA3 w - - 4 36",
    "1rba1k3/4a4/5n3/1P7/2bN5/p6p1/3R4P/B3B4/3R5/3AKA3 w - - 5 42"};
const int bench_position_count = sizeof bench_positions / sizeof bench_positions[0];

int bench_run(Engine *e, int depth, BenchLineFn line, void *ctx, BenchResult *out)
{
    Board *b = malloc(sizeof *b);
    if (!b)
        return -1;
    out->nodes = 0;
    out->time_ms = 0;
    SearchLimits limits;
    limits_init(&limits);
    limits.depth = depth;
    for (int i = 0; i < bench_position_count; i++) {
        if (board_set_fen(b, bench_positions[i], NULL, 0) != FEN_OK) {
            free(b);
            return i + 1;
        }
        engine_new_game(e);
        if (engine_set_position(e, b) != ENGINE_OK) {
            free(b);
            return i + 1;
        }
        SearchResult r = engine_search(e, &limits, NULL, NULL);
        out->nodes += r.nodes;
        out->time_ms += r.time_ms;
        if (line)
            line(ctx, i, bench_positions[i], &r);
    }
    free(b);
    return 0;
}
