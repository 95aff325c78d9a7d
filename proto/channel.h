// SPDX-License-Identifier: MIT
// A Channel is how one rank of a run talks to the others: whole wire messages under the
// link's tags, sent to a rank and polled by tag. Two implementations: over the MPI link
// (channel_link.c, the real cluster) and in memory (a ChannelHub of N ranks in one process,
// each rank a thread), so the coordinator and worker loops are tested without mpirun.
// Both keep MPI's one ordering guarantee and no other: messages from one rank under one tag
// arrive in the order sent; under different tags they may overtake each other.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <msgpack.h>

#include "link.h"
#include "wire.h"

typedef struct Channel Channel;

typedef struct {
    LinkStatus (*send)(void *impl, int dest, LinkTag tag, const void *data, size_t len);
    /// One waiting message under tag, or LINK_NONE; *data is malloc'd for the caller.
    LinkStatus (*poll)(void *impl, LinkTag tag, int *src, void **data, size_t *len);
} ChannelOps;

struct Channel {
    const ChannelOps *ops;
    void *impl;
    int rank, size;
    char host[WIRE_MAX_TEXT + 1];
};

/// Sends the packed message in buf (when ws is WIRE_OK) and clears buf; false when the
/// message could not be packed or sent.
bool channel_send(Channel *c, int dest, LinkTag tag, WireStatus ws, msgpack_sbuffer *buf);

/// Takes one message under one of two tags (or one: first == second), decoded and validated;
/// false when none is waiting. A message that fails validation (or is above the size cap) is
/// logged with its reason and dropped, and the call returns false at once (a valid message
/// under the other tag waits for the next call); *rejected (may be NULL) is set to its
/// sender then, else -1.
bool channel_receive(Channel *c, LinkTag first, LinkTag second, int *src, WireMessage *msg,
                     int *rejected);

/// The MPI link as a channel (proto/channel_link.c). The Link stays the caller's.
void channel_from_link(Channel *c, Link *l);

/// N ranks in one process: channel_hub_rank(h, r) is rank r's end. Messages are copied.
typedef struct ChannelHub ChannelHub;
ChannelHub *channel_hub_new(int size);
void channel_hub_free(ChannelHub *h);
Channel *channel_hub_rank(ChannelHub *h, int rank);
/// Messages sent to rank and not yet taken (tests check that nothing was left behind).
int channel_hub_pending(ChannelHub *h, int rank);
