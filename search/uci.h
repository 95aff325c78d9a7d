// SPDX-License-Identifier: MIT
// The engine's protocol front end: UCI in the Pikafish dialect (FEN as in RULES.md, moves
// like `h2e2`, ranks 0-9), and a small UCCI subset. Reads commands from one stream, writes
// replies to another; the search runs in its own thread so `isready` and `stop` are answered
// while it thinks. Library code: nothing here exits or touches stdin/stdout.
#pragma once

#include <stdio.h>

enum {
    UCI_LINE_MAX = 65536 // bytes of one command line; a longer line is reported and skipped
};

/// Runs the protocol until `quit` or end of input, then stops any search (a `go perft` is
/// let finish at end of input) and returns 0; 1 only if the engine could not be created. Malformed
/// or illegal commands are answered with `info string <why>` and otherwise ignored. Every reply
/// line is written whole (one lock per line, shared with the search thread) and flushed.
int uci_loop(FILE *in, FILE *out);
