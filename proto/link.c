// SPDX-License-Identifier: MIT
#include "link.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// A message above the cap is still received in full (and freed) up to this size: Open MPI
// 4.1 corrupts memory when a large message is received into a smaller buffer (its
// shared-memory single-copy path writes the whole message; a zero-count receive crashes).
// Above it the message is left unreceived: bounded memory beats draining a broken peer.
#define LINK_DRAIN_MAX ((MPI_Count)64 << 20)

struct Link {
    MPI_Comm comm;
    int rank, size;
    int node_rank, node_size; // this rank among the job's ranks on this node
    int *node_members;        // their ranks in comm, ascending; node_size entries
    size_t max_message;
    char host[MPI_MAX_PROCESSOR_NAME];
};

// Communicators link_renew and link_group_free are done with, kept a while before they are
// freed: one may still receive a message nobody reads (a finished step's last STOP, still in
// transit), and Open MPI hands a freed communicator's context id to the next one made, whose
// receives could then match it. Freed only after RETIRED_MAX later ones (what was in transit
// has long arrived, and goes with it), so a fleet that makes groups for weeks holds a bounded
// number. Fleet tests retire theirs from threads of their own.
enum { RETIRED_MAX = 64 };
static struct {
    pthread_mutex_t lock;
    MPI_Comm comm[RETIRED_MAX];
    size_t n, next; // how many are held; the slot the next one takes (the oldest when full)
} retired = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void link_retire(MPI_Comm c)
{
    pthread_mutex_lock(&retired.lock);
    if (retired.n == RETIRED_MAX)
        MPI_Comm_free(&retired.comm[retired.next]);
    else
        retired.n++;
    retired.comm[retired.next] = c;
    retired.next = (retired.next + 1) % RETIRED_MAX;
    pthread_mutex_unlock(&retired.lock);
}

const char *link_strerror(LinkStatus st)
{
    static const char *const text[LINK_STATUS_NB] = {
        [LINK_OK] = "no error",
        [LINK_NONE] = "no message",
        [LINK_ERR_MPI] = "MPI call failed",
        [LINK_ERR_TOO_BIG] = "message above the size cap discarded",
        [LINK_ERR_BAD_TAG] = "message with an unknown tag discarded",
        [LINK_ERR_NOMEM] = "out of memory",
    };
    return (unsigned)st < LINK_STATUS_NB ? text[st] : "unknown link status";
}

/// Names the MPI call that failed and MPI's own text for its code: an operator reading a
/// cluster's log needs both.
static LinkStatus mpi_fail(int rc, const char *what, char *why, size_t why_len)
{
    if (why && why_len) {
        char err[MPI_MAX_ERROR_STRING];
        int n = 0;
        if (MPI_Error_string(rc, err, &n) != MPI_SUCCESS)
            snprintf(err, sizeof err, "code %d", rc);
        snprintf(why, why_len, "%s: %s", what, err);
    }
    return LINK_ERR_MPI;
}

/// The communicator: a duplicate of the world's, errors returned as codes, never aborting.
static int link_open_comm(Link *l, const char **what)
{
    int rc;
    // Errors as codes first: MPI's default handler aborts the whole job, and this module's
    // callers decide what a failure means (link_abort is main's alone).
    *what = "MPI_Comm_set_errhandler(MPI_COMM_WORLD)";
    if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return rc;
    // A private communicator: a library that also uses MPI_COMM_WORLD cannot match our tags.
    *what = "MPI_Comm_dup";
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &l->comm)) != MPI_SUCCESS)
        return rc;
    *what = "setting up the communicator";
    if ((rc = MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_rank(l->comm, &l->rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(l->comm, &l->size)) != MPI_SUCCESS)
        MPI_Comm_free(&l->comm);
    return rc;
}

/// The ranks sharing this node (MPI_COMM_TYPE_SHARED: one shared-memory domain), ordered by
/// rank in comm. A collective over comm: every rank calls it from link_init.
static int link_open_node(Link *l, const char **what)
{
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Group node_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
    int *index = NULL, rc;
    *what = "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)";
    if ((rc = MPI_Comm_split_type(l->comm, MPI_COMM_TYPE_SHARED, l->rank, MPI_INFO_NULL, &node)) !=
        MPI_SUCCESS)
        return rc;
    *what = "reading the node's communicator";
    if ((rc = MPI_Comm_size(node, &l->node_size)) != MPI_SUCCESS ||
        (rc = MPI_Comm_rank(node, &l->node_rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_group(node, &node_group)) != MPI_SUCCESS ||
        (rc = MPI_Comm_group(l->comm, &group)) != MPI_SUCCESS)
        goto done;
    index = malloc((size_t)l->node_size * sizeof *index);
    l->node_members = malloc((size_t)l->node_size * sizeof *l->node_members);
    if (!index || !l->node_members) {
        *what = "allocating the node's rank list";
        rc = MPI_ERR_NO_MEM;
        goto done;
    }
    for (int i = 0; i < l->node_size; i++)
        index[i] = i;
    // Ascending, since the split was keyed by rank in comm (link.h: the order of link_rank).
    rc = MPI_Group_translate_ranks(node_group, l->node_size, index, group, l->node_members);
done:
    free(index);
    if (rc != MPI_SUCCESS) {
        free(l->node_members);
        l->node_members = NULL;
    }
    if (group != MPI_GROUP_NULL)
        MPI_Group_free(&group);
    if (node_group != MPI_GROUP_NULL)
        MPI_Group_free(&node_group);
    MPI_Comm_free(&node);
    return rc;
}

LinkStatus link_init(int *argc, char ***argv, size_t max_message, Link **out, char *why,
                     size_t why_len)
{
    *out = NULL;
    int provided = 0, rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Init_thread", why, why_len);
    // Rank 0 may run the coordinator and a local worker thread side by side (one rank, or
    // coordinator_plays), both calling MPI.
    if (provided < MPI_THREAD_MULTIPLE) {
        snprintf(why, why_len, "MPI provides thread level %d, %d (MULTIPLE) is needed", provided,
                 MPI_THREAD_MULTIPLE);
        MPI_Finalize();
        return LINK_ERR_MPI;
    }
    Link *l = calloc(1, sizeof *l);
    if (!l) {
        MPI_Finalize();
        return LINK_ERR_NOMEM;
    }
    const char *what = "";
    if ((rc = link_open_comm(l, &what)) != MPI_SUCCESS)
        goto fail;
    // A collective: every rank reaches it, so a failure here is every rank's.
    if ((rc = link_open_node(l, &what)) != MPI_SUCCESS) {
        MPI_Comm_free(&l->comm);
        goto fail;
    }
    int n = 0;
    // The host only labels a rank in messages and reports: "?" is no reason to fail.
    if (MPI_Get_processor_name(l->host, &n) != MPI_SUCCESS)
        snprintf(l->host, sizeof l->host, "?");
    l->max_message = max_message;
    *out = l;
    return LINK_OK;
fail:;
    LinkStatus st = mpi_fail(rc, what, why, why_len);
    free(l);
    MPI_Finalize();
    return st;
}

void link_finalize(Link *l)
{
    if (!l)
        return;
    MPI_Comm_free(&l->comm);
    pthread_mutex_lock(&retired.lock);
    for (size_t i = 0; i < retired.n; i++)
        MPI_Comm_free(&retired.comm[i]);
    retired.n = retired.next = 0;
    pthread_mutex_unlock(&retired.lock);
    free(l->node_members);
    free(l);
    MPI_Finalize();
}

LinkStatus link_group(Link *parent, const int *ranks, int n, int tag, Link **out, char *why,
                      size_t why_len)
{
    *out = NULL;
    MPI_Group all = MPI_GROUP_NULL, part = MPI_GROUP_NULL;
    Link *l = calloc(1, sizeof *l);
    if (!l)
        return LINK_ERR_NOMEM;
    l->comm = MPI_COMM_NULL;
    const char *what = "MPI_Comm_group";
    int rc = MPI_Comm_group(parent->comm, &all);
    if (rc == MPI_SUCCESS) {
        what = "MPI_Group_incl";
        rc = MPI_Group_incl(all, n, ranks, &part);
    }
    // Collective over the members only: the parent's other ranks go on with their own work.
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_create_group";
        rc = MPI_Comm_create_group(parent->comm, part, tag, &l->comm);
    }
    if (rc == MPI_SUCCESS) {
        what = "setting up the group's communicator";
        if ((rc = MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN)) == MPI_SUCCESS &&
            (rc = MPI_Comm_rank(l->comm, &l->rank)) == MPI_SUCCESS &&
            (rc = MPI_Comm_size(l->comm, &l->size)) == MPI_SUCCESS)
            rc = link_open_node(l, &what);
    }
    if (part != MPI_GROUP_NULL)
        MPI_Group_free(&part);
    if (all != MPI_GROUP_NULL)
        MPI_Group_free(&all);
    if (rc != MPI_SUCCESS) {
        if (l->comm != MPI_COMM_NULL)
            MPI_Comm_free(&l->comm);
        free(l);
        return mpi_fail(rc, what, why, why_len);
    }
    memcpy(l->host, parent->host, sizeof l->host);
    l->max_message = parent->max_message;
    *out = l;
    return LINK_OK;
}

void link_group_free(Link *l)
{
    if (!l)
        return;
    link_retire(l->comm);
    free(l->node_members);
    free(l);
}

LinkStatus link_renew(Link *l, char *why, size_t why_len)
{
    MPI_Comm fresh = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(l->comm, &fresh);
    const char *what = "MPI_Comm_dup";
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_set_errhandler";
        if ((rc = MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
            MPI_Comm_free(&fresh); // never used: no message can be on it
    }
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, what, why, why_len);
    link_retire(l->comm);
    l->comm = fresh; // the same ranks in the same order: rank, size and node stay true
    return LINK_OK;
}

int link_rank(const Link *l) { return l->rank; }
int link_size(const Link *l) { return l->size; }
const char *link_host(const Link *l) { return l->host; }
int link_node_rank(const Link *l) { return l->node_rank; }
int link_node_size(const Link *l) { return l->node_size; }

bool link_node_has(const Link *l, int rank)
{
    for (int i = 0; i < l->node_size; i++)
        if (l->node_members[i] == rank)
            return true;
    return false;
}

/// Without a link (it failed to open) the world's communicator still reaches every rank.
void link_abort(Link *l, int code) { MPI_Abort(l ? l->comm : MPI_COMM_WORLD, code); }

LinkStatus link_send(Link *l, int dest, LinkTag tag, const void *data, size_t len)
{
    // The cap is checked on the sending side too (a receiver would drop it), and MPI counts in
    // int: no message above INT_MAX bytes.
    if (len > l->max_message || len > (size_t)0x7fffffff)
        return LINK_ERR_TOO_BIG;
    // A standard send: a large message may wait until the receiver's poll takes it.
    int rc = MPI_Send(data, (int)len, MPI_BYTE, dest, (int)tag, l->comm);
    return rc == MPI_SUCCESS ? LINK_OK : LINK_ERR_MPI;
}

/// Receives a matched message that will not be kept into a buffer of its full size and
/// frees it, so the sender is released and nothing is written out of bounds. Above
/// LINK_DRAIN_MAX (or if even that much memory is not there) it is left unreceived.
static void link_drain(MPI_Message *msg, MPI_Count bytes)
{
    void *buf =
        bytes >= 0 && bytes <= LINK_DRAIN_MAX ? malloc(bytes > 0 ? (size_t)bytes : 1) : NULL;
    if (buf) // a failed receive changes nothing: the message is discarded either way
        (void)MPI_Mrecv(buf, (int)bytes, MPI_BYTE, msg, MPI_STATUS_IGNORE);
    free(buf);
}

LinkStatus link_poll(Link *l, LinkTag tag, int *source, LinkTag *got_tag, void **data, size_t *len)
{
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    // A matched probe: the message found is the one received (MPI_Mrecv), even when another
    // thread of this rank polls the same tag meanwhile.
    int rc = MPI_Improbe(MPI_ANY_SOURCE, tag == LINK_TAG_NB ? MPI_ANY_TAG : (int)tag, l->comm,
                         &flag, &msg, &st);
    if (rc != MPI_SUCCESS)
        return LINK_ERR_MPI;
    if (!flag)
        return LINK_NONE;
    // MPI_Get_elements_x: the size even past INT_MAX bytes (MPI_Get_count says UNDEFINED).
    MPI_Count bytes = 0;
    if (MPI_Get_elements_x(&st, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes == MPI_UNDEFINED)
        bytes = -1;
    *source = st.MPI_SOURCE;
    *got_tag = (LinkTag)st.MPI_TAG;
    bool fits = bytes >= 0 && (uint64_t)bytes <= l->max_message && bytes <= INT_MAX;
    // Only our tags are taken; anything else is drained, or every probe for any tag would
    // find the same stray message again.
    bool known = st.MPI_TAG >= LINK_TAG_CONTROL && st.MPI_TAG < LINK_TAG_NB;
    if (!fits || !known) {
        link_drain(&msg, bytes);
        return !fits ? LINK_ERR_TOO_BIG : LINK_ERR_BAD_TAG;
    }
    void *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!buf)
        return LINK_ERR_NOMEM;
    rc = MPI_Mrecv(buf, (int)bytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return LINK_ERR_MPI;
    }
    *data = buf;
    *len = (size_t)bytes;
    return LINK_OK;
}

LinkStatus link_wait(Link *l, LinkTag tag, int timeout_ms, int *source, LinkTag *got_tag,
                     void **data, size_t *len)
{
    struct timespec pause = {0, 2000000}; // 2 ms between probes: no core burnt on waiting
    for (long waited = 0;; waited += 2) {
        LinkStatus st = link_poll(l, tag, source, got_tag, data, len);
        if (st != LINK_NONE)
            return st;
        if (timeout_ms >= 0 && waited >= timeout_ms)
            return LINK_NONE;
        nanosleep(&pause, NULL);
    }
}

bool link_sum(Link *l, double *buf, int n)
{
    return n > 0 &&
           MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, l->comm) == MPI_SUCCESS;
}

bool link_bcast(Link *l, void *buf, size_t len, int root)
{
    // In chunks below INT_MAX bytes: MPI counts in int.
    for (size_t off = 0; off < len;) {
        int n = len - off > (size_t)INT_MAX ? INT_MAX : (int)(len - off);
        if (MPI_Bcast((char *)buf + off, n, MPI_BYTE, root, l->comm) != MPI_SUCCESS)
            return false;
        off += (size_t)n;
    }
    return true;
}

/// MPI_MIN of 1 and 0: one rank's false is every rank's. A failed collective reads as false.
bool link_all_ok(Link *l, bool ok)
{
    int mine = ok ? 1 : 0, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, l->comm) != MPI_SUCCESS)
        return false;
    return all == 1;
}
