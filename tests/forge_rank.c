// SPDX-License-Identifier: MIT
// A forged rank for the MPI tier: it joins an `xqforge run` as one more rank (an MPMD launch),
// sends the coordinator an 8 MiB message (twice the cap) and a message that is not msgpack,
// then waits to be refused and says BYE. The run must go on without it: the coordinator
// neither crashes nor counts anything from it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link.h"
#include "wire.h"

int main(int argc, char **argv)
{
    char why[256];
    Link *l;
    // Its own cap is larger than the coordinator's: the 8 MiB message really goes out.
    if (link_init(&argc, &argv, 64u << 20, &l, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "forge: %s\n", why);
        return 1;
    }
    // The collective every rank of `xqforge run` takes before the roles split.
    if (!link_all_ok(l, true)) {
        link_finalize(l);
        return 1;
    }
    size_t big = 8u << 20;
    char *junk = malloc(big);
    if (!junk)
        return 1;
    memset(junk, 0x94, big);
    LinkStatus a = link_send(l, 0, LINK_TAG_RESULT, junk, big);
    LinkStatus b = link_send(l, 0, LINK_TAG_CONTROL, "not msgpack", 11);
    free(junk);
    printf("forge: sent 8 MiB (%s) and garbage (%s)\n", link_strerror(a), link_strerror(b));
    // Wait for the REFUSE (or a STOP), then leave as a worker would.
    int src;
    LinkTag tag;
    void *data = NULL;
    size_t len = 0;
    LinkStatus w = link_wait(l, LINK_TAG_ORDER, 120000, &src, &tag, &data, &len);
    WireMessage m;
    bool refused = w == LINK_OK && wire_unpack(data, len, &m, why, sizeof why) == WIRE_OK &&
                   m.kind == WIRE_REFUSE;
    if (w == LINK_OK)
        wire_message_destroy(&m);
    free(data);
    printf("forge: %s\n", refused ? "refused" : "not refused");
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    WireBye bye = {(uint32_t)link_rank(l), 0, ""};
    if (wire_pack_bye(&bye, &buf) == WIRE_OK)
        link_send(l, 0, LINK_TAG_CONTROL, buf.data, buf.size);
    msgpack_sbuffer_destroy(&buf);
    link_finalize(l);
    return refused ? 0 : 1;
}
