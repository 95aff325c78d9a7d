// SPDX-License-Identifier: MIT
// The identity of a run: what defines the experiment, resolved, as an ordered list of
// (key, value) text items. Two jobs with the same identity play the same games with the same
// engines, so their results may share a journal; anything that changes the engines or the
// games changes it, and nothing else does.
//
// In it: the job kind; the engines in order (of two engines in a game job, new first: the
// tested side, whose figures every output shows, so the order tells a journal's roles) and,
// per engine (keys "engine.NAME.*"), its
// protocol; for a builtin engine the hash of its effective weight table (weights file and
// weight options applied to a fresh engine), its other options and the bench signature the
// caller passes; for an external engine the content hash of the program file (the path the
// player runs: cmd in its workdir, else cmd looked up in PATH when it has no '/'), its
// arguments and its options; each engine's time control; the rules; the pairing scheme;
// the openings by content (the embedded set by the hash of its lines) with their order,
// start and seed; repeat; adjudication; the SPRT bounds and model (kind sprt); the SPSA
// parameters, settings and iteration count (kind spsa: rounds set its gain schedule); the
// book generation settings and seed files by content (kind book); the Texel settings and
// files by content (kind texel). A kind's items are the KEY_IDENTITY rows of its section in
// job_keys.def, in their order, and what its row in job_kinds.c adds (identity_extra).
// Options are sorted by name, so their order does not count; an option naming a file the
// engine reads (EvalFile, a net) is recorded by the file's content, so a net retrained to
// the same path makes another experiment.
//
// Not in it: rounds (kept apart in Identity.rounds: a resumed run may raise them; the caller
// checks they do not fall below what the journal holds), concurrency, output.* and report.*
// settings, the job name, comments, host names, rank counts, time margins and per-move
// wall-clock caps (tolerances of the hardware, not the experiment), engine workdirs and
// handshake timeouts.
//
// Text form (identity_encode): one "key=value\n" line per item, in order. A backslash,
// newline or '=' in a key and a backslash or newline in a value are written as "\\", "\n",
// "\=". The text is what a journal stores; identity_diff names what changed between two.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "job.h"

enum {
    IDENTITY_TEXT_MAX = 64 << 10, // bytes of the encoded text (the journal's cap)
    IDENTITY_ITEMS_MAX = 4096
};

typedef enum {
    IDENTITY_OK,
    IDENTITY_ERR_NOMEM,
    IDENTITY_ERR_ENGINE,    // a builtin engine's weights file or weight option is bad
    IDENTITY_ERR_TOO_LARGE, // the text would exceed IDENTITY_TEXT_MAX or IDENTITY_ITEMS_MAX
    IDENTITY_ERR_SYNTAX,    // identity_decode: a line is not key=value, or a bad escape
    IDENTITY_STATUS_NB
} IdentityStatus;

typedef struct {
    char *key, *value; // owned, NUL-terminated
} IdentityItem;

typedef struct {
    IdentityItem *items;
    int count, cap;
    int rounds; // the job's rounds: not part of the identity (see above); 0 when decoded
} Identity;

const char *identity_strerror(IdentityStatus st);

/// An empty identity; identity_destroy frees what it holds (and leaves it empty again).
void identity_init(Identity *id);
void identity_destroy(Identity *id);

/// Appends one item (copies of key and value). IDENTITY_ERR_TOO_LARGE past IDENTITY_ITEMS_MAX.
IdentityStatus identity_add(Identity *id, const char *key, const char *value);
/// Appends one item whose value is formatted as printf does.
__attribute__((format(printf, 3, 4))) IdentityStatus identity_addf(Identity *id, const char *key,
                                                                   const char *fmt, ...);
/// Appends one item whose value is the content hash of the file at path (16 hex digits), or
/// "unreadable (path: why)".
IdentityStatus identity_add_file(Identity *id, const char *key, const char *path);
/// Appends the rules item ("rules=SET counting_default=N ply_limit=N").
IdentityStatus identity_add_rules(Identity *id, const RulesConfig *r);
/// The value of key, or NULL.
const char *identity_get(const Identity *id, const char *key);

/// The identity of a validated job; bench_signature is the engine's bench node count (the
/// search code it runs). Initializes *out (identity_destroy it, also after a failure). On
/// failure why[why_len] (may be NULL) names the engine and what is wrong.
IdentityStatus identity_of_job(const JobConfig *job, uint64_t bench_signature, Identity *out,
                               char *why, size_t why_len);

/// Writes the text form into buf (NUL-terminated when len > 0, truncated to fit); returns
/// its length without the NUL, as snprintf does, so a first call with len 0 sizes buf.
size_t identity_encode(const Identity *id, char *buf, size_t len);
/// Parses len bytes of text form into *out (initialized here; identity_destroy it).
IdentityStatus identity_decode(const char *text, size_t len, Identity *out);

/// How many items differ between the identity a journal holds and the one of the job now
/// (changed, added, removed; a different order of equal items counts as one), with a line
/// naming them in why[why_len] (may be NULL), e.g. "engine 'new': weights changed; time
/// control of 'base' changed (10+0.1 -> 5+0.05)". 0: the identities are equal.
int identity_diff(const Identity *journal, const Identity *now, char *why, size_t why_len);

/// Whether the two identities differ only in the order of their two engines ("engines=base,new"
/// against "engines=new,base"): a journal written before roles were chosen by name, whose
/// figures are from the other engine's side. The names go to a (the journal's first engine)
/// and b (now's first), each of cap bytes.
bool identity_roles_swapped(const Identity *journal, const Identity *now, char *a, char *b,
                            size_t cap);

/// 64-bit FNV-1a of the text form: the job id on the wire.
uint64_t identity_hash(const Identity *id);
