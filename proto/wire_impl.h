// SPDX-License-Identifier: MIT
// Internal to proto/: what wire.c (names, rules, packing) and wire_unpack.c (receiving) share.
// One set of rules serves both directions, so the receiver refuses exactly what the sender
// would have refused to send.
#pragma once

#include <stddef.h>

#include "wire.h"

/// Where a failure happened (-1: not inside a pair/game/ply) and where to write why.
typedef struct {
    char *why;
    size_t why_len;
    int pair, game, ply;
} WireCtx;

/// Writes "STATUS: [pair P game G ply N: ]MESSAGE" into c->why (when there is one) and
/// returns s, so that a failing check is one `return wire_fail(...)`.
__attribute__((format(printf, 3, 4))) WireStatus wire_fail(WireCtx *c, WireStatus s,
                                                           const char *fmt, ...);

/// The semantic rules of m's body (ranges that depend on other fields, distinct ids, moves on
/// the board), as wire_pack_* applies them before sending.
WireStatus wire_check(WireCtx *c, const WireMessage *m);
