// SPDX-License-Identifier: MIT
#include "queue.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "fleet_ini.h"

enum {
    RECORD_MAX = 1 << 20,   // bytes of a test.json
    JOB_COPY_MAX = 1 << 20, // bytes of a job file (the INI reader's own cap)
    LOCK_WAIT_MS = 10000    // a lock held longer than this is a stuck process: say so
};

static const char *const STATUS_TEXT[QUEUE_STATUS_NB] = {
    [QUEUE_OK] = "ok",
    [QUEUE_ERR_IO] = "the queue cannot be read or written",
    [QUEUE_ERR_UNSAFE] = "the queue's owner or mode is refused",
    [QUEUE_ERR_NOT_QUEUE] = "not a queue directory",
    [QUEUE_ERR_NO_TEST] = "no such test",
    [QUEUE_ERR_RECORD] = "a test record cannot be read",
    [QUEUE_ERR_STATE] = "the change does not apply to the test's state",
    [QUEUE_ERR_BUSY] = "the queue's lock is held",
    [QUEUE_ERR_NOMEM] = "out of memory",
    [QUEUE_ERR_FOREIGN] = "a test directory that is not the queue's to trust",
};

static const char *const STATE_NAME[TEST_STATE_NB] = {
    [TEST_QUEUED] = "queued",   [TEST_RUNNING] = "running", [TEST_FINISHED] = "finished",
    [TEST_STOPPED] = "stopped", [TEST_FAILED] = "failed",
};

const char *queue_strerror(QueueStatus st)
{
    return st >= 0 && st < QUEUE_STATUS_NB ? STATUS_TEXT[st] : "unknown queue status";
}

void queue_time_text(int64_t t, char *out, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if (!t || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%d %H:%M", &tm))
        snprintf(out, cap, "-");
}

const char *queue_state_name(TestState s)
{
    return s >= 0 && s < TEST_STATE_NB ? STATE_NAME[s] : "unknown";
}

bool queue_test_path(const char *dir, const char *id, const char *name, char *out, size_t cap)
{
    int n = name ? snprintf(out, cap, "%s/tests/%s/%s", dir, id, name)
                 : snprintf(out, cap, "%s/tests/%s", dir, id);
    return n >= 0 && (size_t)n < cap;
}

/// An id is what queue_add makes: digits only, so that no id names a path outside tests/.
static bool id_valid(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > QUEUE_ID_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id[i] < '0' || id[i] > '9')
            return false;
    return true;
}

static void owner_name(unsigned uid, char *out, size_t cap)
{
    struct passwd *pw = getpwuid(uid);
    if (pw)
        snprintf(out, cap, "%s", pw->pw_name);
    else
        snprintf(out, cap, "uid %u", uid);
}

/// Whether the caller is in group gid (its effective or a supplementary group).
static bool caller_in_group(gid_t gid)
{
    if (getegid() == gid)
        return true;
    gid_t groups[256];
    int n = getgroups(256, groups);
    for (int i = 0; i < n; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

/// QUEUE/fleet.ini's [fleet] group, checked: the file is the queue owner's and only theirs
/// to write, the group exists. *gid gets it; false with why (group[0] empty: no fleet.ini).
static bool fleet_group(const char *dir, uid_t owner, char *group, size_t cap, gid_t *gid,
                        char *why, size_t why_len)
{
    group[0] = '\0';
    FleetIni f;
    char fwhy[UPLOAD_TEXT_MAX + 300];
    FleetIniStatus st = fleet_ini_read(dir, owner, &f, fwhy, sizeof fwhy);
    if (st == FLEET_INI_BAD)
        snprintf(why, why_len, "fleet.ini: %.480s", fwhy); // callers give 512 bytes
    else if (st == FLEET_INI_MISSING)
        snprintf(why, why_len, "no fleet.ini names a group");
    else if (st == FLEET_INI_UNSAFE)
        snprintf(why, why_len,
                 "fleet.ini is refused: it must be the queue owner's and writable by "
                 "them alone");
    if (st != FLEET_INI_OK)
        return false;
    if (!f.group[0]) {
        snprintf(why, why_len, "fleet.ini: [fleet] group is not set");
        return false;
    }
    struct group *g = getgrnam(f.group);
    if (!g) {
        snprintf(why, why_len, "fleet.ini: [fleet] group '%s' is not a group of this machine",
                 f.group);
        return false;
    }
    snprintf(group, cap, "%s", f.group);
    *gid = g->gr_gid;
    return true;
}

QueueStatus queue_open(const char *dir, bool create, char *why, size_t why_len)
{
    struct stat sb;
    char tests[QUEUE_PATH_MAX + 8];
    if (snprintf(tests, sizeof tests, "%s/tests", dir) >= (int)sizeof tests) {
        snprintf(why, why_len, "queue path too long: %s", dir);
        return QUEUE_ERR_IO;
    }
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT || !create) {
            snprintf(why, why_len, "queue %s: %s", dir, strerror(errno));
            return errno == ENOENT ? QUEUE_ERR_NOT_QUEUE : QUEUE_ERR_IO;
        }
        // A new queue is the caller's alone; the mode is set after mkdir (umask aside).
        if (files_mkdir_p(dir) != 0 || chmod(dir, 0700) != 0 || stat(dir, &sb) != 0) {
            snprintf(why, why_len, "cannot make the queue %s: %s", dir, strerror(errno));
            return QUEUE_ERR_IO;
        }
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(why, why_len, "queue %s is not a directory", dir);
        return QUEUE_ERR_NOT_QUEUE;
    }
    // A job file starts programs: the queue is its owner's, or shared with one group that
    // its owner named in fleet.ini (the directory in that group); never writable by others.
    char owner[64], group[64] = "", gwhy[512] = "";
    gid_t gid = 0;
    owner_name(sb.st_uid, owner, sizeof owner);
    bool mine = sb.st_uid == geteuid();
    bool shared = (sb.st_mode & 020) || !mine;
    bool group_ok =
        shared && fleet_group(dir, sb.st_uid, group, sizeof group, &gid, gwhy, sizeof gwhy);
    if (group_ok && sb.st_gid != gid)
        snprintf(gwhy, sizeof gwhy, "the directory's group is not [fleet] group %s", group);
    group_ok = group_ok && sb.st_gid == gid && (mine || caller_in_group(gid));
    if ((sb.st_mode & 002) || (shared && !group_ok)) {
        snprintf(why, why_len,
                 "queue %s is refused: owner %s, mode %04o: a queue must be writable by its "
                 "owner alone, or by the group its fleet.ini names (%s)%s",
                 dir, owner, (unsigned)(sb.st_mode & 07777),
                 sb.st_mode & 002 ? "never by others" : gwhy,
                 mine ? "" : "; you are not its owner nor in its group");
        return QUEUE_ERR_UNSAFE;
    }
    uid_t queue_owner = sb.st_uid;
    if (lstat(tests, &sb) != 0) {
        if (errno == ENOENT && create && mkdir(tests, shared ? 0770 : 0700) == 0)
            return QUEUE_OK;
        snprintf(why, why_len, "%s is not a queue (no tests/ directory in it%s%s)", dir,
                 errno == ENOENT ? "" : ": ", errno == ENOENT ? "" : strerror(errno));
        return QUEUE_ERR_NOT_QUEUE;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(why, why_len, "%s is not a queue (tests is not a directory%s)", dir,
                 S_ISLNK(sb.st_mode) ? ": a symbolic link" : "");
        return QUEUE_ERR_NOT_QUEUE;
    }
    // Where tests are planted: as the queue itself, its owner's, and never writable by others.
    if (sb.st_uid != queue_owner || (sb.st_mode & 002) ||
        ((sb.st_mode & 020) && !(group_ok && sb.st_gid == gid))) {
        char towner[64];
        owner_name(sb.st_uid, towner, sizeof towner);
        snprintf(why, why_len,
                 "queue %s is refused: %s has owner %s, mode %04o: it must be the queue "
                 "owner's (%s) and writable by them alone, or by the group its fleet.ini names",
                 dir, tests, towner, (unsigned)(sb.st_mode & 07777), owner);
        return QUEUE_ERR_UNSAFE;
    }
    return QUEUE_OK;
}

/// Reads a whole regular file of at most max bytes into a NUL-terminated buffer; flags are
/// added to open's (O_NOFOLLOW: a link is refused). Never blocks on a FIFO or a device: it is
/// opened non-blocking and refused as not a regular file.
static char *slurp(const char *path, int flags, size_t max, size_t *len, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(why, why_len, "%s: %s", path,
                 errno == ELOOP && (flags & O_NOFOLLOW) ? "a symbolic link (refused)"
                                                        : strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode) || (size_t)sb.st_size > max) {
        snprintf(why, why_len, "%s: %s", path,
                 S_ISREG(sb.st_mode) ? "file too large" : "not a regular file");
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (!buf || got != (size_t)sb.st_size) {
        snprintf(why, why_len, "%s: %s", path, buf ? "short read" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

static json_t *record_json(const QueueTest *t)
{
    json_t *sets = json_array();
    for (int i = 0; sets && i < t->n_sets; i++)
        json_array_append_new(sets, json_string(t->sets[i]));
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:s, s:I, s:I, s:I, s:I, "
                  "s:{s:s, s:s, s:s, s:o}}",
                  "id", t->id, "name", t->name, "kind", t->kind, "state",
                  queue_state_name(t->state), "stop_requested", t->stop_requested, "priority",
                  t->priority, "throughput", t->throughput, "reason", t->reason, "submitted",
                  (json_int_t)t->submitted, "started", (json_int_t)t->started, "finished",
                  (json_int_t)t->finished, "uid", (json_int_t)t->uid, "job", "file", t->job_file,
                  "dir", t->job_dir, "set_dir", t->set_dir, "sets", sets ? sets : json_array());
    // Set by later versions: a record without them reads as 1 and 0.
    if (o && (json_object_set_new(o, "tc_ratio", json_real(t->tc_ratio > 0 ? t->tc_ratio : 1)) ||
              json_object_set_new(o, "workers", json_integer(t->workers)))) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/// Copies a JSON string member into dst (cap bytes); false when missing, not a string or
/// too long.
static bool take_text(json_t *o, const char *key, char *dst, size_t cap)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v) || json_string_length(v) >= cap)
        return false;
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return true;
}

static bool take_int(json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return false;
    *out = json_integer_value(v);
    return true;
}

/// The record's fields into *t; on failure the name of the first bad member.
static const char *record_parse(json_t *o, QueueTest *t)
{
    char state[16];
    int64_t v;
    memset(t, 0, sizeof *t);
    if (!take_text(o, "id", t->id, sizeof t->id) || !id_valid(t->id))
        return "id";
    if (!take_text(o, "name", t->name, sizeof t->name))
        return "name";
    if (!take_text(o, "kind", t->kind, sizeof t->kind))
        return "kind";
    if (!take_text(o, "state", state, sizeof state))
        return "state";
    t->state = TEST_STATE_NB;
    for (int s = 0; s < TEST_STATE_NB; s++)
        if (!strcmp(state, STATE_NAME[s]))
            t->state = (TestState)s;
    if (t->state == TEST_STATE_NB)
        return "state";
    json_t *stop = json_object_get(o, "stop_requested");
    if (!json_is_boolean(stop))
        return "stop_requested";
    t->stop_requested = json_is_true(stop);
    if (!take_int(o, "priority", -QUEUE_PRIORITY_MAX, QUEUE_PRIORITY_MAX, &v))
        return "priority";
    t->priority = (int)v;
    if (!take_int(o, "throughput", 1, QUEUE_THROUGHPUT_MAX, &v))
        return "throughput";
    t->throughput = (int)v;
    json_t *ratio = json_object_get(o, "tc_ratio");
    if (ratio && (!json_is_number(ratio) || !(json_number_value(ratio) > 0) ||
                  json_number_value(ratio) > 1e9))
        return "tc_ratio";
    t->tc_ratio = ratio ? json_number_value(ratio) : 1;
    if (json_object_get(o, "workers") && !take_int(o, "workers", 0, 1 << 20, &v))
        return "workers";
    t->workers = json_object_get(o, "workers") ? (int)v : 0;
    if (!take_text(o, "reason", t->reason, sizeof t->reason))
        return "reason";
    if (!take_int(o, "submitted", 0, INT64_MAX, &t->submitted))
        return "submitted";
    if (!take_int(o, "started", 0, INT64_MAX, &t->started))
        return "started";
    if (!take_int(o, "finished", 0, INT64_MAX, &t->finished))
        return "finished";
    if (!take_int(o, "uid", 0, UINT32_MAX, &v))
        return "uid";
    t->uid = (unsigned)v;
    json_t *job = json_object_get(o, "job");
    if (!json_is_object(job) || !take_text(job, "file", t->job_file, sizeof t->job_file))
        return "job.file";
    if (!take_text(job, "dir", t->job_dir, sizeof t->job_dir))
        return "job.dir";
    if (!take_text(job, "set_dir", t->set_dir, sizeof t->set_dir))
        return "job.set_dir";
    json_t *sets = json_object_get(job, "sets");
    if (!json_is_array(sets) || json_array_size(sets) > QUEUE_SETS_MAX)
        return "job.sets";
    for (size_t i = 0; i < json_array_size(sets); i++) {
        json_t *s = json_array_get(sets, i);
        if (!json_is_string(s) || json_string_length(s) > QUEUE_SET_MAX)
            return "job.sets";
        memcpy(t->sets[i], json_string_value(s), json_string_length(s) + 1);
    }
    t->n_sets = (int)json_array_size(sets);
    return NULL;
}

QueueStatus queue_read(const char *dir, const char *id, QueueTest *t, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 64];
    struct stat sb;
    if (!id_valid(id) || !queue_test_path(dir, id, NULL, path, sizeof path) ||
        stat(path, &sb) != 0) {
        snprintf(why, why_len, "no test '%s' in queue %s", id, dir);
        return QUEUE_ERR_NO_TEST;
    }
    queue_test_path(dir, id, "test.json", path, sizeof path);
    size_t len;
    char *text = slurp(path, O_NOFOLLOW, RECORD_MAX, &len, why, why_len);
    if (!text)
        return QUEUE_ERR_RECORD;
    json_error_t err;
    json_t *o = json_loadb(text, len, 0, &err);
    free(text);
    if (!json_is_object(o)) {
        snprintf(why, why_len, "%s: not a test record: %s", path, o ? "not an object" : err.text);
        json_decref(o);
        return QUEUE_ERR_RECORD;
    }
    const char *bad = record_parse(o, t);
    json_decref(o);
    if (bad) {
        snprintf(why, why_len, "%s: member '%s' missing or out of range", path, bad);
        return QUEUE_ERR_RECORD;
    }
    if (strcmp(t->id, id)) {
        snprintf(why, why_len, "%s: says it is test %s", path, t->id);
        return QUEUE_ERR_RECORD;
    }
    return QUEUE_OK;
}

/// Test hook (the fault drills): XQ_FAULT_RECORD_FULL=N makes every write of a test.json after
/// this process's first N fail with ENOSPC, as on a full disk, so that a drill runs anywhere.
static bool queue_fault_full(void)
{
    static atomic_long writes;
    const char *v = getenv("XQ_FAULT_RECORD_FULL");
    return v && v[0] && atomic_fetch_add(&writes, 1) >= strtol(v, NULL, 10);
}

QueueStatus queue_write(const char *dir, const QueueTest *t, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 64];
    if (!queue_test_path(dir, t->id, "test.json", path, sizeof path)) {
        snprintf(why, why_len, "queue path too long: %s", dir);
        return QUEUE_ERR_IO;
    }
    json_t *o = record_json(t);
    char *text = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    if (!text) {
        snprintf(why, why_len, "out of memory");
        return QUEUE_ERR_NOMEM;
    }
    size_t len = strlen(text);
    text[len] = '\n'; // json_dumps's NUL replaced: the file ends with a newline
    int rc = queue_fault_full() ? (errno = ENOSPC, -1) : files_write_atomic(path, text, len + 1);
    int e = errno;
    free(text);
    if (rc != 0) {
        snprintf(why, why_len, "cannot write %s: %s", path, strerror(e));
        return QUEUE_ERR_IO;
    }
    return QUEUE_OK;
}

/// The numeric value of an id, -1 when name is not one.
static long id_value(const char *name)
{
    if (!id_valid(name))
        return -1;
    return strtol(name, NULL, 10);
}

QueueStatus queue_add(const char *dir, QueueTest *t, char *why, size_t why_len)
{
    size_t len;
    char *job = slurp(t->job_file, 0, JOB_COPY_MAX, &len, why, why_len);
    if (!job)
        return QUEUE_ERR_IO;
    char path[QUEUE_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/tests", dir);
    DIR *d = opendir(path);
    // The largest id in use below the cap: a directory named past it (99999999, made by hand)
    // would otherwise leave no id for any later submit.
    long top = 0, cap = 100L * QUEUE_TESTS_MAX;
    for (struct dirent *e; d && (e = readdir(d));)
        if (id_value(e->d_name) > top && id_value(e->d_name) < cap)
            top = id_value(e->d_name);
    if (d)
        closedir(d);
    // mkdir is the allocation: a second submit that read the same top gets EEXIST, tries on.
    for (unsigned long id = (unsigned long)top + 1;; id++) {
        if (id > 100UL * QUEUE_TESTS_MAX) {
            free(job);
            snprintf(why, why_len, "queue %s: no free test id", dir);
            return QUEUE_ERR_IO;
        }
        snprintf(t->id, sizeof t->id, "%04lu", id % 100000000UL);
        queue_test_path(dir, t->id, NULL, path, sizeof path);
        if (mkdir(path, 0700) == 0)
            break;
        if (errno != EEXIST) {
            free(job);
            snprintf(why, why_len, "cannot make %s: %s", path, strerror(errno));
            return QUEUE_ERR_IO;
        }
    }
    queue_test_path(dir, t->id, "job.ini", path, sizeof path);
    int rc = files_write_atomic(path, job, len);
    free(job);
    if (rc != 0) {
        snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
        return QUEUE_ERR_IO;
    }
    t->state = TEST_QUEUED;
    t->submitted = (int64_t)time(NULL);
    t->started = t->finished = 0;
    t->uid = (unsigned)geteuid();
    return queue_write(dir, t, why, why_len);
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const QueueTest *)a)->id, ((const QueueTest *)b)->id);
}

QueueStatus queue_list(const char *dir, QueueTest **out, int *n, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/tests", dir);
    *out = NULL;
    *n = 0;
    DIR *d = opendir(path);
    if (!d) {
        snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return QUEUE_ERR_IO;
    }
    int cap = 0;
    QueueStatus st = QUEUE_OK;
    char one[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (id_value(e->d_name) < 0)
            continue;
        if (*n == cap) {
            int ncap = cap ? 2 * cap : 16;
            QueueTest *grown =
                ncap <= QUEUE_TESTS_MAX ? realloc(*out, (size_t)ncap * sizeof **out) : NULL;
            if (!grown) {
                st = QUEUE_ERR_NOMEM;
                snprintf(why, why_len, "too many tests in %s", dir);
                break;
            }
            *out = grown;
            cap = ncap;
        }
        // A test being submitted has no record yet: it is not listed until it has one.
        if (queue_read(dir, e->d_name, &(*out)[*n], one, sizeof one) == QUEUE_OK)
            (*n)++;
        else if (st == QUEUE_OK &&
                 queue_test_path(dir, e->d_name, "test.json", path, sizeof path) &&
                 access(path, F_OK) == 0) {
            st = QUEUE_ERR_RECORD;
            snprintf(why, why_len, "%s", one);
        }
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, (size_t)*n, sizeof **out, by_id);
    return st;
}

QueueStatus queue_update(const char *dir, const char *id, QueueChange change, void *user, char *why,
                         size_t why_len)
{
    char path[QUEUE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/queue.lock", dir);
    FilesLock lock = {.fd = -1};
    FilesLockHolder holder = {0};
    int waited = 0;
    while (files_lock(path, &lock, &holder) != 0) {
        if (errno != EWOULDBLOCK || waited >= LOCK_WAIT_MS) {
            if (errno == EWOULDBLOCK)
                snprintf(why, why_len, "%s is held by pid %ld on %s for over %d s", path,
                         holder.pid, holder.host, LOCK_WAIT_MS / 1000);
            else
                snprintf(why, why_len, "cannot lock %s: %s", path, strerror(errno));
            return errno == EWOULDBLOCK ? QUEUE_ERR_BUSY : QUEUE_ERR_IO;
        }
        nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
        waited += 20;
    }
    QueueTest t;
    QueueStatus st = queue_read(dir, id, &t, why, why_len);
    if (st == QUEUE_OK && !change(&t, user, why, why_len))
        st = QUEUE_ERR_STATE;
    if (st == QUEUE_OK)
        st = queue_write(dir, &t, why, why_len);
    files_unlock(&lock);
    return st;
}

/// Whether uid may own a test of the queue dir (owner: its owner): the owner, or a member of
/// the group its fleet.ini names (*gid then that group, has_group set).
static bool uid_trusted(const char *dir, uid_t owner, uid_t uid, bool *has_group, gid_t *gid)
{
    char group[64], gwhy[512];
    *has_group = fleet_group(dir, owner, group, sizeof group, gid, gwhy, sizeof gwhy);
    if (uid == owner)
        return true;
    struct passwd *pw = getpwuid(uid);
    gid_t groups[256];
    int n = 256;
    if (*has_group && pw && getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) >= 0)
        for (int i = 0; i < n; i++)
            if (groups[i] == *gid)
                return true;
    return false;
}

/// A mode that only its owner (or the fleet's group, where the queue has one) may write.
static bool mode_safe(const struct stat *sb, bool has_group, gid_t gid)
{
    return !(sb->st_mode & 002) && (!(sb->st_mode & 020) || (has_group && sb->st_gid == gid));
}

/// Opens a file of a test without following a link or blocking, and checks it: a regular
/// file, owned by want (or by also, when not (uid_t)-1), writable by its owner alone (or the
/// fleet's group). -1 with why.
static int open_trusted(const char *path, uid_t want, uid_t also, bool has_group, gid_t gid,
                        struct stat *sb, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 || fstat(fd, sb) != 0) {
        snprintf(why, why_len, "%s: %s", path,
                 errno == ELOOP ? "a symbolic link (refused)" : strerror(errno));
    } else if (!S_ISREG(sb->st_mode)) {
        snprintf(why, why_len, "%s: not a regular file (refused)", path);
    } else if (sb->st_uid != want && sb->st_uid != also) {
        char who[64], should[64];
        owner_name(sb->st_uid, who, sizeof who);
        owner_name(want, should, sizeof should);
        snprintf(why, why_len, "%s: written by %s, not by the test's submitter %s (refused)", path,
                 who, should);
    } else if (!mode_safe(sb, has_group, gid)) {
        snprintf(why, why_len, "%s: mode %04o, writable by others (refused)", path,
                 (unsigned)(sb->st_mode & 07777));
    } else {
        return fd;
    }
    if (fd >= 0)
        close(fd);
    return -1;
}

QueueStatus queue_fleet_holder(const char *dir, FilesLockHolder *holder, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/fleet.lock", dir);
    FilesLock lock = {.fd = -1};
    memset(holder, 0, sizeof *holder);
    if (files_lock(path, &lock, holder) == 0) { // free: no fleet (held a moment, let go)
        files_unlock(&lock);
        memset(holder, 0, sizeof *holder);
        return QUEUE_OK;
    }
    if (errno == EWOULDBLOCK) {
        if (holder->pid <= 0)
            holder->pid = 1; // held, by a holder that wrote nothing readable yet
        return QUEUE_OK;
    }
    snprintf(why, why_len, "cannot lock %s: %s", path, strerror(errno));
    return QUEUE_ERR_IO;
}

QueueStatus queue_test_allowed(const char *dir, const char *id, char *why, size_t why_len)
{
    char path[QUEUE_PATH_MAX + 64], tdir[QUEUE_PATH_MAX + 64];
    struct stat qs, ds, js, rs;
    // The queue and tests/ again (checked on every read, not once at the fleet's start).
    QueueStatus st = queue_open(dir, false, why, why_len);
    if (st != QUEUE_OK)
        return st;
    if (!id_valid(id) || !queue_test_path(dir, id, NULL, tdir, sizeof tdir) ||
        stat(dir, &qs) != 0 || lstat(tdir, &ds) != 0) {
        snprintf(why, why_len, "test %s: its directory cannot be read", id);
        return QUEUE_ERR_NO_TEST;
    }
    bool has_group;
    gid_t gid = 0;
    char user[64];
    owner_name(ds.st_uid, user, sizeof user);
    // The test's directory: a real directory of a trusted user that nobody else may write (so
    // that no file in it can be swapped after the checks below). Never written to otherwise.
    if (!S_ISDIR(ds.st_mode) || !uid_trusted(dir, qs.st_uid, ds.st_uid, &has_group, &gid) ||
        !mode_safe(&ds, has_group, gid)) {
        snprintf(why, why_len,
                 "test %s is refused: %s is %s (owner %s, mode %04o): a test's directory must be "
                 "made by the queue's owner or a member of the group its fleet.ini names, and "
                 "writable by them alone; it is never run nor written to",
                 id, tdir, S_ISLNK(ds.st_mode) ? "a symbolic link" : "not the queue's", user,
                 (unsigned)(ds.st_mode & 07777));
        return QUEUE_ERR_FOREIGN;
    }
    // job.ini and test.json: no link, regular, the submitter's (test.json: or the fleet's,
    // which rewrites it), test.json's record naming the same submitter.
    queue_test_path(dir, id, "job.ini", path, sizeof path);
    char fwhy[QUEUE_PATH_MAX + 160];
    int fd = open_trusted(path, ds.st_uid, (uid_t)-1, has_group, gid, &js, fwhy, sizeof fwhy);
    if (fd >= 0)
        close(fd);
    queue_test_path(dir, id, "test.json", path, sizeof path);
    int rfd =
        fd < 0 ? -1
               : open_trusted(path, js.st_uid, qs.st_uid, has_group, gid, &rs, fwhy, sizeof fwhy);
    if (rfd >= 0)
        close(rfd);
    QueueTest *t = rfd >= 0 ? malloc(sizeof *t) : NULL;
    char rwhy[512] = "out of memory";
    bool same = false;
    if (t && queue_read(dir, id, t, rwhy, sizeof rwhy) == QUEUE_OK) {
        same = t->uid == js.st_uid;
        snprintf(rwhy, sizeof rwhy, "its record says uid %u submitted it, its job.ini is uid %u's",
                 t->uid, (unsigned)js.st_uid);
    }
    free(t);
    if (fd < 0 || rfd < 0 || !same) {
        snprintf(why, why_len,
                 "test %s is refused: %.900s; it is not run (a job file starts "
                 "programs)",
                 id, fd < 0 || rfd < 0 ? fwhy : rwhy);
        return QUEUE_ERR_UNSAFE;
    }
    return QUEUE_OK;
}
