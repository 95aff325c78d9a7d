// SPDX-License-Identifier: MIT
// The subcommands of the xqforge program. Each returns the process exit status:
// 0 success, 1 failure while running, 2 bad usage or bad input.
#pragma once

#include <stdbool.h>

enum { EXIT_USAGE = 2 };

int cmd_perft(int argc, char **argv);
int cmd_diffcheck(int argc, char **argv);
int cmd_judge(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_uci(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_upload(int argc, char **argv);
/// The fleet's queue (cmd_queue.c): submit a job, list, stop, requeue or reweigh a test.
int cmd_submit(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_requeue(int argc, char **argv);
int cmd_set(int argc, char **argv);
/// The fleet that plays a queue's tests (cmd_fleet.c).
int cmd_fleet(int argc, char **argv);
int cmd_book(int argc, char **argv);
/// The WDL model of our games (cmd_wdl.c): fit from runs' journals, eval.
int cmd_wdl(int argc, char **argv);

int cmd_texel(int argc, char **argv);
int cmd_nnue(int argc, char **argv);
/// The `xqforge nnue` subcommands (argv[0] is the subcommand's name).
int cmd_nnue_train(int argc, char **argv);   // cmd_nnue_train.c
int cmd_nnue_data(int argc, char **argv);    // cmd_nnue_data.c: export, info
int cmd_nnue_extract(int argc, char **argv); // cmd_nnue_extract.c: positions from PGN games
int cmd_nnue_net(int argc, char **argv);     // cmd_nnue_net.c: a net file's header and check

/// Strict integer option parsing shared by the subcommands; false if not an integer in range.
int cli_parse_int(const char *text, long lo, long hi, long *out);
