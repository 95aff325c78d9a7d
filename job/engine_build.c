// SPDX-License-Identifier: MIT
// Engines built from a commit (engine_build.h). A cache entry is the whole checkout after its
// build, named by the hash of what makes the binary: the tree, the build command and
// environment, the compiler's version and the CPU level.
#define _GNU_SOURCE
#include "engine_build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"

enum {
    OUT_MAX = 1 << 16,   // bytes of a command's output kept (git, bench)
    TAIL_LINES = 20,     // lines of a failed build's log in its message
    BENCH_TIMEOUT = 300, // seconds a bench may take
    GIT_TIMEOUT = 120
};

/// src into dst, cut to cap - 1 bytes.
static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    n = n < cap ? n : cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/// Runs argv in dir with env's "NAME=VALUE" entries added, for at most timeout_s. Its stdout
/// and stderr go to log (a path, appended) or into out (cap bytes, NUL-terminated). Returns
/// the exit status, 128+N for a signal, -1 when it cannot start, -2 on timeout.
static int run_cmd(const char *dir, char *const argv[], char env[][JOB_BUILD_TEXT_MAX],
                   int env_count, const char *extra_env, int timeout_s, const char *log, char *out,
                   size_t cap)
{
    int fds[2] = {-1, -1};
    if (!log && pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); // a timeout ends the build's children too
        int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : fds[1];
        int null = open("/dev/null", O_RDONLY);
        if (fd < 0 || null < 0 || (dir && chdir(dir) != 0))
            _exit(127);
        dup2(null, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        for (int i = 0; i < env_count; i++)
            putenv(env[i]);
        if (extra_env)
            putenv((char *)extra_env);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (!log)
        close(fds[1]);
    if (pid < 0) {
        if (!log)
            close(fds[0]);
        return -1;
    }
    size_t len = 0;
    double end = now_s() + timeout_s;
    bool timed_out = false;
    if (out && cap)
        out[0] = '\0';
    int status = 0;
    for (;;) {
        int left = (int)((end - now_s()) * 1000);
        if (left <= 0) {
            timed_out = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            break;
        }
        if (log) { // the build writes its log itself: wait for it
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
            continue;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        if (poll(&p, 1, left < 200 ? left : 200) <= 0)
            continue;
        char block[4096];
        ssize_t n = read(fds[0], block, sizeof block);
        if (n <= 0)
            break; // the output is closed: the program ends
        size_t take = len + (size_t)n < cap ? (size_t)n : cap - 1 - len;
        memcpy(out + len, block, take);
        len += take;
        out[len] = '\0';
    }
    if (!log)
        close(fds[0]);
    if (timed_out || !log) // a finished build was reaped by the loop
        waitpid(pid, &status, 0);
    if (timed_out)
        return -2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A git command in repo whose first output line goes to out; false when it fails.
static bool git_line(const char *repo, char *out, size_t cap, const char *a, const char *b,
                     const char *c)
{
    char *argv[] = {"git", "-C", (char *)repo, (char *)a, (char *)b, (char *)c, NULL};
    char buf[4096];
    // A protocol allow-list of "file" only: nothing here ever asks the network.
    int rc =
        run_cmd(NULL, argv, NULL, 0, "GIT_ALLOW_PROTOCOL=file", GIT_TIMEOUT, NULL, buf, sizeof buf);
    buf[strcspn(buf, "\n")] = '\0';
    copy_text(out, cap, buf);
    return rc == 0 && buf[0];
}

bool engine_build_any(const JobConfig *job)
{
    for (int i = 0; i < job->player_count; i++)
        if (job->sources[i].source[0])
            return true;
    return false;
}

/// The subject line of s's resolved commit into out, as the console and pages show it (never
/// part of the identity): control characters and bytes of a subject that is not UTF-8 as '?'.
static void commit_subject(const JobSource *s, char *out, size_t cap)
{
    char *argv[] = {"git", "-C",          (char *)s->source,    "log",
                    "-1",  "--format=%s", (char *)s->commit_id, NULL};
    char buf[JOB_BUILD_TEXT_MAX];
    if (run_cmd(NULL, argv, NULL, 0, "GIT_ALLOW_PROTOCOL=file", GIT_TIMEOUT, NULL, buf,
                sizeof buf) != 0)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    char why[64];
    bool utf8 = inifile_utf8(buf, why, sizeof why);
    for (unsigned char *p = (unsigned char *)buf; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (!utf8 && *p >= 0x80))
            *p = '?';
    copy_text(out, cap, buf);
}

bool engine_build_resolve(JobConfig *job, char *why, size_t why_len)
{
    for (int i = 0; i < job->player_count; i++) {
        JobSource *s = &job->sources[i];
        const char *name = job->players[i].cfg.name;
        if (!s->source[0])
            continue;
        char ref[JOB_TEXT_MAX + 16], tree[JOB_GIT_ID_MAX + 8];
        snprintf(ref, sizeof ref, "%s^{commit}", s->commit);
        if (!git_line(s->source, s->commit_id, sizeof s->commit_id, "rev-parse", "--verify", ref)) {
            snprintf(why, why_len,
                     "engine '%s': commit '%s' is not a commit of the git repository %s", name,
                     s->commit, s->source);
            return false;
        }
        snprintf(tree, sizeof tree, "%s^{tree}", s->commit_id);
        if (!git_line(s->source, s->tree_id, sizeof s->tree_id, "rev-parse", "--verify", tree)) {
            snprintf(why, why_len, "engine '%s': no tree for commit %s in %s", name, s->commit_id,
                     s->source);
            return false;
        }
        commit_subject(s, s->subject, sizeof s->subject);
    }
    return true;
}

/// Whether every word of want is in the flags line.
static bool has_flags(const char *flags, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", want);
    for (char *save, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t n = strlen(w);
        const char *p = flags;
        bool found = false;
        while (!found && (p = strstr(p, w)))
            found = p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || !p[n]), p += n;
        if (!found)
            return false;
    }
    return true;
}

const char *engine_build_cpu_level(void)
{
    static char level[64];
    const char *set = getenv("XQ_CPU_LEVEL");
    if (set && set[0] && strcmp(set, "native")) {
        snprintf(level, sizeof level, "%s", set);
        return level;
    }
    struct utsname u;
    if (uname(&u) == 0 && strcmp(u.machine, "x86_64")) {
        copy_text(level, sizeof level, u.machine);
        return level;
    }
    // The x86-64 psABI's micro-architecture levels, by the flags Linux names.
    FILE *f = fopen("/proc/cpuinfo", "r");
    char *line = NULL;
    size_t cap = 0;
    snprintf(level, sizeof level, "x86-64");
    while (f && getline(&line, &cap, f) > 0) {
        if (strncmp(line, "flags", 5))
            continue;
        const char *flags = strchr(line, ':');
        if (!flags)
            break;
        if (has_flags(flags, "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3"))
            snprintf(level, sizeof level, "x86-64-v2");
        if (!strcmp(level, "x86-64-v2") &&
            has_flags(flags, "avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"))
            snprintf(level, sizeof level, "x86-64-v3");
        if (!strcmp(level, "x86-64-v3") &&
            has_flags(flags, "avx512f avx512bw avx512cd avx512dq avx512vl"))
            snprintf(level, sizeof level, "x86-64-v4");
        break;
    }
    free(line);
    if (f)
        fclose(f);
    return level;
}

void engine_build_cache_dir(const JobConfig *job, char *out, size_t cap)
{
    char rel[JOB_TEXT_MAX + 16];
    // Beside the output directory, so a later run (another output.dir) reuses the builds.
    const char *dir = job->output.dir[0] ? job->output.dir : ".";
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    const char *slash = memrchr(dir, '/', n);
    if (job->build.cache[0])
        snprintf(rel, sizeof rel, "%s", job->build.cache);
    else if (!slash)
        snprintf(rel, sizeof rel, "build-cache");
    else if (slash == dir)
        snprintf(rel, sizeof rel, "/build-cache");
    else
        snprintf(rel, sizeof rel, "%.*s/build-cache", (int)(slash - dir), dir);
    // Absolute, from the current directory (where --set's paths are typed): git and the build
    // run in other directories, where a relative cache would name another place.
    char cwd[PATH_MAX];
    if (rel[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(out, cap, "%s/%s", cwd, rel);
    else
        snprintf(out, cap, "%s", rel);
}

/// The compiler's version line, as the build would see it (CC of build_env or ours, else cc).
static void compiler_version(const JobSource *s, char *out, size_t cap)
{
    char *argv[] = {"sh", "-c", "${CC:-cc} --version", NULL};
    char buf[4096];
    int rc = run_cmd(NULL, argv, (char(*)[JOB_BUILD_TEXT_MAX])s->env, s->env_count, NULL, 30, NULL,
                     buf, sizeof buf);
    buf[strcspn(buf, "\n")] = '\0';
    copy_text(out, cap, rc == 0 && buf[0] ? buf : "unknown");
}

/// The cache key: what makes the binary, hashed.
static uint64_t build_key(const JobSource *s, const char *level)
{
    uint64_t h = FILES_FNV_BASIS;
    const char *parts[] = {s->tree_id, s->build, s->binary, s->compiler, level};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        h = files_fnv(h, parts[i], strlen(parts[i]) + 1);
    for (int i = 0; i < s->env_count; i++)
        h = files_fnv(h, s->env[i], strlen(s->env[i]) + 1);
    return h;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/// rm -rf of a directory we made (a temporary checkout).
static void remove_tree(const char *path) { nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static bool is_program(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/// The last TAIL_LINES lines of a log file into out.
static void log_tail(const char *log, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (!f)
        return;
    char buf[8192];
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    const char *p = buf + n;
    for (int lines = 0; p > buf && lines < TAIL_LINES; p--)
        if (p[-1] == '\n' && ++lines == TAIL_LINES)
            break;
    copy_text(out, cap, p);
}

/// Appends one line to the cache's build log (every build, its key, host and time).
static void note_build(const char *cache, const char *line)
{
    char path[JOB_TEXT_MAX + 32];
    snprintf(path, sizeof path, "%s/builds.log", cache);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s\n", line);
        fclose(f);
    }
}

static bool sha256_file(const char *path, char hex[JOB_NET_HASH_MAX]);

/// Builds s into cache/key from a clean checkout in tmp; false with why (the log's end).
static bool build_into(const char *name, JobSource *s, const char *level, const char *cache,
                       const char *entry, const char *failed, char *why, size_t why_len)
{
    char host[256] = "?", tmp[JOB_TEXT_MAX + 600], tar[sizeof tmp + 16], tree[sizeof tmp + 16],
         log[sizeof tmp + 16], arch[96], tail[4096];
    gethostname(host, sizeof host - 1);
    snprintf(tmp, sizeof tmp, "%s/tmp-%.200s-%ld", cache, host, (long)getpid());
    snprintf(tar, sizeof tar, "%s/src.tar", tmp);
    snprintf(tree, sizeof tree, "%s/tree", tmp);
    snprintf(log, sizeof log, "%s/build.log", tmp);
    remove_tree(tmp);
    if (files_mkdir_p(tree) != 0) {
        snprintf(why, why_len, "engine '%s': cannot create %s: %s", name, tree, strerror(errno));
        return false;
    }
    // A clean checkout: the commit's tree only, no untracked file of the repository.
    char *archive[] = {"git", "-C", s->source,    "archive", "--format=tar",
                       "-o",  tar,  s->commit_id, NULL};
    char *untar[] = {"tar", "-xf", tar, "-C", tree, NULL};
    double t0 = now_s();
    int rc = run_cmd(NULL, archive, NULL, 0, "GIT_ALLOW_PROTOCOL=file", GIT_TIMEOUT, log, NULL, 0);
    if (rc == 0)
        rc = run_cmd(NULL, untar, NULL, 0, NULL, GIT_TIMEOUT, log, NULL, 0);
    if (rc == 0) {
        // The build is told its level (XQ_ARCH, and XQ_MARCH for a compiler line): never native.
        const JobSource *e = s;
        char envs[JOB_BUILD_ENV_MAX + 1][JOB_BUILD_TEXT_MAX];
        int n = 0;
        for (; n < e->env_count; n++)
            snprintf(envs[n], sizeof envs[n], "%s", e->env[n]);
        snprintf(envs[n++], sizeof envs[0], "XQ_MARCH=-march=%s", level);
        snprintf(arch, sizeof arch, "XQ_ARCH=%s", level);
        char *sh[] = {"sh", "-c", s->build, NULL};
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "$ %s   (commit %s, %s, XQ_ARCH=%s)\n", s->build, s->commit_id, host, level);
            fclose(f);
        }
        rc = run_cmd(tree, sh, envs, n, arch, s->build_timeout_s, log, NULL, 0);
    }
    char bin[sizeof tree + JOB_TEXT_MAX];
    snprintf(bin, sizeof bin, "%s/%s", tree, s->binary);
    if (rc == 0 && !is_program(bin)) {
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "xqforge: the build ended well but made no program %s\n", s->binary);
            fclose(f);
        }
        rc = 1;
    }
    double secs = now_s() - t0;
    char line[JOB_TEXT_MAX + 512];
    if (rc != 0) {
        log_tail(log, tail, sizeof tail);
        char what[64];
        if (rc == -2)
            snprintf(what, sizeof what, "ran past build_timeout = %d s", s->build_timeout_s);
        else
            snprintf(what, sizeof what, "failed (exit status %d)", rc);
        snprintf(why, why_len, "engine '%s': the build of commit %.12s %s; the end of its log:\n%s",
                 name, s->commit_id, what, tail);
        // Recorded, so the ranks waiting for this build fail with the same reason.
        files_write_atomic(failed, why, strlen(why));
        snprintf(line, sizeof line, "FAILED %s engine %s commit %s on %s after %.1f s", entry, name,
                 s->commit_id, host, secs);
        note_build(cache, line);
        remove_tree(tmp);
        return false;
    }
    // What the build made, by content: every later use checks the binary against it.
    char info[JOB_TEXT_MAX * 2 + 700], info_path[sizeof tree + 32];
    char bin_sha[JOB_NET_HASH_MAX] = "", log_sha[JOB_NET_HASH_MAX] = "";
    sha256_file(bin, bin_sha);
    sha256_file(log, log_sha);
    snprintf(info, sizeof info,
             "commit %s\ntree %s\nbuild %s\ncompiler %s\nlevel %s\nhost %s\nseconds %.1f\n"
             "binary_sha256 %s\nlog_sha256 %s\n",
             s->commit_id, s->tree_id, s->build, s->compiler, level, host, secs, bin_sha, log_sha);
    snprintf(info_path, sizeof info_path, "%s/.xqforge-build", tree);
    files_write_atomic(info_path, info, strlen(info));
    // The log inside the entry, beside what it built.
    snprintf(info_path, sizeof info_path, "%s/.xqforge-build.log", tree);
    rename(log, info_path);
    // Installed whole by one rename: a reader sees no entry or a finished one.
    if (rename(tree, entry) != 0 && !is_program(bin)) {
        snprintf(why, why_len, "engine '%s': cannot install the build into %s: %s", name, entry,
                 strerror(errno));
        remove_tree(tmp);
        return false;
    }
    snprintf(line, sizeof line, "built %s engine %s commit %s on %s level %s in %.1f s", entry,
             name, s->commit_id, host, level, secs);
    note_build(cache, line);
    remove_tree(tmp);
    return true;
}

// ---- SHA-256 (FIPS 180-4), for nets: fishtest names a net by its first 12 hex digits ----

static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) +
                      ((v[4] & v[5]) ^ (~v[4] & v[6])) + SHA_K[i] + w[i];
        uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) +
                      ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

/// The sha256 of a file in lower-case hex; false when it cannot be read.
static bool sha256_file(const char *path, char hex[JOB_NET_HASH_MAX])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    uint8_t buf[64 * 1024 + 128];
    uint64_t total = 0;
    size_t n;
    while ((n = fread(buf, 1, 64 * 1024, f)) == 64 * 1024) {
        for (size_t i = 0; i < n; i += 64)
            sha_block(h, buf + i);
        total += n;
    }
    bool ok = !ferror(f);
    fclose(f);
    total += n;
    // The last blocks: the rest, 0x80, zeros, the length in bits (big-endian).
    size_t full = n / 64 * 64;
    for (size_t i = 0; i < full; i += 64)
        sha_block(h, buf + i);
    size_t rest = n - full;
    memmove(buf, buf + full, rest);
    buf[rest++] = 0x80;
    size_t padded = rest <= 56 ? 64 : 128;
    memset(buf + rest, 0, padded - rest);
    for (int i = 0; i < 8; i++)
        buf[padded - 1 - i] = (uint8_t)((total * 8) >> (8 * i));
    for (size_t i = 0; i < padded; i += 64)
        sha_block(h, buf + i);
    for (int i = 0; i < 8; i++)
        snprintf(hex + 8 * i, 9, "%08x", h[i]);
    return ok;
}

/// Copies src to dst through a temporary file and a rename (readers see none or all of it).
static bool copy_file(const char *src, const char *dst)
{
    char tmp[JOB_TEXT_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", dst, (long)getpid());
    FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    char buf[65536];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    ok = ok && !ferror(in);
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = false;
    if (ok && rename(tmp, dst) == 0)
        return true;
    remove(tmp);
    return false;
}

bool engine_build_sha256(const char *path, char hex[JOB_NET_HASH_MAX])
{
    return sha256_file(path, hex);
}

/// net = FILE: hashed, refused when net_sha256 is not its prefix, kept in the cache as
/// nets/nn-<sha256[:12]>.nnue, and given to the engine as option EvalFile.
static bool net_one(JobPlayer *jp, JobSource *s, const char *cache, char *why, size_t why_len)
{
    const char *name = jp->cfg.name;
    if (!sha256_file(s->net, s->net_hash)) {
        snprintf(why, why_len, "engine '%s': net %s: %s", name, s->net, strerror(errno));
        return false;
    }
    if (s->net_expect[0] && strncmp(s->net_hash, s->net_expect, strlen(s->net_expect))) {
        snprintf(why, why_len,
                 "engine '%s': net %s has sha256 %.12s..., not the expected %s (net_sha256)", name,
                 s->net, s->net_hash, s->net_expect);
        return false;
    }
    char dir[JOB_TEXT_MAX + 8], path[JOB_TEXT_MAX + 40];
    snprintf(dir, sizeof dir, "%s/nets", cache);
    snprintf(path, sizeof path, "%s/nn-%.12s.nnue", dir, s->net_hash);
    if (files_mkdir_p(dir) != 0 || (access(path, R_OK) != 0 && !copy_file(s->net, path))) {
        snprintf(why, why_len, "engine '%s': cannot keep the net in %s: %s", name, dir,
                 strerror(errno));
        return false;
    }
    PlayerConfig *pc = &jp->cfg;
    for (int i = 0; i < pc->option_count; i++)
        if (!strcasecmp(pc->options[i].name, "EvalFile"))
            return true; // the job's own EvalFile wins
    if (pc->option_count == PLAYER_OPTIONS_MAX) {
        snprintf(why, why_len, "engine '%s': no room for option EvalFile", name);
        return false;
    }
    PlayerOption *o = &pc->options[pc->option_count++];
    snprintf(o->name, sizeof o->name, "EvalFile");
    char abs[PATH_MAX];
    copy_text(o->value, sizeof o->value, realpath(path, abs) ? abs : path);
    return true;
}

// ---- Building and the cache -----------------------------------------------------------------

/// Takes the entry's lock, waiting while another rank builds it (up to its time limit).
static bool lock_wait(const char *path, int timeout_s, FilesLock *lock, char *why, size_t len)
{
    double end = now_s() + timeout_s + 120;
    FilesLockHolder holder;
    while (files_lock(path, lock, &holder) != 0) {
        if (errno != EWOULDBLOCK || now_s() > end) {
            snprintf(why, len, "cannot lock %s: %s", path,
                     errno == EWOULDBLOCK ? "its build takes too long" : strerror(errno));
            return false;
        }
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/// Whether an entry's binary is the file its build made: its sha256 against the one the build
/// recorded (an entry without one, or a file changed since, is not); false with why.
static bool entry_intact(const char *entry, const char *bin, char *why, size_t why_len)
{
    char path[JOB_TEXT_MAX + 64], text[8192], want[JOB_NET_HASH_MAX] = "", got[JOB_NET_HASH_MAX];
    snprintf(path, sizeof path, "%s/.xqforge-build", entry);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
    const char *at = strstr(text, "\nbinary_sha256 ");
    if (at && sscanf(at + 15, "%64[0-9a-f]", want) == 1 && strlen(want) == 64 &&
        sha256_file(bin, got) && !strcmp(want, got))
        return true;
    if (!want[0] || strlen(want) != 64)
        snprintf(why, why_len, "no sha256 of it was recorded by its build");
    else
        snprintf(why, why_len, "its sha256 is %.12s..., its build recorded %.12s...", got, want);
    return false;
}

/// A cache entry whose binary changed: moved aside (kept for whoever looks into it, never run)
/// so that the build makes a fresh one under the same key.
static void entry_move_aside(const char *name, const char *entry, const char *bin,
                             const char *changed)
{
    char aside[JOB_TEXT_MAX + 96];
    snprintf(aside, sizeof aside, "%s.changed-%ld-%ld", entry, (long)time(NULL), (long)getpid());
    bool moved = rename(entry, aside) == 0;
    printf("build: engine %s: the cached binary %s changed after its build (%s): %s, built "
           "again\n",
           name, bin, changed, moved ? "moved aside" : "removed");
    if (!moved)
        remove_tree(entry);
}

/// One source engine: from the cache, or built by this rank under the entry's lock. A cached
/// binary is checked against the sha256 its build recorded on every use: one changed since
/// (by hand, by another user, a disk fault) is never run but built again.
static bool build_one(JobPlayer *jp, JobSource *s, const char *cache, const char *level,
                      time_t started, bool say, char *why, size_t why_len)
{
    const char *name = jp->cfg.name;
    compiler_version(s, s->compiler, sizeof s->compiler);
    char entry[JOB_TEXT_MAX + 32], lock_path[sizeof entry + 8], failed[sizeof entry + 8],
        bin[sizeof entry + JOB_TEXT_MAX];
    snprintf(entry, sizeof entry, "%s/%016llx", cache, (unsigned long long)build_key(s, level));
    snprintf(lock_path, sizeof lock_path, "%s.lock", entry);
    snprintf(failed, sizeof failed, "%s.failed", entry);
    snprintf(bin, sizeof bin, "%s/%s", entry, s->binary);
    double t0 = now_s();
    bool built = false, waited = false, ok = true;
    char changed[160];
    if (!is_program(bin) || !entry_intact(entry, bin, changed, sizeof changed)) {
        FilesLock lock;
        if (!lock_wait(lock_path, s->build_timeout_s, &lock, why, why_len))
            return false;
        struct stat sb;
        bool present = is_program(bin);
        if (present && entry_intact(entry, bin, changed, sizeof changed)) {
            waited = true; // another rank of this node type built it meanwhile
        } else if (!present && stat(failed, &sb) == 0 && sb.st_mtime >= started) {
            // This run's build failed on another rank: the same reason, no second try.
            FILE *f = fopen(failed, "r");
            size_t n = f ? fread(why, 1, why_len - 1, f) : 0;
            why[n] = '\0';
            if (f)
                fclose(f);
            ok = false;
        } else {
            if (present || stat(entry, &sb) == 0)
                entry_move_aside(name, entry, bin, present ? changed : "no binary in it");
            ok = built = build_into(name, s, level, cache, entry, failed, why, why_len);
        }
        files_unlock(&lock);
    }
    if (!ok)
        return false;
    char abs[PATH_MAX]; // realpath writes up to PATH_MAX bytes
    copy_text(jp->cfg.cmd, sizeof jp->cfg.cmd, realpath(bin, abs) ? abs : bin);
    if (say)
        printf("build: engine %s, commit %.12s, %s: %s in %.1f s (%s)\n", name, s->commit_id, level,
               built    ? "built"
               : waited ? "built by another rank"
                        : "from the cache",
               now_s() - t0, entry);
    return true;
}

bool engine_build_all(JobConfig *job, bool say, char *why, size_t why_len)
{
    if (!engine_build_any(job))
        return true;
    char cache[JOB_TEXT_MAX];
    engine_build_cache_dir(job, cache, sizeof cache);
    struct stat sb;
    if (files_mkdir_p(cache) != 0 || stat(cache, &sb) != 0) {
        snprintf(why, why_len, "build cache %s: %s", cache, strerror(errno));
        return false;
    }
    // Its binaries are run: a cache others can write is refused, as a fleet's queue is.
    if (sb.st_uid != geteuid() || (sb.st_mode & 022)) {
        snprintf(why, why_len,
                 "build cache %s is refused: owner uid %u, mode %04o: a build cache must be "
                 "its user's and writable by them alone (its binaries are run)",
                 cache, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777));
        return false;
    }
    const char *level = engine_build_cpu_level();
    time_t started = time(NULL);
    for (int i = 0; i < job->player_count; i++) {
        JobPlayer *jp = &job->players[i];
        JobSource *s = &job->sources[i];
        if (!s->source[0])
            continue;
        if (!build_one(jp, s, cache, level, started, say, why, why_len))
            return false;
        if (s->net[0] && !net_one(jp, s, cache, why, why_len))
            return false;
    }
    return true;
}

/// The last count after one of n marks in a bench's output; 0 when none.
static uint64_t bench_parse(const char *out, const char *const *marks, size_t n)
{
    uint64_t sig = 0;
    for (size_t m = 0; m < n; m++)
        for (const char *p = out; (p = strstr(p, marks[m])); p++) {
            const char *q = p + strlen(marks[m]);
            q += strspn(q, " \t:");
            if (*q >= '0' && *q <= '9')
                sig = strtoull(q, NULL, 10);
        }
    return sig;
}

bool engine_build_bench(const JobConfig *job, uint64_t sig[JOB_PLAYERS_MAX],
                        uint64_t nps[JOB_PLAYERS_MAX], char *why, size_t why_len)
{
    static const char *const sig_marks[] = {"Nodes searched", "Bench:"};
    static const char *const nps_marks[] = {"Nodes/second", "nodes/second"};
    for (int i = 0; i < JOB_PLAYERS_MAX; i++)
        sig[i] = nps[i] = 0;
    for (int i = 0; i < job->player_count; i++) {
        const JobPlayer *jp = &job->players[i];
        const JobSource *s = &job->sources[i];
        if (!s->source[0] || s->bench_mode == JOB_BENCH_NONE)
            continue;
        char words[JOB_BUILD_TEXT_MAX], *argv[34] = {(char *)jp->cfg.cmd};
        int argc = 1;
        snprintf(words, sizeof words, "%s", s->bench_cmd);
        for (char *save, *w = strtok_r(words, " \t", &save); w && argc < 33;
             w = strtok_r(NULL, " \t", &save))
            argv[argc++] = w;
        argv[argc] = NULL;
        char *out = malloc(OUT_MAX), dir[PLAYER_TEXT_MAX];
        if (!out) {
            snprintf(why, why_len, "out of memory");
            return false;
        }
        snprintf(dir, sizeof dir, "%s", jp->cfg.cmd);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        int rc =
            run_cmd(slash ? dir : NULL, argv, NULL, 0, NULL, BENCH_TIMEOUT, NULL, out, OUT_MAX);
        sig[i] = bench_parse(out, sig_marks, 2);
        nps[i] = bench_parse(out, nps_marks, 2);
        free(out);
        if (rc != 0 || !sig[i]) {
            snprintf(why, why_len, "engine '%s': `%s %s` %s (bench = none skips the check)",
                     jp->cfg.name, s->binary, s->bench_cmd,
                     rc ? "failed" : "printed no 'Nodes searched' or 'Bench:' count");
            return false;
        }
    }
    return true;
}

// ---- What the report says about the code --------------------------------------------------

/// Replaces every {name} in tmpl by value.
static void render(char *out, size_t cap, const char *tmpl, const char *const names[],
                   const char *const values[], int n)
{
    size_t len = 0;
    out[0] = '\0';
    for (const char *p = tmpl; *p && len + 1 < cap;) {
        int k = 0;
        while (k < n && strncmp(p, names[k], strlen(names[k])))
            k++;
        const char *add = k < n ? values[k] : p;
        size_t take = k < n ? strlen(add) : 1;
        if (take > cap - 1 - len)
            take = cap - 1 - len;
        memcpy(out + len, add, take);
        len += take;
        out[len] = '\0';
        p += k < n ? strlen(names[k]) : 1;
    }
}

void engine_build_code(const JobConfig *job, EngineBuildCode *code)
{
    memset(code, 0, sizeof *code);
    code->base = code->head = -1;
    for (int i = 0; i < job->player_count; i++) {
        const JobSource *s = &job->sources[i];
        if (!s->commit_id[0])
            continue;
        // Resolved once on rank 0 (engine_build_resolve); asked again only for a job that was not.
        if (s->subject[0])
            copy_text(code->subject[i], sizeof code->subject[i], s->subject);
        else
            commit_subject(s, code->subject[i], sizeof code->subject[i]);
        if (code->base < 0)
            code->base = i;
        else if (code->head < 0 && !strcmp(job->sources[code->base].source, s->source))
            code->head = i;
    }
    // Two engines: new (players[0]) is the head, base the base, whatever the file's order.
    if (job->roles != JOB_ROLES_NONE && code->base == 0 && code->head == 1)
        code->base = 1, code->head = 0;
    if (code->head < 0)
        return;
    const JobSource *b = &job->sources[code->base], *h = &job->sources[code->head];
    char range[2 * JOB_GIT_ID_MAX + 4];
    snprintf(range, sizeof range, "%s..%s", b->commit_id, h->commit_id);
    char *log[] = {"git", "-C", (char *)b->source, "log", "--format=%h %s", range, NULL};
    char *stat[] = {"git",
                    "-C",
                    (char *)b->source,
                    "diff",
                    "--stat",
                    (char *)b->commit_id,
                    (char *)h->commit_id,
                    NULL};
    run_cmd(NULL, log, NULL, 0, "GIT_ALLOW_PROTOCOL=file", GIT_TIMEOUT, NULL, code->log,
            sizeof code->log);
    run_cmd(NULL, stat, NULL, 0, "GIT_ALLOW_PROTOCOL=file", GIT_TIMEOUT, NULL, code->stat,
            sizeof code->stat);
    if (job->build.diff_url[0]) {
        // {repo}: the repository directory's name, without a bare mirror's ".git".
        char abs[PATH_MAX], name[256];
        const char *dir = realpath(b->source, abs) ? abs : b->source;
        const char *last = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
        copy_text(name, sizeof name, last);
        size_t n = strlen(name);
        if (n > 4 && !strcmp(name + n - 4, ".git"))
            name[n - 4] = '\0';
        const char *repo = name;
        const char *names[] = {"{repo}", "{base}", "{new}"};
        const char *values[] = {repo, b->commit_id, h->commit_id};
        render(code->url, sizeof code->url, job->build.diff_url, names, values, 3);
    }
}
