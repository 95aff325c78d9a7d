// SPDX-License-Identifier: MIT
// Engine settings: the key=value words of `xqforge play -engine` and the keys of a job file's
// [engine NAME], [each] and [time] sections, parsed by one function so that the two can never
// mean different things. A repeated option.NAME replaces the earlier value (the last wins).
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "game.h"
#include "player.h"

typedef enum {
    ENGINE_SPEC_OK,
    ENGINE_SPEC_ERR_KEY,   // not an engine setting
    ENGINE_SPEC_ERR_VALUE, // a bad or out-of-range value
    ENGINE_SPEC_STATUS_NB
} EngineSpecStatus;

const char *engine_spec_strerror(EngineSpecStatus st);

/// Applies one setting to a player and its time control. Keys: builtin, cmd, name, proto,
/// args, dir, params, option.NAME, ranks, startup, ping, env.NAME, passenv, rlimit_as,
/// rlimit_cpu, tc, st, depth, nodes, timemargin. env.NAME sets a variable for the engine (the
/// last one wins), passenv names variables of ours it sees (a later list replaces), rlimit_as
/// is bytes (or K/M/G/T, at least 16M) and rlimit_cpu seconds (0: no limit).
/// base_dir: where relative paths come from (a job file's directory, absolute) for params,
/// dir, and cmd when it holds a '/' (a bare command name is kept); NULL keeps every path as
/// written (the shell's current directory). why says what is wrong.
/// check_options = false: an external engine's options are not compared with the ones it
/// advertises (job/job_check.h).
EngineSpecStatus engine_spec_set(PlayerConfig *pc, TimeControl *tc, const char *key,
                                 const char *value, const char *base_dir, char *why,
                                 size_t why_len);

/// One word of `xqforge play -engine`/`-each`: "key=value", or "builtin" alone.
EngineSpecStatus engine_spec_word(PlayerConfig *pc, TimeControl *tc, const char *word, char *why,
                                  size_t why_len);

/// The time-control keys (tc, st, depth, nodes, timemargin): the ones [time] takes.
bool engine_spec_is_time_key(const char *key);

/// The linear evaluation alone reads a builtin engine's evaluation weights; the NNUE net (on by
/// default when the build embeds one) never does. So an engine that would evaluate with the net
/// by default (no UseNNUE option) is refused when its evaluation weights are not the defaults
/// (params = FILE, or option.NAME of an evaluation row), and when SPSA tunes its evaluation rows
/// (tunes_eval; refused with UseNNUE true too): the weights would change nothing while the
/// figures said they did. why names the first such weight and the option that settles it.
/// A weights file that cannot be read, or a weight option with a bad value, passes here;
/// creating the player (and the run identity) reports it.
bool engine_spec_check_eval(const PlayerConfig *pc, bool tunes_eval, char *why, size_t why_len);

/// Two builtin engines of one match where one sets UseNNUE and the other evaluates as the
/// build's default, differently: refused (the comparison would be net against linear
/// evaluation without either saying so); why says to set UseNNUE on both.
bool engine_spec_check_pair(const PlayerConfig *a, const PlayerConfig *b, char *why,
                            size_t why_len);
