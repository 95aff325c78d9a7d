// SPDX-License-Identifier: MIT
// xqforge run JOBFILE: the arguments, MPI's start and end, and the signals; the run itself
// (every rank's set-up, its role, derived runs and the loop) is run/session.h's.
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "link.h"
#include "session.h"
#include "signals.h"
#include "wire.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: [mpirun -np N] xqforge run JOBFILE [--set SECTION.KEY=VALUE]...\n"
            "                                  [--resume | --resume=auto | --fresh] [--verbose]\n\n"
            "Runs a job file (see jobs/) over MPI ranks: rank 0 coordinates, the others\n"
            "play game pairs (or generate book units, or training positions: kind =\n"
            "datagen); with one rank, rank 0 plays too. Texel and train jobs fit on every\n"
            "rank.\n"
            "Results are journaled before they count.\n\n"
            "  --resume   continue the run whose journal is in the output directory, exactly\n"
            "             where it stopped (refused, naming what changed, if the experiment\n"
            "             differs: engines, rules, openings, time control, adjudication)\n"
            "  --resume=auto  continue the journal when there is one, else start (as [job]\n"
            "             resume = auto: a requeued batch job goes on by itself)\n"
            "  --fresh    start afresh: the old run's outputs are moved aside, never deleted\n"
            "  --verbose  print rank 0's costs when the run ends (the \"Coordinator:\" line:\n"
            "             results, CPU, fdatasync, journal bytes, peak memory; always in the\n"
            "             report)\n\n"
            "SIGINT, SIGTERM and SIGUSR1 (Slurm's preemption and time-limit warnings) drain the\n"
            "run: no new games; those in progress finish within [job] drain_grace seconds or\n"
            "are dropped (played on resume); every result that arrives is journaled. Under\n"
            "Open MPI's mpirun send SIGUSR1 to mpirun: Ctrl-C or SIGTERM makes mpirun end\n"
            "the job itself (exit 1, the ranks killed 2 s later).\n\n"
            "Exit status: 0 the job did its work (its limit or its SPRT verdict), 1 it failed\n"
            "(no usable engine, every worker refused, an output that cannot be written), 2 bad\n"
            "usage or a bad job file, 130 drained by a signal (resume it with --resume or\n"
            "--resume=auto).\n");
}

int cmd_run(int argc, char **argv)
{
    const char *path = NULL;
    char *sets[64];
    int n_sets = 0;
    bool resume = false, fresh = false, resume_auto = false, verbose = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            run_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--resume")) {
            resume = true;
        } else if (!strcmp(argv[i], "--resume=auto")) {
            resume_auto = true;
        } else if (!strcmp(argv[i], "--fresh")) {
            fresh = true;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc && n_sets < 64) {
            sets[n_sets++] = argv[++i];
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "xqforge run: unexpected argument '%s'\n", argv[i]);
            run_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!path || resume + fresh + resume_auto > 1) {
        if (path)
            fprintf(stderr,
                    "xqforge run: --resume, --resume=auto and --fresh exclude each other\n");
        run_usage(stderr);
        return EXIT_USAGE;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    char why[1024] = "";
    Link *link = NULL;
    if (link_init(&argc, &argv, WIRE_MAX_MESSAGE, &link, why, sizeof why) != LINK_OK) {
        fprintf(stderr, "xqforge run: MPI: %s\n", why);
        return 1;
    }
    CliSignals *sig = cli_signals();
    RunArgs args = {.path = path,
                    .sets = (const char *const *)sets,
                    .n_sets = n_sets,
                    .resume = resume,
                    .fresh = fresh,
                    .resume_auto = resume_auto,
                    .verbose = verbose,
                    .stop = &sig->drain,
                    .signalled = &sig->signalled,
                    .abort_now = &sig->launcher_abort,
                    .ready = cli_signals_install};
    int rc = run_session(link, &args, why, sizeof why);
    link_finalize(link);
    return rc;
}
