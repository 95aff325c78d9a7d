// SPDX-License-Identifier: MIT
// What every kind of `xqforge run` job shares (game jobs in cmd_run.c, books in cmd_book.c,
// Texel fits in cmd_texel.c): the job's fingerprint, the output directory, the bench that
// proves every rank runs the same build, and sending/receiving wire messages over the link.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#include "job.h"
#include "link.h"
#include "wire.h"

/// FNV-1a over the job file's bytes and the overrides (but output.* and report.*, which do
/// not change the games): a journal of another job is refused.
uint64_t run_fingerprint(const char *path, char *const *sets, int n);

/// mkdir -p: creates the directory and its missing parents; -1 with errno on failure.
int run_make_dirs(const char *path);

/// Whether the job file (with its overrides) loads and is of this kind.
bool run_job_is(const char *path, char *const *sets, int n, JobKind kind);

/// The bench of this build: its node count is the signature every rank must share.
/// XQFORGE_BENCH_DEPTH changes it for one rank (how the tests make a rank to refuse).
bool run_bench(uint64_t *signature, uint64_t *nps);

/// Sends the packed message in buf (when ws is WIRE_OK) and clears buf.
bool run_send(Link *l, int dest, LinkTag tag, WireStatus ws, msgpack_sbuffer *buf);

/// Takes one message with one of two tags, decoded and validated; false when none is
/// waiting. A message that fails validation is logged with its reason and dropped.
bool run_receive(Link *l, LinkTag first, LinkTag second, int *src, WireMessage *msg);
