// SPDX-License-Identifier: MIT
// The one place that touches signals (only main's layer does): SIGINT, SIGTERM and SIGUSR1
// drain a run or a fleet. The handlers set flags that run/ reads (RunArgs, FleetArgs); they
// are installed once every rank is ready (run_session's ready hook), so a signal during
// set-up ends the process the default way.
#define _GNU_SOURCE
#include "signals.h"

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static CliSignals flags;

/// Whether pid is an MPI launcher's process (Open MPI's mpirun/orterun or its node daemon
/// orted, PRRTE's prterun/prted): async-signal-safe (open, read, close).
static bool from_launcher(pid_t pid)
{
    static const char *const names[] = {"mpirun",  "mpiexec", "orterun", "orted",
                                        "prterun", "prted",   "prte"};
    char path[40] = "/proc/", digits[16], comm[32];
    int n = 0, len = 6;
    for (unsigned long v = (unsigned long)pid; v || !n; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    while (n > 0)
        path[len++] = digits[--n];
    memcpy(path + len, "/comm", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, comm, sizeof comm - 1);
    close(fd);
    if (got <= 0)
        return false;
    comm[got] = '\0';
    if (comm[got - 1] == '\n')
        comm[got - 1] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(comm, names[i]) == 0)
            return true;
    return false;
}

static void on_signal(int sig, siginfo_t *si, void *context)
{
    (void)context;
    // SIGTERM from an MPI launcher is its abort (Ctrl-C or kill to mpirun): Open MPI sends it
    // about a second before SIGKILL, whatever drain_grace says, so the grace ends at once and
    // rank 0 writes result.json in time. Its forwarded SIGUSR1, and Slurm's SIGTERM (from
    // slurmstepd, KillWait later SIGKILL) keep the grace.
    if (sig == SIGTERM && si && si->si_code == SI_USER && si->si_pid > 0 &&
        from_launcher(si->si_pid))
        atomic_store(&flags.launcher_abort, true);
    atomic_store(&flags.signalled, true);
    atomic_store(&flags.drain, true);
}

CliSignals *cli_signals(void) { return &flags; }

void cli_signals_install(void *unused)
{
    (void)unused;
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL); // Slurm's --signal=USR1@SECONDS: the time limit is near
}
