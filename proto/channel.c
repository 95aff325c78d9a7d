// SPDX-License-Identifier: MIT
// The Channel: both loops send and receive wire messages through it, never through MPI, so
// tests/test_loops.c can run them over the in-memory hub below with the same code paths.
#include "channel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Takes the wire_pack_* status so that a call site is one line; the buffer is cleared either
/// way, so a failed pack never leaks its partial bytes into the next message.
bool channel_send(Channel *c, int dest, LinkTag tag, WireStatus ws, msgpack_sbuffer *buf)
{
    bool ok = ws == WIRE_OK && c->ops->send(c->impl, dest, tag, buf->data, buf->size) == LINK_OK;
    msgpack_sbuffer_clear(buf);
    return ok;
}

bool channel_receive(Channel *c, LinkTag first, LinkTag second, int *src, WireMessage *msg,
                     int *rejected)
{
    LinkTag tags[2] = {first, second};
    if (rejected)
        *rejected = -1;
    for (int i = 0; i < (first == second ? 1 : 2); i++) { // one tag: polled once
        void *data = NULL;
        size_t len = 0;
        LinkStatus ls = c->ops->poll(c->impl, tags[i], src, &data, &len);
        // (Not link_strerror: the in-memory channel needs nothing of the MPI library.)
        if (ls == LINK_ERR_TOO_BIG || ls == LINK_ERR_BAD_TAG) {
            fprintf(stderr, "\nrank %d: a message from rank %d %s was discarded\n", c->rank, *src,
                    ls == LINK_ERR_TOO_BIG ? "above the size cap" : "with an unknown tag");
            if (rejected)
                *rejected = *src; // a protocol error of that rank
            return false;         // reported now: a message under the other tag must not hide it
        }
        if (ls != LINK_OK)
            continue;
        char why[256];
        WireStatus st = wire_unpack(data, len, msg, why, sizeof why);
        free(data);
        if (st == WIRE_OK)
            return true;
        fprintf(stderr, "\nrank %d: rejected a message from rank %d: %s (%s)\n", c->rank, *src,
                wire_strerror(st), why);
        if (rejected)
            *rejected = *src;
        return false; // reported now: a message under the other tag must not hide it
    }
    return false;
}

// ---- In memory -----------------------------------------------------------------------------
// A hub of ranks in one process, for tests: each rank has a FIFO of notes, and a poll takes
// the first note of the asked tag, as MPI's matching by tag does.

typedef struct Note {
    struct Note *next;
    int src;
    LinkTag tag;
    size_t len;
    char data[];
} Note;

typedef struct {
    ChannelHub *hub;
    Channel ch;
    Note *head, *tail; // messages to this rank, in the order sent
} HubRank;

struct ChannelHub {
    pthread_mutex_t lock;
    int size;
    HubRank *ranks;
};

static LinkStatus hub_send(void *impl, int dest, LinkTag tag, const void *data, size_t len)
{
    HubRank *me = impl;
    ChannelHub *h = me->hub;
    if (dest < 0 || dest >= h->size || tag <= 0 || tag >= LINK_TAG_NB)
        return LINK_ERR_MPI;
    Note *n = malloc(sizeof *n + len);
    if (!n)
        return LINK_ERR_NOMEM;
    *n = (Note){NULL, me->ch.rank, tag, len};
    memcpy(n->data, data, len);
    pthread_mutex_lock(&h->lock);
    HubRank *to = &h->ranks[dest];
    if (to->tail)
        to->tail->next = n;
    else
        to->head = n;
    to->tail = n;
    pthread_mutex_unlock(&h->lock);
    return LINK_OK;
}

/// The caller frees *data, as with the MPI link; tag LINK_TAG_NB takes any tag.
static LinkStatus hub_poll(void *impl, LinkTag tag, int *src, void **data, size_t *len)
{
    HubRank *me = impl;
    ChannelHub *h = me->hub;
    pthread_mutex_lock(&h->lock);
    Note *prev = NULL, *n = me->head;
    while (n && n->tag != tag && tag != LINK_TAG_NB) {
        prev = n;
        n = n->next;
    }
    if (n) {
        if (prev)
            prev->next = n->next;
        else
            me->head = n->next;
        if (me->tail == n)
            me->tail = prev;
    }
    pthread_mutex_unlock(&h->lock);
    if (!n)
        return LINK_NONE;
    *src = n->src;
    *len = n->len;
    *data = malloc(n->len ? n->len : 1); // never malloc(0): NULL would read as out of memory
    if (*data)
        memcpy(*data, n->data, n->len);
    free(n);
    return *data ? LINK_OK : LINK_ERR_NOMEM;
}

static const ChannelOps hub_ops = {hub_send, hub_poll};

ChannelHub *channel_hub_new(int size)
{
    ChannelHub *h = calloc(1, sizeof *h);
    if (!h || size < 1 || !(h->ranks = calloc((size_t)size, sizeof *h->ranks))) {
        free(h);
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->size = size;
    for (int r = 0; r < size; r++) {
        HubRank *hr = &h->ranks[r];
        hr->hub = h;
        hr->ch = (Channel){&hub_ops, hr, r, size, ""};
        snprintf(hr->ch.host, sizeof hr->ch.host, "memory");
    }
    return h;
}

Channel *channel_hub_rank(ChannelHub *h, int rank)
{
    return rank >= 0 && rank < h->size ? &h->ranks[rank].ch : NULL;
}

int channel_hub_pending(ChannelHub *h, int rank)
{
    int n = 0;
    pthread_mutex_lock(&h->lock);
    for (Note *p = h->ranks[rank].head; p; p = p->next)
        n++;
    pthread_mutex_unlock(&h->lock);
    return n;
}

void channel_hub_free(ChannelHub *h)
{
    if (!h)
        return;
    for (int r = 0; r < h->size; r++)
        for (Note *n = h->ranks[r].head, *next; n; n = next) {
            next = n->next;
            free(n);
        }
    pthread_mutex_destroy(&h->lock);
    free(h->ranks);
    free(h);
}
