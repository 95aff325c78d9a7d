// SPDX-License-Identifier: MIT
// Wire messages (proto/wire.c): any bytes decode to one valid message or are refused with a
// reason; a decoded message packs again (the same rules on both sides), and its packed form
// decodes and packs to the very same bytes.
#include "fuzz_util.h"

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    WireMessage m, m2;
    char why[256];
    why[0] = '\0';
    WireStatus st = wire_unpack((const char *)data, size, &m, why, sizeof why);
    if (st != WIRE_OK) {
        if (m.kind != WIRE_KIND_NB || !*why)
            abort();
        wire_message_destroy(&m);
        return 0;
    }
    msgpack_sbuffer a, b;
    msgpack_sbuffer_init(&a);
    msgpack_sbuffer_init(&b);
    if (wire_pack(&m, &a) != WIRE_OK)
        abort(); // accepted on input, so it must be sendable
    if (wire_unpack(a.data, a.size, &m2, why, sizeof why) != WIRE_OK || m2.kind != m.kind)
        abort();
    if (wire_pack(&m2, &b) != WIRE_OK || a.size != b.size || memcmp(a.data, b.data, a.size))
        abort();
    wire_message_destroy(&m2);
    wire_message_destroy(&m);
    msgpack_sbuffer_destroy(&a);
    msgpack_sbuffer_destroy(&b);
    return 0;
}
