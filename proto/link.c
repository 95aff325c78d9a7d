// SPDX-License-Identifier: MIT
#include "link.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct Link {
    MPI_Comm comm;
    int rank, size;
    size_t max_message;
    char host[MPI_MAX_PROCESSOR_NAME];
};

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

LinkStatus link_init(int *argc, char ***argv, size_t max_message, Link **out, char *why,
                     size_t why_len)
{
    *out = NULL;
    int provided = 0, rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Init_thread", why, why_len);
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
    // Errors come back as codes, never abort the job behind our back.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &l->comm)) != MPI_SUCCESS ||
        (rc = MPI_Comm_set_errhandler(l->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (rc = MPI_Comm_rank(l->comm, &l->rank)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(l->comm, &l->size)) != MPI_SUCCESS) {
        LinkStatus st = mpi_fail(rc, "setting up the communicator", why, why_len);
        free(l);
        MPI_Finalize();
        return st;
    }
    int n = 0;
    if (MPI_Get_processor_name(l->host, &n) != MPI_SUCCESS)
        snprintf(l->host, sizeof l->host, "?");
    l->max_message = max_message;
    *out = l;
    return LINK_OK;
}

void link_finalize(Link *l)
{
    if (!l)
        return;
    MPI_Comm_free(&l->comm);
    free(l);
    MPI_Finalize();
}

int link_rank(const Link *l) { return l->rank; }
int link_size(const Link *l) { return l->size; }
const char *link_host(const Link *l) { return l->host; }

void link_abort(Link *l, int code) { MPI_Abort(l ? l->comm : MPI_COMM_WORLD, code); }

LinkStatus link_send(Link *l, int dest, LinkTag tag, const void *data, size_t len)
{
    if (len > l->max_message || len > (size_t)0x7fffffff)
        return LINK_ERR_TOO_BIG;
    int rc = MPI_Send(data, (int)len, MPI_BYTE, dest, (int)tag, l->comm);
    return rc == MPI_SUCCESS ? LINK_OK : LINK_ERR_MPI;
}

LinkStatus link_poll(Link *l, LinkTag tag, int *source, LinkTag *got_tag, void **data, size_t *len)
{
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    int rc = MPI_Improbe(MPI_ANY_SOURCE, tag == LINK_TAG_NB ? MPI_ANY_TAG : (int)tag, l->comm,
                         &flag, &msg, &st);
    if (rc != MPI_SUCCESS)
        return LINK_ERR_MPI;
    if (!flag)
        return LINK_NONE;
    int count = 0;
    if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0)
        return LINK_ERR_MPI;
    *source = st.MPI_SOURCE;
    *got_tag = (LinkTag)st.MPI_TAG;
    bool keep = (size_t)count <= l->max_message && st.MPI_TAG >= LINK_TAG_CONTROL &&
                st.MPI_TAG < LINK_TAG_NB;
    if (!keep) {
        // Matched messages must be received: take it into an empty buffer (MPI reports the
        // truncation, which is the point) so an oversized one is never allocated.
        char scratch[1];
        MPI_Mrecv(scratch, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        return (size_t)count > l->max_message ? LINK_ERR_TOO_BIG : LINK_ERR_BAD_TAG;
    }
    void *buf = malloc(count > 0 ? (size_t)count : 1);
    if (!buf)
        return LINK_ERR_NOMEM;
    rc = MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        free(buf);
        return LINK_ERR_MPI;
    }
    *data = buf;
    *len = (size_t)count;
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

bool link_all_ok(Link *l, bool ok)
{
    int mine = ok ? 1 : 0, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, l->comm) != MPI_SUCCESS)
        return false;
    return all == 1;
}
