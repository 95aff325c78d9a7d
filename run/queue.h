// SPDX-License-Identifier: MIT
// The fleet's queue: a directory on the shared file system that holds tests (jobs submitted to
// one long MPI allocation). QUEUE/tests/ID/ holds the job file as submitted (job.ini, a copy
// taken at submit time, so later edits of the original change nothing), test.json (the test's
// record: name, kind, state, priority, throughput, times, where the job's relative paths are
// taken from) and, once the fleet runs it, exactly the outputs a solo `xqforge run` writes.
// Every read-modify-write of a test.json holds QUEUE/queue.lock; ids are made by mkdir, which
// is atomic, so two submits never get one id. The queue must be safe: a directory of the
// caller's, not writable by others (a job file can start any program).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "files.h"

enum {
    QUEUE_ID_MAX = 15,     // characters of a test id ("0001")
    QUEUE_NAME_MAX = 120,  // characters of a test's name
    QUEUE_PATH_MAX = 4096, // bytes of a path in a record
    QUEUE_SETS_MAX = 64,   // --set overrides a test keeps
    QUEUE_SET_MAX = 200,   // characters of one override
    QUEUE_PRIORITY_MAX = 1000,
    QUEUE_THROUGHPUT_MAX = 10000, // percent
    QUEUE_TESTS_MAX = 100000
};

typedef enum {
    QUEUE_OK,
    QUEUE_ERR_IO,        // a file or directory could not be read or written (why says which)
    QUEUE_ERR_UNSAFE,    // the queue's owner or mode is refused
    QUEUE_ERR_NOT_QUEUE, // the directory is not a queue (no tests/ in it)
    QUEUE_ERR_NO_TEST,   // no test of that id
    QUEUE_ERR_RECORD,    // a test.json that cannot be read as one
    QUEUE_ERR_STATE,     // the change does not apply to the test's state (stop of a finished test)
    QUEUE_ERR_BUSY,      // the queue's lock stayed held
    QUEUE_ERR_NOMEM,
    QUEUE_ERR_FOREIGN, // a test directory the queue cannot trust (a stranger's, a link): untouched
    QUEUE_STATUS_NB
} QueueStatus;

typedef enum {
    TEST_QUEUED,   // waiting for the fleet
    TEST_RUNNING,  // the fleet plays it
    TEST_FINISHED, // ended by its verdict or limit
    TEST_STOPPED,  // stopped by `xqforge stop` before its verdict
    TEST_FAILED,   // ended by an error (reason says which)
    TEST_STATE_NB
} TestState;

typedef struct {
    char id[QUEUE_ID_MAX + 1];
    char name[QUEUE_NAME_MAX + 1];
    char kind[16];
    TestState state;
    bool stop_requested;                  // `xqforge stop` of a running test: the fleet ends it
    int priority;                         // higher first
    int throughput;                       // percent of a test's fair share of the fleet
    double tc_ratio;                      // its time control against 10+0.1 (job_tc_ratio)
    int workers;                          // worker ranks the fleet gives it now (0: none)
    char reason[512];                     // why it failed or was stopped
    int64_t submitted, started, finished; // seconds since the epoch; 0: not yet
    unsigned uid;                         // who submitted it
    // The job as submitted: relative paths in job.ini are taken from job_dir, those of the
    // overrides from set_dir (where submit ran), as `xqforge run` would have taken them.
    char job_file[QUEUE_PATH_MAX];
    char job_dir[QUEUE_PATH_MAX];
    char set_dir[QUEUE_PATH_MAX];
    int n_sets;
    char sets[QUEUE_SETS_MAX][QUEUE_SET_MAX + 1];
} QueueTest;

const char *queue_strerror(QueueStatus st);
const char *queue_state_name(TestState s);
/// A test's time (seconds since the epoch, 0 for none) as "YYYY-MM-DD HH:MM" UTC, or "-".
void queue_time_text(int64_t t, char *out, size_t cap);

/// Checks that dir is a safe queue: a directory owned by the caller, not writable by group or
/// others (or shared with the group its fleet.ini names), and so is its tests/ (the queue
/// owner's). create: a missing queue is made (mode 0700, tests/ inside). why names the problem.
QueueStatus queue_open(const char *dir, bool create, char *why, size_t why_len);

/// Adds a test: a new id (the largest so far plus one), QUEUE/tests/ID/job.ini copied from
/// t->job_file, then test.json from *t (id, state queued, submitted and uid filled in).
QueueStatus queue_add(const char *dir, QueueTest *t, char *why, size_t why_len);

/// Reads QUEUE/tests/ID/test.json.
QueueStatus queue_read(const char *dir, const char *id, QueueTest *t, char *why, size_t why_len);

/// Writes QUEUE/tests/ID/test.json atomically (callers hold the queue lock: queue_update).
QueueStatus queue_write(const char *dir, const QueueTest *t, char *why, size_t why_len);

/// Every test, sorted by id; *out is malloc'ed (free it). A record that cannot be read is
/// skipped and named in why (the first one), the others are listed.
QueueStatus queue_list(const char *dir, QueueTest **out, int *n, char *why, size_t why_len);

/// What a change does to a test (under the queue lock): false with why when it does not apply.
typedef bool (*QueueChange)(QueueTest *t, void *user, char *why, size_t why_len);

/// Reads the test, applies change and writes it back, all under QUEUE/queue.lock.
QueueStatus queue_update(const char *dir, const char *id, QueueChange change, void *user, char *why,
                         size_t why_len);

/// Whether the fleet may run a test, checked before anything of it is read or started (and on
/// every rank again): the queue and tests/ as queue_open checks them; tests/ID a directory
/// (not a link) of the queue's owner or of a member of the group QUEUE/fleet.ini names, that
/// nobody else may write (else QUEUE_ERR_FOREIGN: the fleet neither runs it nor writes there);
/// job.ini opened without following a link, a regular file of that same user, writable by
/// them alone; test.json the same, the submitter's or the queue owner's (the fleet rewrites
/// it), its record naming the submitter, so that nobody else's overrides (sets) are applied.
/// QUEUE_ERR_UNSAFE with why naming the path and the reason otherwise.
QueueStatus queue_test_allowed(const char *dir, const char *id, char *why, size_t why_len);

/// Whether a fleet holds the queue (QUEUE/fleet.lock, taken for its life by `xqforge fleet`):
/// *holder's pid is 0 when none does, else names it (host, pid, start).
QueueStatus queue_fleet_holder(const char *dir, FilesLockHolder *holder, char *why, size_t why_len);

/// The path of a file of a test: QUEUE/tests/ID/NAME; false when it does not fit cap.
bool queue_test_path(const char *dir, const char *id, const char *name, char *out, size_t cap);
