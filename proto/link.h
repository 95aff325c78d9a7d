// SPDX-License-Identifier: MIT
// The MPI link: the only module that includes mpi.h. A private communicator, named tags,
// matched probes for variable-size messages with a size cap, and polling without
// busy-waiting (a blocking MPI_Recv spins a whole core in Open MPI).
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    LINK_TAG_CONTROL = 1, // worker -> coordinator: HELLO, REQUEST, BYE
    LINK_TAG_ORDER,       // coordinator -> worker: WORK, STOP, REFUSE (one tag: MPI keeps
                          // their order only within a tag)
    LINK_TAG_RESULT,      // worker -> coordinator: a finished unit
    LINK_TAG_FLEET,       // fleet, rank 0 -> worker, between tests only: the next test, or end
    LINK_TAG_NB
} LinkTag;

typedef enum {
    LINK_OK,
    LINK_NONE,        // no message waiting
    LINK_ERR_MPI,     // an MPI call failed (the message names it)
    LINK_ERR_TOO_BIG, // a message above the cap arrived and was discarded (received whole
                      // up to 64 MiB, so its sender goes on; above, left unreceived)
    LINK_ERR_BAD_TAG, // a message with a tag we do not use arrived and was discarded
    LINK_ERR_NOMEM,
    LINK_STATUS_NB
} LinkStatus;

typedef struct Link Link;

const char *link_strerror(LinkStatus st);

/// Initialises MPI (thread level MULTIPLE, checked) and duplicates the world communicator.
/// Works without mpirun too (a singleton of one rank).
LinkStatus link_init(int *argc, char ***argv, size_t max_message, Link **out, char *why,
                     size_t why_len);
void link_finalize(Link *l);
/// A link over some of parent's ranks (ranks[0..n), in that order: ranks[0] is the new link's
/// rank 0), made by those ranks alone (MPI_Comm_create_group): every one of them calls it
/// with the same list and tag, while the parent's others go on. A fleet's test runs on one.
LinkStatus link_group(Link *parent, const int *ranks, int n, int tag, Link **out, char *why,
                      size_t why_len);
/// Frees a link made by link_group (MPI stays initialised; its communicator is freed later, as
/// link_renew's old one: messages still in transit to it cannot reach a newer one).
void link_group_free(Link *l);
/// Moves the link to a fresh communicator over the same ranks (MPI_Comm_dup: a collective,
/// every rank of the link calls it). What was sent on the old one and not yet received can
/// never be received: the steps of a run (a loop's generations, [verify]'s SPRT) start clean
/// whatever a finished step left in transit. On failure the link is unchanged.
LinkStatus link_renew(Link *l, char *why, size_t why_len);
int link_rank(const Link *l);
int link_size(const Link *l);
/// How many ranks of the job share this node (one shared-memory domain), this one included.
int link_node_size(const Link *l);
/// This rank's index among them, 0 .. link_node_size - 1, in the order of link_rank.
int link_node_rank(const Link *l);
/// True if rank (a link_rank) runs on this node: whether the coordinator shares its cores.
bool link_node_has(const Link *l, int rank);
const char *link_host(const Link *l);
/// Every rank gets root's len bytes of buf (collective: every rank calls it); false when
/// MPI fails.
bool link_bcast(Link *l, void *buf, size_t len, int root);

LinkStatus link_send(Link *l, int dest, LinkTag tag, const void *data, size_t len);
/// Takes one waiting message, if any (from any rank; tag LINK_TAG_NB for any tag). *data is
/// malloc'd; the caller frees it.
LinkStatus link_poll(Link *l, LinkTag tag, int *source, LinkTag *got_tag, void **data, size_t *len);
/// Like link_poll, but waits (sleeping between probes) up to timeout_ms (-1: forever).
LinkStatus link_wait(Link *l, LinkTag tag, int timeout_ms, int *source, LinkTag *got_tag,
                     void **data, size_t *len);
/// Collective: true on every rank when ok is true on every rank (a job that fails to load on
/// one rank stops everywhere).
bool link_all_ok(Link *l, bool ok);
/// Adds buf[0..n) over every rank, in place (a collective: every rank calls it, same n).
/// False if MPI failed.
bool link_sum(Link *l, double *buf, int n);
/// Ends the whole MPI job abnormally (only main() may decide this).
void link_abort(Link *l, int code);
