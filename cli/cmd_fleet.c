// SPDX-License-Identifier: MIT
// xqforge fleet QUEUE: the arguments, MPI's start and end, the queue's checks and its lock,
// and the signals; the fleet itself (the scheduler, each test a run session) is run/fleet.h's.
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fleet.h"
#include "fleet_upload.h"
#include "link.h"
#include "queue.h"
#include "signals.h"
#include "wire.h"

static void fleet_usage(FILE *out)
{
    fprintf(
        out,
        "usage: mpirun -np N xqforge fleet QUEUE [--until-empty] [--wait] [--set S.K=V]...\n"
        "       [--verbose]\n\n"
        "Plays the tests of a queue made by `xqforge submit`, several at once, in one MPI\n"
        "allocation: rank 0 coordinates every running test, the other ranks are split among\n"
        "them by priority, then by fishtest's internal throughput (`submit --throughput`,\n"
        "`xqforge set`, the time control, an SPRT's LLR), each test on ranks of its own. A\n"
        "test keeps its ranks while it has within 25%% of its share; otherwise it is drained\n"
        "and resumed on its share (jobs/README.md). Among equal priority, a test holding ranks\n"
        "or left running by an earlier fleet (killed, requeued) goes first, resumed from its\n"
        "journal, then older first. Each test is run exactly as `xqforge run` runs its job,\n"
        "with its outputs\n"
        "(journal, PGN, result.json, report) in QUEUE/tests/ID/. `xqforge stop QUEUE ID` ends\n"
        "a test within a few seconds (its games kept, recorded stopped); QUEUE/index.html\n"
        "shows the queue and refreshes itself. With one rank (no mpirun) the tests run one\n"
        "after another on it.\n\n"
        "  --until-empty  end when no test is left (default: wait for new tests)\n"
        "  --wait         when another fleet holds the queue, wait for it to end (default:\n"
        "                 refuse, naming its host, pid and start)\n"
        "  --settle S     seconds a test runs before it may be drained to share its ranks\n"
        "                 again (default %d)\n"
        "  --set S.K=V    a job key for every test, after the test's own (the allocation's\n"
        "                 layout: job.concurrency, job.drain_grace)\n"
        "  --verbose      the coordinator's diagnostics line after each test\n\n"
        "SIGINT, SIGTERM and SIGUSR1 drain every running test (each stays running, and a new\n"
        "fleet resumes it) and end the fleet. A test the queue does not trust (another user's\n"
        "directory or file, a link: SECURITY.md) is never started. When a test's state\n"
        "cannot be recorded (a full disk) the fleet drains every test and ends with exit 1,\n"
        "naming the cause; `xqforge requeue QUEUE ID` puts it back. Exit status: 0 ended with\n"
        "--until-empty, 1 the queue cannot be used or recorded, 2 bad usage (or another fleet\n"
        "holds the queue), 130 drained by a signal.\n",
        FLEET_SETTLE_S);
}

int cmd_fleet(int argc, char **argv)
{
    const char *dir = NULL, *sets[QUEUE_SETS_MAX];
    bool until_empty = false, verbose = false, wait = false;
    long settle = FLEET_SETTLE_S;
    int n_sets = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fleet_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--until-empty")) {
            until_empty = true;
        } else if (!strcmp(argv[i], "--wait")) {
            wait = true;
        } else if (!strcmp(argv[i], "--settle") && i + 1 < argc) {
            if (!cli_parse_int(argv[++i], 0, 86400, &settle)) {
                fprintf(stderr, "xqforge fleet: --settle '%s': seconds from 0 to 86400\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < QUEUE_SETS_MAX) {
            sets[n_sets++] = argv[++i];
        } else if (argv[i][0] != '-' && !dir) {
            dir = argv[i];
        } else {
            fprintf(stderr, "xqforge fleet: unexpected argument '%s'\n", argv[i]);
            fleet_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!dir) {
        fleet_usage(stderr);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char why[1024] = "";
    Link *link = NULL;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge fleet: MPI: %s\n", why);
        return 1;
    }
    int rank = link_rank(link), rc = 0;
    if (link_size(link) > FLEET_RANKS_MAX) {
        if (rank == 0)
            fprintf(stderr, "xqforge fleet: at most %d ranks\n", FLEET_RANKS_MAX);
        link_finalize(link);
        return EXIT_USAGE;
    }
    // Every rank checks the queue (the shared file system seen alike everywhere).
    QueueStatus qs = queue_open(dir, false, why, sizeof why);
    if (qs == QUEUE_OK && !fleet_upload_check(dir, why, sizeof why))
        qs = QUEUE_ERR_UNSAFE; // a fleet.ini it cannot follow: the queue is refused
    if (qs != QUEUE_OK && rank == 0)
        fprintf(stderr, "xqforge fleet: %s\n", why);
    // One fleet per queue: rank 0 holds QUEUE/fleet.lock for the fleet's life.
    FilesLock lock = {.fd = -1};
    if (qs == QUEUE_OK && rank == 0 && !fleet_lock(dir, wait, &lock, why, sizeof why)) {
        fprintf(stderr, "xqforge fleet: %s\n", why);
        qs = QUEUE_ERR_BUSY;
    }
    if (!link_all_ok(link, qs == QUEUE_OK)) {
        files_unlock(&lock);
        link_finalize(link);
        return qs == QUEUE_ERR_IO || qs == QUEUE_OK ? 1 : EXIT_USAGE;
    }
    // The handlers once every rank agreed; only this layer touches signals.
    cli_signals_install(NULL);
    CliSignals *sig = cli_signals();
    FleetArgs fa = {.dir = dir,
                    .sets = sets,
                    .n_sets = n_sets,
                    .until_empty = until_empty,
                    .verbose = verbose,
                    .settle = (double)settle,
                    .drain = &sig->drain,
                    .signalled = &sig->signalled,
                    .abort_now = &sig->launcher_abort};
    if (rank == 0)
        printf("xqforge fleet: queue %s, %d rank%s\n", dir, link_size(link),
               link_size(link) == 1 ? "" : "s");
    rc = fleet_run(link, &fa);
    files_unlock(&lock);
    link_finalize(link);
    return rc;
}
