// SPDX-License-Identifier: MIT
// Reading INI files (job files) over libinih, with what libinih leaves to its caller: the
// file is read whole under a size cap and fed to inih line by line by our own reader, which
// numbers the lines (every callback knows its line), refuses a line longer than inih's buffer
// instead of letting inih cut it, strips indentation (an indented line is never a multi-line
// continuation) and reports every section header, even of an empty section. Also here: the
// value rules (integers, numbers, booleans, bounded text), command-line overrides
// ("section.key=value", "engine.NAME.key=value") and paths relative to the file's directory.
// Nothing here knows what the sections and keys mean: that is job.c's.
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum {
    INIFILE_SIZE_MAX = 1 << 20, // bytes; larger files are refused before parsing
    INIFILE_LINE_MAX = 198,     // characters a line (inih's buffer, less newline and NUL)
    INIFILE_NAME_MAX = 49       // characters of a key or section (inih's MAX_NAME less NUL)
};

typedef enum {
    INIFILE_OK,
    INIFILE_ERR_IO,       // the file cannot be read
    INIFILE_ERR_TOO_BIG,  // over INIFILE_SIZE_MAX bytes
    INIFILE_ERR_SYNTAX,   // not INI, a line or key too long, a NUL byte
    INIFILE_ERR_STOPPED,  // a callback returned false (it recorded why)
    INIFILE_ERR_OVERRIDE, // an override is not section.key=value
    INIFILE_ERR_VALUE,    // a value that does not follow its rule
    INIFILE_ERR_NOMEM,
    INIFILE_STATUS_NB
} IniStatus;

/// What the parser calls, in file order; a false return stops the parse (INIFILE_ERR_STOPPED).
typedef struct {
    /// A header "[raw]": raw is the text between the brackets, as written.
    bool (*section)(void *user, int line, const char *raw);
    /// "key = value" under section (inih's section name: the header text, trimmed).
    bool (*key)(void *user, int line, const char *section, const char *key, const char *value);
    void *user;
} IniHandlers;

/// An override split: section "job" and key "rounds" for "job.rounds=3"; for the named
/// section (e.g. "engine"), "engine.NAME.key=value" gives name "NAME" and section
/// "engine NAME", as its header would.
typedef struct {
    char section[INIFILE_LINE_MAX + 1];
    char name[INIFILE_LINE_MAX + 1]; // empty unless the named section
    char key[INIFILE_NAME_MAX + 1];
    const char *value; // points into the override text
} IniOverride;

const char *inifile_strerror(IniStatus st);

/// Parses the file at path through h. On an error of the file itself (not a callback's),
/// *line is where (0: the whole file) and why says what, without the location.
IniStatus inifile_parse(const char *path, const IniHandlers *h, int *line, char *why,
                        size_t why_len);

/// Splits "section.key=value" (at most INIFILE_LINE_MAX characters); named is the one section
/// whose overrides carry a NAME ("engine"), or NULL.
IniStatus inifile_override(const char *text, const char *named, IniOverride *out, char *why,
                           size_t why_len);

/// The absolute directory of the file at path (its parent directory, symlinks resolved).
IniStatus inifile_dir(const char *path, char *out, size_t cap, char *why, size_t why_len);

/// A path written in the file: a relative one is taken from dir (from inifile_dir), with its
/// leading "./" and "../" resolved against it; an absolute or empty one is kept as written.
IniStatus inifile_path(const char *dir, const char *value, char *out, size_t cap, char *why,
                       size_t why_len);

// Values: false with why ("'12x' is not an integer", "5000 is out of range 1..1000").
bool inifile_long(const char *v, long lo, long hi, long *out, char *why, size_t why_len);
bool inifile_double(const char *v, double lo, double hi, double *out, char *why, size_t why_len);
/// true/false, yes/no, on/off, 1/0.
bool inifile_bool(const char *v, bool *out);
/// Whether v is UTF-8 text (strictly: no overlong forms, surrogates or code points above
/// U+10FFFF), as the JSON files it may end up in require; why names the first bad byte.
bool inifile_utf8(const char *v, char *why, size_t why_len);
/// Copies v whole, or refuses it ("value longer than N characters").
bool inifile_text(char *dst, size_t cap, const char *v, char *why, size_t why_len);
