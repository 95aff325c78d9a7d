// SPDX-License-Identifier: MIT
// A simulated worker rank for the coordinator benchmarks (scripts/bench-coordinator.sh,
// scripts/bench-fleet.sh): it joins an `xqforge run` as one more rank (an MPMD launch), says
// HELLO with the bench signature it is given, then asks for pairs and answers every WORK at
// once with stored real pair results (read from the journal of an earlier real run of the same
// job), each under the pair id and job id of the WORK it answers, until STOP; then BYE. It
// plays nothing: N of them fit on 2 cores, so what is measured is the coordinator (its rules
// check, journal, counting). The stored results are valid for any pair only when the job has
// one opening (every pair plays it): the benchmarks' job file makes sure of that.
//
// With --fleet it is a worker rank of `xqforge fleet` instead (run/fleet.c: fleet_work):
// it waits for rank 0's LINK_TAG_FLEET order, joins that test's group (link_group, as a real
// worker does), serves the test on the group exactly as above, and waits for the next order,
// until "end". Every test of the queue must be the recorded job (its name and rounds may
// differ).
//
// While it waits for WORK or an order it sleeps SLEEP_MS between polls (never a busy wait:
// hundreds of them share 2 cores with the coordinator being measured).
//
// Usage: sim_rank [--fleet] JOURNAL SIGNATURE NPS [PAIRS [SLEEP_MS]]
//   PAIRS: pairs asked for at once (default 2); SLEEP_MS: 1..1000 (default 1)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "channel.h"
#include "journal.h"
#include "link.h"
#include "session.h"
#include "wire.h"

enum {
    STORED_MAX = 8,
    // run/fleet.c's FLEET_TAG_BASE: a test's group is made under this plus its number
    // (every member must pass the same tag; mpi_bench_fleet hangs if the two differ).
    FLEET_TAG_BASE = 1000,
    FLEET_RANKS_MAX = 1024,
};

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

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
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
            nap(sleep_ms);
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

/// What every test is served with.
typedef struct {
    Stored stored;
    uint64_t signature, nps;
    uint32_t pairs;
    long sleep_ms;
} Sim;

/// One test on l (a run's world, or a fleet test's group), as a worker's run_session takes
/// it: the collectives every rank takes before the roles split, in its order (rank 0's
/// resolved sources; whether every rank is ready; if not, the count of ranks that failed to
/// run it), then the worker's protocol. Every one must be taken: a collective skipped here
/// would be matched by the next one (Open MPI's allreduce is a reduce and a broadcast at 128
/// ranks and more, and took rank 0's broadcast of the sources instead of its own).
/// Returns the pairs answered, or -1 if the test did not start or a send failed.
static long long sim_test(Link *l, const Sim *sim, bool ok)
{
    RunSources rs;
    if (!link_bcast(l, &rs, sizeof rs, 0)) {
        fprintf(stderr, "sim_rank %d: MPI: cannot take rank 0's resolved sources\n", link_rank(l));
        return -1;
    }
    if (!link_all_ok(l, ok)) {
        double failed = ok ? 0 : 1;
        (void)link_sum(l, &failed, 1);
        return -1;
    }
    Channel ch;
    channel_from_link(&ch, l);
    WireHello hello = {(uint32_t)ch.rank, "", 1, 1, sim->signature, sim->nps, "sim_rank", 0, {0}};
    snprintf(hello.hostname, sizeof hello.hostname, "%s", ch.host[0] ? ch.host : "?");
    long long sent = serve(&ch, &sim->stored, &hello, sim->pairs, sim->sleep_ms);
    if (sent < 0)
        fprintf(stderr, "sim_rank %d: cannot reach the coordinator\n", ch.rank);
    return sent;
}

/// Rank 0's order for a fleet worker, as run/fleet.c's fleet_start writes it:
/// "ID N R1 .. RN", the test's id and its group's world ranks (R1 is 0, the coordinator).
static bool parse_order(const char *text, int *tag, int *ranks, int *n)
{
    char *end;
    long id = strtol(text, &end, 10);
    if (end == text || *end != ' ' || id < 0 || id > 1000000)
        return false;
    long count = strtol(end, &end, 10);
    if (count < 1 || count > FLEET_RANKS_MAX)
        return false;
    for (long i = 0; i < count; i++) {
        const char *p = end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0)
            return false;
        ranks[i] = (int)r;
    }
    if (*end)
        return false;
    *tag = FLEET_TAG_BASE + (int)id;
    *n = (int)count;
    return true;
}

/// A fleet worker rank (cmd_fleet.c: fleet_work): each order's test on its group, until
/// "end". Returns 0, or 1 if an order was bad or a test could not be served.
static int sim_fleet(Link *world, const Sim *sim)
{
    int rc = 0, tests = 0;
    for (;;) {
        void *data = NULL;
        size_t len = 0;
        int src, tag, n = 0;
        LinkTag got;
        LinkStatus st = link_poll(world, LINK_TAG_FLEET, &src, &got, &data, &len);
        if (st == LINK_NONE) {
            nap(sim->sleep_ms);
            continue;
        }
        bool text = st == LINK_OK && len > 0 && ((char *)data)[len - 1] == '\0';
        if (text && !strcmp(data, "end")) {
            free(data);
            break;
        }
        int ranks[FLEET_RANKS_MAX];
        if (!text || !parse_order(data, &tag, ranks, &n)) {
            fprintf(stderr, "sim_rank %d: a bad order from rank 0: %s\n", link_rank(world),
                    st != LINK_OK ? link_strerror(st)
                    : text        ? (char *)data
                                  : "not text");
            free(data);
            rc = 1;
            break;
        }
        free(data);
        char why[512];
        Link *group = NULL;
        if (link_group(world, ranks, n, tag, &group, why, sizeof why) != LINK_OK) {
            fprintf(stderr, "sim_rank %d: test %d: %s\n", link_rank(world), tag - FLEET_TAG_BASE,
                    why);
            rc = 1;
            continue; // as a real worker: rank 0 sees the test fail, and sends the next order
        }
        if (sim_test(group, sim, true) < 0)
            rc = 1;
        link_group_free(group);
        tests++;
    }
    if (tests == 0)
        fprintf(stderr, "sim_rank %d: no test came before the end\n", link_rank(world));
    return rc;
}

int main(int argc, char **argv)
{
    char why[512];
    Link *l;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &l, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "sim_rank: %s\n", why);
        return 1;
    }
    bool fleet = argc > 1 && !strcmp(argv[1], "--fleet");
    if (fleet) {
        argv++;
        argc--;
    }
    uint64_t pairs = 2, sleep_ms = 1;
    Sim sim = {0};
    bool ok = argc >= 4 && argc <= 6 && parse_u64(argv[2], &sim.signature) &&
              parse_u64(argv[3], &sim.nps) && (argc < 5 || parse_u64(argv[4], &pairs)) &&
              (argc < 6 || parse_u64(argv[5], &sleep_ms)) && pairs >= 1 &&
              pairs <= WIRE_MAX_PAIRS_PER_WORK && sleep_ms >= 1 && sleep_ms <= 1000;
    if (!ok)
        fprintf(stderr,
                "usage: sim_rank [--fleet] JOURNAL SIGNATURE NPS [PAIRS 1..%d [SLEEP_MS "
                "1..1000]]\n",
                WIRE_MAX_PAIRS_PER_WORK);
    sim.pairs = (uint32_t)pairs;
    sim.sleep_ms = (long)sleep_ms;
    Stored *s = &sim.stored;
    JournalStatus js = ok ? journal_scan(argv[1], keep_result, s, why, sizeof why) : JOURNAL_OK;
    if (ok && (js != JOURNAL_OK || s->n == 0)) {
        fprintf(stderr, "sim_rank: %s: %s\n", argv[1],
                js != JOURNAL_OK ? why : "no one-pair result in the journal");
        ok = false;
    }
    int rc;
    if (fleet) {
        // The collective every rank of `xqforge fleet` takes first (the queue checked).
        rc = link_all_ok(l, ok) ? sim_fleet(l, &sim) : 1;
    } else {
        rc = sim_test(l, &sim, ok) < 0 ? 1 : 0;
    }
    for (int i = 0; i < s->n; i++)
        wire_result_free(s->r[i]);
    link_finalize(l);
    return rc;
}
