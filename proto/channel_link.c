// SPDX-License-Identifier: MIT
// The channel over the MPI link (the link keeps MPI to itself: no mpi.h here).
#include <stdio.h>

#include "channel.h"

static LinkStatus link_ch_send(void *impl, int dest, LinkTag tag, const void *data, size_t len)
{
    return link_send(impl, dest, tag, data, len);
}

static LinkStatus link_ch_poll(void *impl, LinkTag tag, int *src, void **data, size_t *len)
{
    LinkTag got;
    return link_poll(impl, tag, src, &got, data, len);
}

static const ChannelOps link_ops = {link_ch_send, link_ch_poll};

void channel_from_link(Channel *c, Link *l)
{
    *c = (Channel){&link_ops, l, link_rank(l), link_size(l), ""};
    snprintf(c->host, sizeof c->host, "%.*s", WIRE_MAX_TEXT, link_host(l));
}
