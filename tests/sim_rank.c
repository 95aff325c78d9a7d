// SPDX-License-Identifier: MIT
// A simulated worker rank for the coordinator benchmark (scripts/bench-coordinator.sh): it
// joins an `xqforge run` as one more rank (an MPMD launch), says HELLO with the bench
// signature it is given, then asks for pairs and answers every WORK at once with stored real
// pair results (read from the journal of an earlier real run of the same job), each under the
// pair id and job id of the WORK it answers, until STOP; then BYE. It plays nothing: N of them
// fit on 2 cores, so what is measured is the coordinator (its rules check, journal, counting).
// The stored results are valid for any pair only when the job has one opening (every pair
// plays it): the benchmark's job file makes sure of that.
//
// While it waits for WORK it sleeps SLEEP_MS between polls (never a busy wait: hundreds of them
// share 2 cores with the coordinator being measured).
//
// Usage: sim_rank JOURNAL SIGNATURE NPS [PAIRS [SLEEP_MS]]
//   PAIRS: pairs asked for at once (default 2); SLEEP_MS: 1..1000 (default 1)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "journal.h"
#include "link.h"
#include "wire.h"

enum { STORED_MAX = 8 };

typedef struct {
    WireResult *r[STORED_MAX];
    int n;
} Stored;

/// Keeps the first one-pair results of the journal (the coordinator's records are results).
static int keep_result(void *ctx, uint64_t key, const void *payload, size_t len)
{
    Stored *s = ctx;
    WireMessage m;
    char why[256];
    (void)key;
    if (s->n == STORED_MAX || wire_unpack(payload, len, &m, why, sizeof why) != WIRE_OK)
        return 0;
    if (m.kind == WIRE_RESULT && m.result->unit_count == 1) {
        s->r[s->n++] = m.result;
        return 0;
    }
    wire_message_destroy(&m);
    return 0;
}

static bool parse_u64(const char *text, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || *end || text[0] == '-')
        return false;
    *out = v;
    return true;
}

/// Answers every pair of a WORK with a stored result; false if a send failed.
static bool answer(Channel *ch, const Stored *s, const WireWork *w, uint64_t *sent,
                   msgpack_sbuffer *buf)
{
    for (int i = 0; i < w->unit_count; i++) {
        WireResult *r = s->r[*sent % (uint64_t)s->n];
        r->job_id = w->job_id;
        r->rank = (uint32_t)ch->rank;
        r->units[0].pair_id = w->unit_ids[i];
        r->games_played = 2 * (*sent + 1);
        (*sent)++;
        if (!channel_send(ch, 0, LINK_TAG_RESULT, wire_pack_result(r, buf), buf))
            return false;
    }
    return true;
}

/// The protocol until STOP or REFUSE: returns the pairs answered, or -1 if a send failed.
static long long serve(Channel *ch, const Stored *s, const WireHello *hello, uint32_t pairs,
                       long sleep_ms)
{
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    uint64_t sent = 0;
    bool ok = channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_hello(hello, &buf), &buf);
    bool requested = false, stopped = false;
    while (ok && !stopped) {
        if (!requested) {
            WireRequest req = {(uint32_t)ch->rank, pairs};
            ok = channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_request(&req, &buf), &buf);
            requested = true;
        }
        WireMessage m;
        int src;
        if (!channel_receive(ch, LINK_TAG_ORDER, LINK_TAG_ORDER, &src, &m, NULL)) {
            struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        if (m.kind == WIRE_WORK) {
            ok = answer(ch, s, &m.work, &sent, &buf);
            requested = false;
        } else if (m.kind == WIRE_STOP || m.kind == WIRE_REFUSE) {
            stopped = true;
            if (m.kind == WIRE_REFUSE)
                fprintf(stderr, "sim_rank %d refused: %s\n", ch->rank, m.refuse.reason);
        }
        wire_message_destroy(&m);
    }
    WireBye bye = {(uint32_t)ch->rank, 2 * sent, ""};
    ok = channel_send(ch, 0, LINK_TAG_CONTROL, wire_pack_bye(&bye, &buf), &buf) && ok;
    msgpack_sbuffer_destroy(&buf);
    return ok ? (long long)sent : -1;
}

int main(int argc, char **argv)
{
    char why[512];
    Link *l;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &l, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "sim_rank: %s\n", why);
        return 1;
    }
    uint64_t signature = 0, nps = 0, pairs = 2, sleep_ms = 1;
    Stored s = {0};
    bool ok = argc >= 4 && argc <= 6 && parse_u64(argv[2], &signature) &&
              parse_u64(argv[3], &nps) && (argc < 5 || parse_u64(argv[4], &pairs)) &&
              (argc < 6 || parse_u64(argv[5], &sleep_ms)) && pairs >= 1 &&
              pairs <= WIRE_MAX_PAIRS_PER_WORK && sleep_ms >= 1 && sleep_ms <= 1000;
    if (!ok)
        fprintf(stderr, "usage: sim_rank JOURNAL SIGNATURE NPS [PAIRS 1..%d [SLEEP_MS 1..1000]]\n",
                WIRE_MAX_PAIRS_PER_WORK);
    JournalStatus js = ok ? journal_scan(argv[1], keep_result, &s, why, sizeof why) : JOURNAL_OK;
    if (ok && (js != JOURNAL_OK || s.n == 0)) {
        fprintf(stderr, "sim_rank: %s: %s\n", argv[1],
                js != JOURNAL_OK ? why : "no one-pair result in the journal");
        ok = false;
    }
    // The collective every rank of `xqforge run` takes before the roles split.
    if (!link_all_ok(l, ok)) {
        for (int i = 0; i < s.n; i++)
            wire_result_free(s.r[i]);
        link_finalize(l);
        return 1;
    }
    Channel ch;
    channel_from_link(&ch, l);
    WireHello hello = {(uint32_t)ch.rank, "", 1, 1, signature, nps, "sim_rank", 0, {0}};
    snprintf(hello.hostname, sizeof hello.hostname, "%s", ch.host[0] ? ch.host : "?");
    long long sent = serve(&ch, &s, &hello, (uint32_t)pairs, (long)sleep_ms);
    for (int i = 0; i < s.n; i++)
        wire_result_free(s.r[i]);
    link_finalize(l);
    if (sent < 0) {
        fprintf(stderr, "sim_rank %d: cannot reach the coordinator\n", ch.rank);
        return 1;
    }
    return 0;
}
