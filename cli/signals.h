// SPDX-License-Identifier: MIT
// The process's signal flags (signals.c): what `xqforge run` and `xqforge fleet` hand to run/.
#pragma once

#include <stdatomic.h>

typedef struct {
    atomic_bool drain;          // drain: a signal (a fleet stops one test with its own flag)
    atomic_bool signalled;      // the drain is a signal's: the process ends after it
    atomic_bool launcher_abort; // a SIGTERM from the MPI launcher: it kills us soon
} CliSignals;

/// The flags, set by the handlers once installed.
CliSignals *cli_signals(void);
/// Installs the handlers of SIGINT, SIGTERM and SIGUSR1 (a RunArgs ready hook: ctx unused).
void cli_signals_install(void *ctx);
