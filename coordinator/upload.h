// SPDX-License-Identifier: MIT
// Report delivery with libcurl, never lost. Every report version to deliver is first put in
// a spool directory as one entry of data only: its files, the run's id, the version, the
// Idempotency-Key and which destinations took it. Where to send and with which token come
// from the caller at delivery time (the job's [report] section, or `xqforge upload`'s
// options), never from the entry: anyone able to write an entry could otherwise send the
// user's secrets anywhere. A spool is the user's own directory (mode 0700, files 0600); one
// that another user owns or that group or others can write is refused, as ssh treats keys.
// An entry that names a destination or a token source, or whose files are not the ones it
// recorded (size and hash), is reported and left alone: not sent, not removed.
// A pass tries each entry's destinations and removes the entry once every URL has taken
// it. It retries connection failures, timeouts and HTTP 408/429/5xx with exponential backoff
// and jitter (honouring Retry-After up to a cap); other 4xx replies and TLS errors are not
// retried and are logged with the reason. What is not delivered stays in the spool for the
// next pass, the next run, or `xqforge upload`. A newer entry of the same run supersedes an
// older progress entry (final entries are always kept). Each entry carries an
// Idempotency-Key (run, version, content hash), the same on every retry.
// Methods: POST sends report.json; PUT sends every file to URL/NAME (URL is a collection,
// e.g. WebDAV); multipart POSTs every file as a form part named after the file.
// TLS verification is always on (ca_file adds a CA bundle). The token is read from an
// environment variable or a file when a request is made and only ever goes into the
// Authorization header; URLs with credentials in them (user:password@) are refused; log
// lines show URLs without query. Uploader runs passes in its own thread (each with its own
// CURL handle), so the caller never waits on the network; a spool is drained by one process
// at a time (flock). Threats and trust: SECURITY.md.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    UPLOAD_URLS_MAX = 4,
    UPLOAD_FILES_MAX = 4,
    UPLOAD_TEXT_MAX = 1024,
    UPLOAD_TOKEN_MAX = 4096,
    UPLOAD_META_MAX = 64 << 10,  // bytes of a meta.json
    UPLOAD_BODY_MAX = 256 << 20, // bytes of a file to send
    UPLOAD_DELIVERED_MAX = 32,   // destinations an entry remembers having taken it
};

typedef enum { UPLOAD_POST, UPLOAD_PUT, UPLOAD_MULTIPART, UPLOAD_METHOD_NB } UploadMethod;

typedef enum {
    UPLOAD_OK,
    UPLOAD_ERR_NOMEM,
    UPLOAD_ERR_IO,        // the spool or a file could not be read or written
    UPLOAD_ERR_TOKEN,     // token variable unset or empty, file unreadable, or a line break
    UPLOAD_ERR_HTTP,      // the server refused (3xx, 4xx other than 408/429): not retried
    UPLOAD_ERR_TLS,       // certificate or handshake failure: not retried
    UPLOAD_ERR_TRANSIENT, // still failing after the last retry (or the grace time ran out)
    UPLOAD_ERR_CURL,      // another libcurl failure (bad URL, ...): not retried
    UPLOAD_ERR_SPOOL,     // a spool entry is malformed, planted or tampered with
    UPLOAD_ERR_BUSY,      // another process is draining this spool
    UPLOAD_ERR_ARG,       // a bad argument, target or URL (credentials in it, ...)
    UPLOAD_ERR_UNSAFE,    // the spool is not the user's own or others can write in it
    UPLOAD_STATUS_NB
} UploadStatus;

/// What the outcome of one request means.
typedef enum {
    UPLOAD_DONE,       // 2xx
    UPLOAD_RETRY,      // worth another attempt later
    UPLOAD_FAIL_HTTP,  // the server said no
    UPLOAD_FAIL_TLS,   // certificate or handshake
    UPLOAD_FAIL_OTHER, // anything else libcurl refuses
    UPLOAD_VERDICT_NB
} UploadVerdict;

/// Where reports go and with which credential: the job's [report] section or `xqforge
/// upload`'s options, given to each pass. Never stored in the spool.
typedef struct {
    char urls[UPLOAD_URLS_MAX][UPLOAD_TEXT_MAX];
    int url_count;
    UploadMethod method;
    char token_env[UPLOAD_TEXT_MAX];  // variable holding the bearer token, or
    char token_file[UPLOAD_TEXT_MAX]; // a file holding it (mode 0600); both empty: no token
    char ca_file[UPLOAD_TEXT_MAX];    // extra CA bundle; empty: the system's
    int connect_timeout_s, timeout_s;
} UploadTarget;

/// How a pass tries.
typedef struct {
    char spool_dir[UPLOAD_TEXT_MAX];
    int attempts;             // per URL and file in one pass, >= 1
    double backoff_s;         // the first wait; doubling per retry
    double backoff_max_s;     // cap of the doubling
    double retry_after_max_s; // cap of a server's Retry-After (a longer one is logged)
    FILE *log;                // one line per attempt outcome; NULL: silent
} UploadPolicy;

typedef struct {
    int delivered, kept, superseded; // entries
    int untrusted;                   // entries refused as planted or tampered (left in place)
    int attempts, retries;           // requests, and the ones that were retries
} UploadStats;

typedef struct Uploader Uploader;

const char *upload_strerror(UploadStatus st);
const char *upload_method_name(UploadMethod m); // "post", "put", "multipart"

/// Defaults: 5 attempts, 1 s doubling to 60 s, Retry-After up to 60 s, stderr.
void upload_policy_default(UploadPolicy *p, const char *spool_dir);
/// Defaults of a target: no URL, POST, no token, the system's CAs, 10 s to connect, 60 s.
void upload_target_default(UploadTarget *t);

/// The meaning of a request's outcome: curl_code is a CURLcode, http_status the reply's
/// status (0 when none).
UploadVerdict upload_classify(int curl_code, long http_status);
/// The wait before retry number `retry` (1-based): backoff_s doubled per retry, capped at
/// backoff_max_s, with "equal jitter": between half and all of it, jitter in [0, 1).
double upload_backoff(const UploadPolicy *p, int retry, double jitter);
/// The wait before retry number `retry`: the server's Retry-After (retry_after_s >= 0) up to
/// retry_after_max_s (*capped says it was cut; a server cannot hold a pass for long), else
/// upload_backoff's.
double upload_retry_wait(const UploadPolicy *p, int retry, double jitter, double retry_after_s,
                         bool *capped);
/// The token named by t (environment first, then file): trailing whitespace removed; an
/// empty value or one with a control character is refused. buf is "" when t names none.
UploadStatus upload_token_load(const UploadTarget *t, char *buf, size_t len, char *why,
                               size_t why_len);
/// url with user info, query and fragment removed: what logs show.
void upload_url_for_log(const char *url, char *buf, size_t len);
/// A URL reports may go to: http:// or https://, no space or control character, and no
/// credentials (user:password@: the token belongs in token_env or token_file). The message
/// does not repeat the credentials.
UploadStatus upload_url_check(const char *url, char *why, size_t why_len);
/// A usable target: 1..UPLOAD_URLS_MAX URLs passing upload_url_check, a known method,
/// positive timeouts.
UploadStatus upload_target_check(const UploadTarget *t, char *why, size_t why_len);

/// Whether spool_dir may be used: a directory (a link to one is followed) owned by this
/// user that group and others cannot write. create: a missing one is made (mode 0700,
/// missing parents as mkdir -p), and one of ours that group or others can read is made 0700.
/// UPLOAD_ERR_UNSAFE says its mode and owner; UPLOAD_ERR_IO (errno kept) when missing.
UploadStatus upload_spool_check(const char *spool_dir, bool create, char *why, size_t why_len);
/// Puts a copy of files[0..n) (paths; files[0] is the report.json that POST sends) into a
/// new entry of spool_dir (checked and created as upload_spool_check), atomically (built
/// under a hidden name, then renamed), with each file's size and hash. run_id is letters,
/// digits, '-' and '_'. The entry names no destination: each pass is given its own.
UploadStatus upload_spool_add(const char *spool_dir, const char *run_id, uint64_t version,
                              bool final, const char *const *files, int n, char *why,
                              size_t why_len);
/// One pass over the spool in this thread, oldest entry first, delivering to t (checked
/// with upload_target_check first). A missing spool is an empty one. stats may be NULL.
UploadStatus upload_spool_drain(const UploadPolicy *p, const UploadTarget *t, UploadStats *stats);
/// Entries waiting in the spool (0 when it does not exist).
int upload_spool_count(const char *spool_dir);

/// Starts the thread (and libcurl, once) delivering to a copy of t; NULL on failure. It runs
/// a pass at once (to deliver what earlier runs left) and whenever kicked.
Uploader *upload_start(const UploadPolicy *p, const UploadTarget *t);
/// Asks for a pass soon (after upload_spool_add); never blocks on the network.
void upload_kick(Uploader *u);
/// Runs a last pass, waiting at most grace_s seconds in all (a retry that would end later
/// is given up and its entry stays), joins the thread and frees u. NULL: no-op.
void upload_stop(Uploader *u, double grace_s, UploadStats *stats);
