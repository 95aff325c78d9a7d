// SPDX-License-Identifier: MIT
// The MPI link on 2 ranks of one machine (mpirun -np 2): the node information counts both,
// and messages the receiver must refuse (above its cap, with a tag it does not use) are
// discarded without harm to it, the sender or the messages after them, and a renewed link
// never delivers what was sent before its renewal. Rank 0 receives and checks, rank 1 sends;
// ranks differ in cap as builds of a broken job would. Run alone (a singleton) only the node
// test runs.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "link.h"

enum {
    RECEIVER_CAP = 1 << 20,
    SENDER_CAP = 4 << 20,
    BIG = 2 << 20,           // above the receiver's cap, below its drain limit
    BAD_TAG_LEN = 256 << 10, // past Open MPI's eager limits: the rendezvous path
    WAIT_MS = 20000
};

static Link *link;

static void skip_unless_pair(void)
{
    if (link_size(link) != 2)
        skip();
}

/// Sends len bytes (byte i is i * 7 + salt) from rank 1 to rank 0.
static void send_pattern(LinkTag tag, size_t len, unsigned salt)
{
    unsigned char *buf = malloc(len);
    assert_non_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 7 + salt);
    LinkStatus st = link_send(link, 0, tag, buf, len);
    free(buf);
    assert_int_equal(st, LINK_OK);
}

/// Rank 0: the next message is the pattern send_pattern(LINK_TAG_ORDER, len, salt) sent.
static void expect_pattern(size_t len, unsigned salt)
{
    int src = -1;
    LinkTag tag = LINK_TAG_NB;
    void *data = NULL;
    size_t got = 0;
    assert_int_equal(link_wait(link, LINK_TAG_NB, WAIT_MS, &src, &tag, &data, &got), LINK_OK);
    assert_int_equal(src, 1);
    assert_int_equal(tag, LINK_TAG_ORDER);
    assert_int_equal(got, len);
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        assert_int_equal(p[i], (unsigned char)(i * 7 + salt));
    free(data);
}

/// Rank 0: the next message is refused with status want.
static void expect_refused(LinkStatus want)
{
    int src = -1;
    LinkTag tag = LINK_TAG_NB;
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(link_wait(link, LINK_TAG_NB, WAIT_MS, &src, &tag, &data, &len), want);
    assert_int_equal(src, 1);
    assert_null(data);
}

/// Every rank of this one-machine job shares the node, in rank order.
static void test_node(void **state)
{
    (void)state;
    assert_int_equal(link_node_size(link), link_size(link));
    assert_int_equal(link_node_rank(link), link_rank(link));
    for (int r = 0; r < link_size(link); r++)
        assert_true(link_node_has(link, r));
    assert_false(link_node_has(link, link_size(link)));
    assert_false(link_node_has(link, -1));
}

/// A message above the receiver's cap is refused as too big, its sender is released, and
/// the next message arrives intact.
static void test_too_big(void **state)
{
    (void)state;
    skip_unless_pair();
    if (link_rank(link) == 1) {
        send_pattern(LINK_TAG_ORDER, BIG, 1);
        send_pattern(LINK_TAG_ORDER, 100, 2);
        return;
    }
    expect_refused(LINK_ERR_TOO_BIG);
    expect_pattern(100, 2);
}

/// A large message with a tag the link does not use is refused, its sender released, and
/// the next message arrives intact.
static void test_bad_tag(void **state)
{
    (void)state;
    skip_unless_pair();
    if (link_rank(link) == 1) {
        send_pattern((LinkTag)(LINK_TAG_NB + 1), BAD_TAG_LEN, 3);
        send_pattern(LINK_TAG_ORDER, BAD_TAG_LEN, 4);
        return;
    }
    expect_refused(LINK_ERR_BAD_TAG);
    expect_pattern(BAD_TAG_LEN, 4);
}

/// After link_renew a message sent before it is never received, even once it has had every
/// chance to arrive, and the messages sent after it arrive intact: a finished step's last
/// STOP cannot reach the next step's worker (run/derived.c: run_link_renew).
static void test_renew(void **state)
{
    (void)state;
    skip_unless_pair();
    char why[256] = "";
    if (link_rank(link) == 1)
        send_pattern(LINK_TAG_ORDER, 100, 5); // the leftover, sent before the renewal
    assert_int_equal(link_renew(link, why, sizeof why), LINK_OK);
    assert_int_equal(link_size(link), 2);
    if (link_rank(link) == 1) {
        send_pattern(LINK_TAG_ORDER, 100, 6);
        send_pattern(LINK_TAG_ORDER, BAD_TAG_LEN, 7); // past the eager limit, on the new one
        assert_true(link_all_ok(link, true));
        return;
    }
    expect_pattern(100, 6);
    expect_pattern(BAD_TAG_LEN, 7);
    // Both senders' messages are in (the collective), and still nothing of the old link's.
    assert_true(link_all_ok(link, true));
    int src = -1;
    LinkTag tag = LINK_TAG_NB;
    void *data = NULL;
    size_t len = 0;
    assert_int_equal(link_wait(link, LINK_TAG_NB, 200, &src, &tag, &data, &len), LINK_NONE);
    assert_null(data);
}

int main(int argc, char **argv)
{
    char why[256] = "";
    // The cap is set before MPI tells the rank: read it from the launcher (Open MPI, MPICH).
    const char *env = getenv("OMPI_COMM_WORLD_RANK");
    if (!env)
        env = getenv("PMI_RANK");
    long rank = env ? strtol(env, NULL, 10) : 0;
    if (link_init(&argc, &argv, rank == 0 ? RECEIVER_CAP : SENDER_CAP, &link, why, sizeof why) !=
        LINK_OK) {
        fprintf(stderr, "link_init: %s\n", why);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_too_big),
        cmocka_unit_test(test_bad_tag),
        cmocka_unit_test(test_renew),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    link_finalize(link);
    return failed;
}
