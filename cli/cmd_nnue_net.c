// SPDX-License-Identifier: MIT
// xqforge nnue net FILE: a net file's header, id and checks (exit 2 with the reason for a bad
// file); xqforge nnue net --random HIDDEN -o FILE [--features xq1|xq2]: a random net of that
// shape, for speed measurements (scripts/bench-nnue.sh) and tests.
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "nnue.h"

static void net_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge nnue net FILE | --default\n"
            "       xqforge nnue net --random HIDDEN -o FILE [--seed N] [--features xq1|xq2]\n\n"
            "The first form reads a net file (.nnue), checks its magic, version, sizes, header\n"
            "CRC and content hash, and prints its header, id (the first 12 hex digits of the\n"
            "content hash), description, hidden size and the start position's evaluation;\n"
            "a bad file exits 2 with the reason (--default: the net embedded in this build,\n"
            "if any). The second writes a net of HIDDEN units (a multiple of 32, at most\n"
            "%d) with random weights of a trained net's magnitudes: it plays badly, but at\n"
            "a real net's speed; --features xq2 makes a king-bucketed (version 2) net.\n",
            NNUE_HIDDEN_MAX);
}

/// The description with anything unprintable shown as '?'.
static void printable(const char *in, char *out, size_t len)
{
    size_t i = 0;
    for (; in[i] && i + 1 < len; i++)
        out[i] = in[i] >= 32 && in[i] < 127 ? in[i] : '?';
    out[i] = '\0';
}

static void net_print(const NnueNet *net, const char *source)
{
    char id[NNUE_ID_MAX], desc[sizeof net->description];
    nnue_id(net, id);
    printable(net->description, desc, sizeof desc);
    Board b;
    board_init();
    board_set_fen(&b, BOARD_START_FEN, NULL, 0);
    printf("file         : %s\n", source);
    if (net->version == NNUE_VERSION_XQ2)
        printf("format       : XQNNUE version %d (XQ2), %d features (general bucket x colour x "
               "type x square)\n",
               net->version, net->features);
    else
        printf("format       : XQNNUE version %d (XQ1), %d features (colour x type x square)\n",
               net->version, net->features);
    printf("id           : %s\n", id);
    printf("content hash : %016llx\n", (unsigned long long)net->hash);
    printf("description  : %s\n", desc);
    printf("hidden       : %d\n", net->hidden);
    printf("quantization : qa %d, qb %d, scale %d\n", net->qa, net->qb, net->scale);
    printf("start eval   : %d cp (Red to move)\n", nnue_evaluate_full(net, &b));
    printf("check        : ok (magic, version, sizes, header CRC-32, content hash)\n");
}

static int net_show(const char *path)
{
    if (strcmp(path, "--default") == 0) {
        const NnueNet *d = nnue_default();
        if (!d) {
            fprintf(stderr, "xqforge nnue net: this build has no embedded net\n");
            return 1;
        }
        net_print(d, "(embedded default net)");
        return 0;
    }
    NnueNet net;
    char why[512];
    NnueStatus st = nnue_load_file(&net, path, why, sizeof why);
    if (st) {
        fprintf(stderr, "xqforge nnue net: %s\n", why);
        return EXIT_USAGE;
    }
    net_print(&net, path);
    nnue_free(&net);
    return 0;
}

static int net_random(long hidden, const char *out, long seed, int version)
{
    NnueNet net;
    NnueStatus st = nnue_alloc_version(&net, version, (int)hidden);
    if (st) {
        fprintf(stderr, "xqforge nnue net: hidden %ld: %s\n", hidden, nnue_strerror(st));
        return st == NNUE_ERR_NOMEM ? 1 : EXIT_USAGE;
    }
    nnue_randomize(&net, (uint64_t)seed);
    st = nnue_save_file(&net, out);
    char id[NNUE_ID_MAX];
    nnue_id(&net, id);
    nnue_free(&net);
    if (st) {
        fprintf(stderr, "xqforge nnue net: %s: %s\n", out, nnue_strerror(st));
        return 1;
    }
    if (version == NNUE_VERSION)
        printf("wrote %s: random net, hidden %ld, seed %ld, id %s\n", out, hidden, seed, id);
    else
        printf("wrote %s: random %s net, hidden %ld, seed %ld, id %s\n", out,
               nnue_version_name(version), hidden, seed, id);
    return 0;
}

int cmd_nnue_net(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        net_usage(stdout);
        return 0;
    }
    if (argc == 2 && (argv[1][0] != '-' || strcmp(argv[1], "--default") == 0))
        return net_show(argv[1]);
    long hidden = -1, seed = 1;
    int version = NNUE_VERSION;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--random") == 0 && more) {
            if (!cli_parse_int(argv[++i], 1, 1 << 20, &hidden))
                hidden = 0;
        } else if (strcmp(argv[i], "-o") == 0 && more) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--features") == 0 && more) {
            i++;
            if (strcmp(argv[i], "xq1") == 0) {
                version = NNUE_VERSION;
            } else if (strcmp(argv[i], "xq2") == 0) {
                version = NNUE_VERSION_XQ2;
            } else {
                fprintf(stderr, "xqforge nnue net: --features %s: xq1 or xq2\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--seed") == 0 && more) {
            if (!cli_parse_int(argv[++i], 0, 2147483647, &seed))
                return net_usage(stderr), EXIT_USAGE;
        } else {
            return net_usage(stderr), EXIT_USAGE;
        }
    }
    if (hidden < 0 || !out)
        return net_usage(stderr), EXIT_USAGE;
    return net_random(hidden, out, seed, version);
}
