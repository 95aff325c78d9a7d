// SPDX-License-Identifier: MIT
// The spool: report versions waiting for delivery, one directory each, and the checks that
// make an entry trusted before anything of it is sent. The transport (upload.c) reads it
// through upload_spool.h; nothing here touches the network.
#define _GNU_SOURCE // dirfd, O_DIRECTORY, O_NOFOLLOW
#include "upload_spool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

// meta.json of an entry: data only (see entry_parse).
#define KEY_CHARS    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
#define SPOOL_FORMAT "xqforge-spool-entry"
enum { SPOOL_FORMAT_VERSION = 2 };

// ---- The spool -----------------------------------------------------------------------------
// SPOOL/MS-RUNID-VERSION-K/ (K: f final, p progress), 0700, holding copies of the report
// files (0600) and meta.json (0600): format, format_version, run_id, version, final,
// idempotency_key, files [{name, size, fnv1a}], delivered [destination ids]. Nothing in it
// says where to send or with which token; a destination id is the FNV-1a of "METHOD URL".

// Shared by both halves of the uploader, so that every refusal reads the same way.
UploadStatus upload_fail(char *why, size_t len, UploadStatus st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && len)
        vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return st;
}

/// Reads a whole open regular file of at most max bytes into a NUL-terminated heap buffer;
/// closes fd.
char *spool_slurp_fd(int fd, size_t max, size_t *len)
{
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *buf = NULL;
    struct stat sb;
    errno = 0;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (size_t)sb.st_size <= max &&
        (buf = malloc((size_t)sb.st_size + 1))) {
        *len = fread(buf, 1, (size_t)sb.st_size, f);
        buf[*len] = '\0';
        if (*len != (size_t)sb.st_size) {
            free(buf);
            buf = NULL;
        }
    } else if (!buf) {
        errno = errno ? errno : EFBIG;
    }
    fclose(f);
    return buf;
}

/// Opens a file of the spool to read: a regular file (not a link) of this user that group
/// and others cannot write. -1 with errno (EPERM: another's or writable by others).
int spool_open_own(const char *path, struct stat *sb)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, sb) != 0 || !S_ISREG(sb->st_mode) || sb->st_uid != geteuid() ||
        (sb->st_mode & 022)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/// "name (uid N)", or "uid N" for a user without a name.
static void owner_text(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, len, "%s (uid %u)", res->pw_name, (unsigned)uid);
    else
        snprintf(buf, len, "uid %u", (unsigned)uid);
}

/// mkdir -p of the parent, then the spool itself with mode 0700.
static int make_spool(const char *dir)
{
    char parent[UPLOAD_TEXT_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = '\0';
        if (files_mkdir_p(parent) != 0)
            return -1;
    }
    return mkdir(dir, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

// stat, not lstat: a spool may be a link to a directory on another disk; it is the directory
// itself whose owner and mode must be safe.
UploadStatus upload_spool_check(const char *dir, bool create, char *why, size_t why_len)
{
    struct stat sb;
    int rc = stat(dir, &sb);
    if (rc != 0 && errno == ENOENT && create && make_spool(dir) == 0)
        rc = stat(dir, &sb); // and checked below: another may have made it meanwhile
    if (rc != 0) {
        int err = errno;
        upload_fail(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", dir, strerror(err));
        errno = err;
        return UPLOAD_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return upload_fail(why, why_len, UPLOAD_ERR_IO, "spool %s: not a directory", dir);
    }
    bool theirs = sb.st_uid != geteuid();
    if (theirs || (sb.st_mode & 022)) {
        // Whoever can write in it can plant reports that we would send as ours.
        char owner[300];
        owner_text(sb.st_uid, owner, sizeof owner);
        return upload_fail(why, why_len, UPLOAD_ERR_UNSAFE,
                           "spool %s is refused: mode %04o, owner %s: %s (a spool must be yours "
                           "and writable by you alone: chmod 700 it, or use another)",
                           dir, (unsigned)(sb.st_mode & 07777), owner,
                           theirs ? "not yours" : "group or others can write in it");
    }
    if (create && (sb.st_mode & 077) && chmod(dir, 0700) != 0)
        return upload_fail(why, why_len, UPLOAD_ERR_IO, "spool %s: chmod 700: %s", dir,
                           strerror(errno));
    return UPLOAD_OK;
}

/// A run id goes into directory names and the Idempotency-Key header: a short, plain word.
static bool run_id_ok(const char *s)
{
    if (!s[0] || strlen(s) > SPOOL_RUN_ID_MAX)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return false;
    return true;
}

/// A plain file name: letters, digits, '.', '-', '_', not starting with '.'.
static bool file_name_ok(const char *s)
{
    if (!s[0] || s[0] == '.' || strlen(s) >= SPOOL_NAME_MAX)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '-' && *s != '_')
            return false;
    return true;
}

/// Copies src to dst (created 0600) and flushes it to disk; FNV-1a of the bytes continued
/// into *all and from the basis into *own, the size into *size.
static bool copy_file(const char *src, const char *dst, uint64_t *all, uint64_t *own,
                      long long *size)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    bool ok = in >= 0 && out >= 0;
    char block[65536];
    *own = FILES_FNV_BASIS;
    *size = 0;
    for (ssize_t n; ok && (n = read(in, block, sizeof block)) != 0;) {
        if (n < 0) {
            ok = errno == EINTR;
            continue;
        }
        *all = files_fnv(*all, block, (size_t)n);
        *own = files_fnv(*own, block, (size_t)n);
        *size += n;
        ok = write(out, block, (size_t)n) == n;
    }
    ok = ok && fsync(out) == 0;
    int err = errno;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = false;
    errno = err;
    return ok;
}

/// An entry keeps its files under their own names, which deliver_to appends to PUT URLs.
static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/// The Idempotency-Key: the run, the version and the files' hash, so that a retry repeats it
/// and different content never shares it. entry_verify recomputes it from the files.
static void entry_key(const char *run_id, long long version, uint64_t hash, char *buf, size_t len)
{
    snprintf(buf, len, "xqforge-%s-%llu-%016llx", run_id, (unsigned long long)version,
             (unsigned long long)hash);
}

/// The entry's directory name: sorting names sorts entries by age; the run and the kind are
/// readable without meta.json.
static void entry_suffix(const SpoolEntry *e, char *buf, size_t len)
{
    snprintf(buf, len, "-%s-%08llu-%c", e->run_id, (unsigned long long)e->version,
             e->final ? 'f' : 'p');
}

/// meta.json's object; hashes as 16 hex digits, since JSON numbers lose 64-bit precision.
static json_t *entry_json(const SpoolEntry *e)
{
    char hex[17];
    json_t *files = json_array(), *done = json_array();
    for (int i = 0; i < e->file_count; i++) {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)e->files[i].fnv);
        json_array_append_new(files, json_pack("{s:s, s:I, s:s}", "name", e->files[i].name, "size",
                                               (json_int_t)e->files[i].size, "fnv1a", hex));
    }
    for (int i = 0; i < e->delivered_count; i++) {
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)e->delivered[i]);
        json_array_append_new(done, json_string(hex));
    }
    return json_pack("{s:s, s:i, s:s, s:I, s:b, s:s, s:o, s:o}", "format", SPOOL_FORMAT,
                     "format_version", SPOOL_FORMAT_VERSION, "run_id", e->run_id, "version",
                     (json_int_t)e->version, "final", e->final, "idempotency_key", e->key, "files",
                     files, "delivered", done);
}

/// meta.json of dir replaced atomically (mode 0600).
bool spool_entry_write(const char *dir, const SpoolEntry *e)
{
    char path[UPLOAD_TEXT_MAX + 32], tmp[UPLOAD_TEXT_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    snprintf(tmp, sizeof tmp, "%s/.meta.json.tmp", dir);
    json_t *meta = entry_json(e);
    char *text = meta ? json_dumps(meta, JSON_INDENT(2)) : NULL;
    json_decref(meta);
    if (!text) {
        errno = ENOMEM;
        return false;
    }
    size_t len = strlen(text);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    free(text);
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        err = errno ? errno : err;
        unlink(tmp);
    }
    errno = err;
    return ok;
}

void spool_entry_remove(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(dir);
}

UploadStatus upload_spool_add(const char *spool_dir, const char *run_id, uint64_t version,
                              bool final, const char *const *files, int n, char *why,
                              size_t why_len)
{
    if (!run_id_ok(run_id) || n < 1 || n > UPLOAD_FILES_MAX || version > INT64_MAX)
        return upload_fail(why, why_len, UPLOAD_ERR_ARG,
                           "spool: bad run id, version or file count");
    for (int i = 0; i < n; i++)
        if (!file_name_ok(base_name(files[i])))
            return upload_fail(why, why_len, UPLOAD_ERR_ARG, "spool: '%s' is not a plain file name",
                               base_name(files[i]));
    UploadStatus st = upload_spool_check(spool_dir, true, why, why_len);
    if (st != UPLOAD_OK)
        return st;
    // Built under a hidden name and renamed whole, so that a pass (or a crash) never sees half
    // an entry. The millisecond prefix orders entries by age; pid and serial keep concurrent
    // builders apart.
    SpoolEntry e = {.version = (long long)version, .final = final, .file_count = n};
    snprintf(e.run_id, sizeof e.run_id, "%s", run_id);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    static atomic_uint_fast64_t serial;
    char tmp[UPLOAD_TEXT_MAX + 64], dst[UPLOAD_TEXT_MAX + 128], path[UPLOAD_TEXT_MAX + 320];
    char suffix[SPOOL_RUN_ID_MAX + 40];
    entry_suffix(&e, suffix, sizeof suffix);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%llu", spool_dir, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&serial, 1));
    snprintf(dst, sizeof dst, "%s/%013lld%s", spool_dir, ms, suffix);
    if (mkdir(tmp, 0700) != 0)
        return upload_fail(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", tmp, strerror(errno));
    uint64_t hash = FILES_FNV_BASIS;
    for (int i = 0; i < n; i++) {
        SpoolFile *f = &e.files[i];
        snprintf(f->name, sizeof f->name, "%s", base_name(files[i]));
        snprintf(path, sizeof path, "%s/%s", tmp, f->name);
        if (!copy_file(files[i], path, &hash, &f->fnv, &f->size)) {
            int err = errno;
            spool_entry_remove(tmp);
            return upload_fail(why, why_len, UPLOAD_ERR_IO, "spool: cannot copy %s: %s", files[i],
                               strerror(err));
        }
    }
    entry_key(run_id, e.version, hash, e.key, sizeof e.key);
    bool ok = spool_entry_write(tmp, &e) && rename(tmp, dst) == 0;
    int err = errno;
    if (!ok) {
        spool_entry_remove(tmp);
        return upload_fail(why, why_len, UPLOAD_ERR_IO, "spool %s: %s", dst, strerror(err));
    }
    return UPLOAD_OK;
}

// Hidden names are the lock and entries still being built: never counted, never sent.
int spool_entry_filter(const struct dirent *e) { return e->d_name[0] != '.'; }

int upload_spool_count(const char *spool_dir)
{
    struct dirent **list;
    int n = scandir(spool_dir, &list, spool_entry_filter, alphasort);
    for (int i = 0; i < n; i++)
        free(list[i]);
    if (n >= 0)
        free(list);
    return n < 0 ? 0 : n;
}

// ---- Reading an entry back: nothing in it is trusted until checked ------------------------

/// Exactly 16 hex digits: strtoull alone would accept signs, spaces and short values.
static bool hex64(const char *s, uint64_t *out)
{
    if (!s || strlen(s) != 16)
        return false;
    for (int i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)s[i]))
            return false;
    *out = strtoull(s, NULL, 16);
    return true;
}

/// meta.json's text into e: only the keys of SPOOL_FORMAT, each of its type and range. One
/// that names where to send or a token source is refused by name: the spool never says so.
static UploadStatus entry_parse(const char *text, size_t n, SpoolEntry *e, char *why, size_t len)
{
    static const char *const directions[] = {"urls",     "url",        "method",  "token_env",
                                             "token",    "token_file", "ca_file", "headers",
                                             "password", "user"};
    memset(e, 0, sizeof *e);
    json_error_t err;
    json_t *m = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
    if (!json_is_object(m)) {
        json_decref(m);
        return upload_fail(why, len, UPLOAD_ERR_SPOOL, "meta.json is not a JSON object");
    }
    for (size_t i = 0; i < sizeof directions / sizeof *directions; i++)
        if (json_object_get(m, directions[i])) {
            json_decref(m);
            return upload_fail(why, len, UPLOAD_ERR_SPOOL,
                               "meta.json names '%s', but a spool entry carries data only (where "
                               "to send and with which token come from the job or xqforge upload's "
                               "options): planted, tampered with, or from an older xqforge",
                               directions[i]);
        }
    const char *format, *run_id, *key;
    json_int_t format_version, version;
    int final;
    json_t *files, *done;
    bool ok = json_unpack_ex(m, &err, JSON_STRICT, "{s:s, s:I, s:s, s:I, s:b, s:s, s:o, s:o}",
                             "format", &format, "format_version", &format_version, "run_id",
                             &run_id, "version", &version, "final", &final, "idempotency_key", &key,
                             "files", &files, "delivered", &done) == 0 &&
              !strcmp(format, SPOOL_FORMAT) && format_version == SPOOL_FORMAT_VERSION &&
              run_id_ok(run_id) && version >= 0 && strlen(key) < sizeof e->key &&
              strspn(key, KEY_CHARS) == strlen(key) && json_is_array(files) &&
              json_array_size(files) >= 1 && json_array_size(files) <= UPLOAD_FILES_MAX &&
              json_is_array(done) && json_array_size(done) <= UPLOAD_DELIVERED_MAX;
    if (ok) {
        snprintf(e->run_id, sizeof e->run_id, "%s", run_id);
        snprintf(e->key, sizeof e->key, "%s", key);
        e->version = (long long)version;
        e->final = final;
        e->file_count = (int)json_array_size(files);
        e->delivered_count = (int)json_array_size(done);
    }
    for (int i = 0; ok && i < e->file_count; i++) {
        const char *name, *hex;
        json_int_t size;
        SpoolFile *f = &e->files[i];
        ok = json_unpack_ex(json_array_get(files, (size_t)i), &err, JSON_STRICT, "{s:s, s:I, s:s}",
                            "name", &name, "size", &size, "fnv1a", &hex) == 0 &&
             file_name_ok(name) && size >= 0 && size <= UPLOAD_BODY_MAX && hex64(hex, &f->fnv);
        if (ok) {
            snprintf(f->name, sizeof f->name, "%s", name);
            f->size = (long long)size;
        }
        for (int k = 0; ok && k < i; k++)
            ok = strcmp(e->files[k].name, f->name) != 0;
    }
    for (int i = 0; ok && i < e->delivered_count; i++)
        ok = hex64(json_string_value(json_array_get(done, (size_t)i)), &e->delivered[i]);
    json_decref(m);
    if (!ok)
        return upload_fail(why, len, UPLOAD_ERR_SPOOL,
                           "meta.json is not an entry of format %s %d (keys, types or values)",
                           SPOOL_FORMAT, SPOOL_FORMAT_VERSION);
    return UPLOAD_OK;
}

/// Whether the entry's files are the ones it recorded (size, hash) and its key theirs.
static UploadStatus entry_verify(const char *dir, const SpoolEntry *e, char *why, size_t len)
{
    char path[UPLOAD_TEXT_MAX + 320], key[sizeof e->key];
    char block[65536];
    uint64_t all = FILES_FNV_BASIS;
    for (int i = 0; i < e->file_count; i++) {
        const SpoolFile *f = &e->files[i];
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        struct stat sb;
        int fd = spool_open_own(path, &sb);
        if (fd < 0)
            return upload_fail(why, len, UPLOAD_ERR_SPOOL, "%s: %s", f->name,
                               errno == EPERM ? "not a plain file of yours that only you can write"
                                              : strerror(errno));
        uint64_t own = FILES_FNV_BASIS;
        long long size = 0;
        for (ssize_t n; (n = read(fd, block, sizeof block)) != 0;) {
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break;
            own = files_fnv(own, block, (size_t)n);
            all = files_fnv(all, block, (size_t)n);
            size += n;
        }
        close(fd);
        if (size != f->size || own != f->fnv)
            return upload_fail(
                why, len, UPLOAD_ERR_SPOOL,
                "%s is not the file spooled (%lld bytes, recorded %lld, or another hash)", f->name,
                size, f->size);
    }
    entry_key(e->run_id, e->version, all, key, sizeof key);
    if (strcmp(key, e->key))
        return upload_fail(why, len, UPLOAD_ERR_SPOOL, "the idempotency key is not the files'");
    return UPLOAD_OK;
}

/// The entry in dir (named name in the spool), trusted only when it is ours alone, its name
/// agrees with meta.json and its files are the ones recorded.
UploadStatus spool_entry_load(const char *dir, const char *name, SpoolEntry *e, char *why,
                              size_t len)
{
    struct stat sb;
    memset(e, 0, sizeof *e);
    if (lstat(dir, &sb) != 0)
        return upload_fail(why, len, UPLOAD_ERR_SPOOL, "%s", strerror(errno));
    if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022))
        return upload_fail(why, len, UPLOAD_ERR_SPOOL,
                           "not a directory of yours that only you can write (mode %04o, uid %u)",
                           (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid);
    char path[UPLOAD_TEXT_MAX + 320];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    size_t n = 0;
    char *text = spool_slurp_fd(spool_open_own(path, &sb), UPLOAD_META_MAX, &n);
    if (!text)
        return upload_fail(why, len, UPLOAD_ERR_SPOOL, "meta.json: %s",
                           errno == EPERM ? "not a plain file of yours that only you can write"
                                          : strerror(errno ? errno : EIO));
    UploadStatus st = entry_parse(text, n, e, why, len);
    free(text);
    if (st != UPLOAD_OK)
        return st;
    char suffix[SPOOL_RUN_ID_MAX + 40];
    entry_suffix(e, suffix, sizeof suffix);
    size_t nl = strlen(name), sl = strlen(suffix);
    bool named = nl == 13 + sl && !strcmp(name + 13, suffix);
    for (size_t i = 0; named && i < 13; i++)
        named = isdigit((unsigned char)name[i]);
    if (!named)
        return upload_fail(why, len, UPLOAD_ERR_SPOOL, "its name does not match meta.json");
    return entry_verify(dir, e, why, len);
}

/// Which destination a delivery went to: FNV-1a of "METHOD URL".
uint64_t spool_destination_id(UploadMethod m, const char *url)
{
    uint64_t h = files_fnv(FILES_FNV_BASIS, upload_method_name(m), strlen(upload_method_name(m)));
    h = files_fnv(h, " ", 1);
    return files_fnv(h, url, strlen(url));
}

/// Name layout: MS-RUNID-VERSION-K (K: f final, p progress). Same run: RUNID equal.
bool spool_same_run(const char *a, const char *b)
{
    const char *ra = strchr(a, '-'), *rb = strchr(b, '-');
    const char *ea = strrchr(a, '-'), *eb = strrchr(b, '-');
    if (!ra || !rb || !ea || !eb)
        return false;
    // Strip "-VERSION-K" from both ends.
    const char *va = ea - 1, *vb = eb - 1;
    while (va > ra && *va != '-')
        va--;
    while (vb > rb && *vb != '-')
        vb--;
    return va - ra == vb - rb && !strncmp(ra, rb, (size_t)(va - ra));
}
