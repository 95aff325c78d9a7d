// SPDX-License-Identifier: MIT
// INI files over libinih: the whole file is read under a size cap, then handed to
// ini_parse_stream by line_reader (our fgets), which counts lines, refuses over-long lines,
// strips indentation and reports section headers before inih sees them. Also the value rules,
// overrides and file-relative paths (inifile.h).
#include "inifile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "files.h"

typedef struct {
    const IniHandlers *h;
    const char *buf; // the file
    size_t pos, len;
    int line;     // of the line last read
    IniStatus st; // the first error
    int err_line; // and its line
    char *why;
    size_t why_len;
} Reader;

const char *inifile_strerror(IniStatus st)
{
    static const char *const text[INIFILE_STATUS_NB] = {
        "ok",      "cannot read the file", "file too large", "syntax error",
        "stopped", "bad override",         "bad value",      "out of memory"};
    return (unsigned)st < INIFILE_STATUS_NB ? text[st] : "unknown ini status";
}

/// Records the first error of the file at the current line.
__attribute__((format(printf, 3, 4))) static void reader_fail(Reader *r, IniStatus st,
                                                              const char *fmt, ...)
{
    if (r->st != INIFILE_OK)
        return;
    r->st = st;
    r->err_line = r->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, r->why_len, fmt, ap);
    va_end(ap);
}

/// A section header goes to the caller before inih sees it, so an empty section counts too.
static bool header_check(Reader *r, const char *line)
{
    const char *end = strchr(line, ']');
    if (!end)
        return true; // inih reports the syntax error
    char raw[INIFILE_LINE_MAX + 1];
    snprintf(raw, sizeof raw, "%.*s", (int)(end - line - 1), line + 1);
    // A handler stops the parse by returning false; the error is its own to record (with
    // this line), so STOPPED carries no text of ours.
    if (r->h->section && !r->h->section(r->h->user, r->line, raw)) {
        r->st = INIFILE_ERR_STOPPED;
        r->err_line = r->line;
        return false;
    }
    if (strlen(raw) > INIFILE_NAME_MAX) {
        reader_fail(r, INIFILE_ERR_SYNTAX, "section name longer than %d characters",
                    INIFILE_NAME_MAX);
        return false;
    }
    return true;
}

/// inih's fgets: the next line of the buffer, indentation removed, checked for length.
static char *line_reader(char *str, int num, void *stream)
{
    Reader *r = stream;
    if (r->st != INIFILE_OK || r->pos >= r->len)
        return NULL;
    const char *line = r->buf + r->pos, *nl = memchr(line, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - line) : r->len - r->pos;
    r->pos += n + (nl != NULL);
    r->line++;
    // Room for the line, the '\n' and the NUL in inih's buffer; a longer line is refused whole,
    // never cut into two.
    if (n > INIFILE_LINE_MAX || n + 2 > (size_t)num) {
        reader_fail(r, INIFILE_ERR_SYNTAX, "line too long (%zu characters, at most %d)", n,
                    INIFILE_LINE_MAX);
        return NULL;
    }
    while (n && (*line == ' ' || *line == '\t'))
        line++, n--;
    memcpy(str, line, n);
    // fgets's form, which inih expects: the newline kept.
    str[n] = '\n';
    str[n + 1] = '\0';
    if (*line == '[' && !header_check(r, str))
        return NULL;
    // A key longer than a name may be is refused here, with its line, not cut short later.
    size_t key = strcspn(str, "=:");
    if (*line != '[' && *line != '#' && *line != ';' && str[key] && key > INIFILE_NAME_MAX) {
        reader_fail(r, INIFILE_ERR_SYNTAX, "key longer than %d characters", INIFILE_NAME_MAX);
        return NULL;
    }
    return str;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    Reader *r = user;
    // After the first error nothing more reaches the caller.
    if (r->st != INIFILE_OK)
        return 0;
    if (!r->h->key(r->h->user, r->line, section, name, value)) {
        r->st = INIFILE_ERR_STOPPED;
        r->err_line = r->line;
        return 0;
    }
    return 1;
}

/// Reads the whole file, refusing more than INIFILE_SIZE_MAX bytes and NUL bytes.
static IniStatus read_all(Reader *r, const char *path, char **out)
{
    FILE *f = files_open_regular(path); // a FIFO in the job's place is refused, not waited on
    if (!f)
        return reader_fail(r, INIFILE_ERR_IO, "cannot open: %s",
                           errno == EINVAL ? "not a regular file" : strerror(errno)),
               r->st;
    // One byte past the cap: a file larger than the cap is told from one exactly at it. A NUL
    // would end a C string early, hiding the rest of its line: such a file is not text.
    char *buf = malloc(INIFILE_SIZE_MAX + 1);
    if (!buf) {
        fclose(f);
        return reader_fail(r, INIFILE_ERR_NOMEM, "out of memory"), r->st;
    }
    size_t n = fread(buf, 1, INIFILE_SIZE_MAX + 1, f);
    bool err = ferror(f);
    fclose(f);
    if (err)
        reader_fail(r, INIFILE_ERR_IO, "read error");
    else if (n > INIFILE_SIZE_MAX)
        reader_fail(r, INIFILE_ERR_TOO_BIG, "larger than %d bytes", INIFILE_SIZE_MAX);
    else if (memchr(buf, '\0', n))
        reader_fail(r, INIFILE_ERR_SYNTAX, "not a text file (NUL byte)");
    if (r->st != INIFILE_OK) {
        free(buf);
        return r->st;
    }
    *out = buf;
    r->len = n;
    return INIFILE_OK;
}

IniStatus inifile_parse(const char *path, const IniHandlers *h, int *line, char *why,
                        size_t why_len)
{
    char spare[8];
    Reader r = {.h = h, .why = why_len ? why : spare, .why_len = why_len ? why_len : sizeof spare};
    r.why[0] = '\0';
    char *buf = NULL;
    if (read_all(&r, path, &buf) == INIFILE_OK) {
        r.buf = buf;
        int bad = ini_parse_stream(line_reader, &r, on_key, &r);
        // inih reports the first line it finds wrong; ours may be earlier or later: the earlier
        // one is the error reported.
        if (bad > 0 && (r.st == INIFILE_OK || bad < r.err_line)) {
            // inih's own error (no '=' or no ']') came first
            r.st = INIFILE_OK;
            r.line = bad;
            reader_fail(&r, INIFILE_ERR_SYNTAX, "expected 'key = value' or '[section]'");
        } else if (bad < 0 && r.st == INIFILE_OK) {
            reader_fail(&r, INIFILE_ERR_NOMEM, "out of memory");
        }
        free(buf);
    }
    if (line)
        *line = r.st == INIFILE_OK ? 0 : r.err_line;
    return r.st;
}

// ---- Overrides ----------------------------------------------------------------------------

IniStatus inifile_override(const char *text, const char *named, IniOverride *out, char *why,
                           size_t why_len)
{
    memset(out, 0, sizeof *out);
    // The first '=' ends the key: the value may hold '=' and '.' (a URL, an option's text).
    const char *eq = strchr(text, '='), *dot = strchr(text, '.');
    if (!eq || !dot || dot > eq || strlen(text) > INIFILE_LINE_MAX) {
        snprintf(why, why_len, "expected section.key=value (at most %d characters)",
                 INIFILE_LINE_MAX);
        return INIFILE_ERR_OVERRIDE;
    }
    snprintf(out->section, sizeof out->section, "%.*s", (int)(dot - text), text);
    const char *k = dot + 1;
    // named (engine): its overrides carry a name, named.NAME.key, giving the section "named NAME".
    if (named && !strcmp(out->section, named)) {
        const char *dot2 = strchr(k, '.');
        if (!dot2 || dot2 > eq) {
            snprintf(why, why_len, "expected %s.NAME.key=value", named);
            return INIFILE_ERR_OVERRIDE;
        }
        snprintf(out->name, sizeof out->name, "%.*s", (int)(dot2 - k), k);
        if (snprintf(out->section, sizeof out->section, "%s %s", named, out->name) >=
            (int)sizeof out->section) {
            snprintf(why, why_len, "section name too long");
            return INIFILE_ERR_OVERRIDE;
        }
        k = dot2 + 1;
    }
    if (eq == k || eq - k > INIFILE_NAME_MAX) {
        snprintf(why, why_len, "a key has 1..%d characters", INIFILE_NAME_MAX);
        return INIFILE_ERR_OVERRIDE;
    }
    snprintf(out->key, sizeof out->key, "%.*s", (int)(eq - k), k);
    out->value = eq + 1;
    return INIFILE_OK;
}

// ---- Paths --------------------------------------------------------------------------------

IniStatus inifile_dir(const char *path, char *out, size_t cap, char *why, size_t why_len)
{
    const char *slash = strrchr(path, '/');
    char *parent = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!parent)
        return snprintf(why, why_len, "out of memory"), INIFILE_ERR_NOMEM;
    // Resolved once: inifile_path can then pop ".." as text, and the paths stay right whatever
    // the working directory later is.
    char *real = realpath(parent, NULL);
    IniStatus st = INIFILE_OK;
    if (!real) {
        snprintf(why, why_len, "cannot resolve the directory %s: %s", parent, strerror(errno));
        st = INIFILE_ERR_IO;
    } else if (snprintf(out, cap, "%s", real) >= (int)cap) {
        snprintf(why, why_len, "the directory %s is longer than %zu characters", real, cap - 1);
        st = INIFILE_ERR_VALUE;
    }
    free(real);
    free(parent);
    return st;
}

/// Removes the last component of an absolute directory ("/" stays "/").
static void dir_up(char *dir)
{
    char *s = strrchr(dir, '/');
    if (s == dir)
        dir[1] = '\0';
    else if (s)
        *s = '\0';
}

IniStatus inifile_path(const char *dir, const char *value, char *out, size_t cap, char *why,
                       size_t why_len)
{
    // Absolute, empty, or no directory to take it from: kept as written.
    if (!dir || !dir[0] || !value[0] || value[0] == '/')
        return inifile_text(out, cap, value, why, why_len) ? INIFILE_OK : INIFILE_ERR_VALUE;
    if (!inifile_text(out, cap, dir, why, why_len))
        return INIFILE_ERR_VALUE;
    // dir is a real path (no symlink, "." or ".."), so its components can be popped safely.
    const char *v = value;
    for (;;) {
        if (v[0] == '/')
            v++;
        else if (v[0] == '.' && (v[1] == '/' || !v[1]))
            v++;
        else if (v[0] == '.' && v[1] == '.' && (v[2] == '/' || !v[2]))
            dir_up(out), v += 2;
        else
            break;
    }
    size_t n = strlen(out);
    if (*v &&
        snprintf(out + n, cap - n, "%s%s", out[n - 1] == '/' ? "" : "/", v) >= (int)(cap - n)) {
        snprintf(why, why_len, "'%s' taken from %s is longer than %zu characters", value, dir,
                 cap - 1);
        return INIFILE_ERR_VALUE;
    }
    return INIFILE_OK;
}

// ---- Values -------------------------------------------------------------------------------

bool inifile_long(const char *v, long lo, long hi, long *out, char *why, size_t why_len)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    // Nothing but the number: strtol would skip leading blanks, and a trailing word would be
    // dropped silently.
    if (end == v || *end != '\0' || errno == ERANGE || isspace((unsigned char)*v)) {
        snprintf(why, why_len, "'%s' is not an integer", v);
        return false;
    }
    if (n < lo || n > hi) {
        snprintf(why, why_len, "%ld is out of range %ld..%ld", n, lo, hi);
        return false;
    }
    *out = n;
    return true;
}

bool inifile_double(const char *v, double lo, double hi, double *out, char *why, size_t why_len)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    // As inifile_long; inf and nan are no value a job means.
    if (end == v || *end != '\0' || errno == ERANGE || !isfinite(d) || isspace((unsigned char)*v)) {
        snprintf(why, why_len, "'%s' is not a number", v);
        return false;
    }
    if (d < lo || d > hi) {
        snprintf(why, why_len, "%g is out of range %g..%g", d, lo, hi);
        return false;
    }
    *out = d;
    return true;
}

bool inifile_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                                "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
            *out = !strcmp(v, yes[i]);
            return true;
        }
    }
    return false;
}

/// The continuation bytes a UTF-8 sequence starting with c has (RFC 3629), -1 if none may.
static int utf8_tail(unsigned char c)
{
    return c < 0x80                 ? 0
           : c >= 0xc2 && c <= 0xdf ? 1
           : c >= 0xe0 && c <= 0xef ? 2
           : c >= 0xf0 && c <= 0xf4 ? 3
                                    : -1;
}

bool inifile_utf8(const char *v, char *why, size_t why_len)
{
    const unsigned char *s = (const unsigned char *)v;
    for (size_t i = 0; s[i];) {
        unsigned char c = s[i], d = s[i + 1];
        int n = utf8_tail(c);
        bool ok = n >= 0;
        for (int k = 1; ok && k <= n; k++)
            ok = (s[i + k] & 0xc0) == 0x80; // stops at the NUL too
        // The second byte's range excludes overlong forms, surrogates and > U+10FFFF.
        if (ok && n == 2)
            ok = !(c == 0xe0 && d < 0xa0) && !(c == 0xed && d > 0x9f);
        if (ok && n == 3)
            ok = !(c == 0xf0 && d < 0x90) && !(c == 0xf4 && d > 0x8f);
        if (!ok) {
            snprintf(why, why_len, "not UTF-8 text (byte 0x%02x at position %zu)", c, i + 1);
            return false;
        }
        i += (size_t)n + 1;
    }
    return true;
}

bool inifile_text(char *dst, size_t cap, const char *v, char *why, size_t why_len)
{
    if (snprintf(dst, cap, "%s", v) >= (int)cap) {
        snprintf(why, why_len, "value longer than %zu characters", cap - 1);
        return false;
    }
    return true;
}
