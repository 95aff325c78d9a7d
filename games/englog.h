// SPDX-License-Identifier: MIT
// The engine communication log: every protocol line exchanged with one external engine (on
// one rank), timestamped to the millisecond, so that a "time forfeit: no bestmove by the
// deadline" can be judged from what was sent and when the answer came. One EngineLog per
// engine and rank, shared by the game threads that run that engine (a mutex keeps lines
// whole); each engine process is a numbered session of it. Lines, in UTC:
//   2026-12-05T06:01:02.123Z fsf#2 > go wtime 9876 winc 100 btime 10000 binc 100
//   2026-12-05T06:01:03.456Z fsf#2 < bestmove h3e3
//   2026-12-05T06:01:03.456Z fsf#2 ! go: red to move; clocks red 9876+100 ms, ...
// '>' is a line to the engine, '<' one from it, '!' a note of ours (a start, a go's clocks
// and deadline, a failure). Only what the engine protocol carries is written: never the
// engine's environment or arguments, so no report token. When a file would pass its size
// cap it is renamed to NAME.1 (replacing the older one) and a fresh NAME begins.
// Our builtin engine runs in-process and speaks no protocol: it has no log.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    ENGLOG_SIZE_DEFAULT = 16 * 1024 * 1024, // bytes per file before it rotates
    ENGLOG_SIZE_MIN = 4096,
    ENGLOG_PATH_MAX = 4096
};

typedef struct EngineLog EngineLog;

/// A log for engine `engine` in file `path` (nothing is opened yet); max_bytes: the size cap
/// (0: ENGLOG_SIZE_DEFAULT; below ENGLOG_SIZE_MIN: that). NULL when out of memory.
EngineLog *englog_new(const char *path, const char *engine, uint64_t max_bytes);
/// Closes and frees; englog_free(NULL) is a no-op.
void englog_free(EngineLog *lg);
/// Opens the file (appending) on the first call; thread safe. False with why when it cannot
/// be opened (then and on every later call).
bool englog_open(EngineLog *lg, char *why, size_t why_len);
const char *englog_path(const EngineLog *lg);
/// A new session number for an engine process (1, 2, ...); thread safe.
int englog_session(EngineLog *lg);
/// One line (len bytes, without its newline) in direction dir ('>', '<' or '!').
void englog_line(EngineLog *lg, int session, char dir, const char *text, size_t len);
/// A note of ours ('!').
__attribute__((format(printf, 3, 4))) void englog_note(EngineLog *lg, int session, const char *fmt,
                                                       ...);

/// The file of engine `engine` for base name `base`: the engine's name (blanks and characters
/// other than letters, digits, '.', '_', '+' and '-' written '_'), and with rank >= 0 "rN",
/// put before a final ".log" of base, or after base: `games.log` -> `games.fsf.log`,
/// `dir/engine.log` with rank 2 -> `dir/engine.r2.fsf.log`. False when out does not hold it.
bool englog_file_name(char *out, size_t cap, const char *base, const char *engine, int rank);
