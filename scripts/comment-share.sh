#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the comment share of C files, per file and per folder: (full comment lines + half of the
# lines that end in a trailing comment) / all lines, the measure issue 29 uses against the
# anchors' 10-15%. A blank line inside a /* */ block counts as a comment line; string literals
# holding "//" or "/*" are skipped, character literals are not (none in our code hold them).
# Usage: scripts/comment-share.sh [FILE.c|DIR ...]   (default: every .c under the repo's folders)
set -euo pipefail
if [ $# -eq 0 ]; then set -- $(git ls-files '*.c' | xargs -n1 dirname | sort -u); fi
files=()
for a in "$@"; do
    if [ -d "$a" ]; then
        while IFS= read -r f; do files+=("$f"); done < <(find "$a" -maxdepth 1 -name '*.c' | sort)
    else
        files+=("$a")
    fi
done
awk '
function flush_file() {
    if (fname == "") return
    printf "%-36s %6d lines %5d full %5d trailing %5.1f%%\n", fname, n, full, trail,
           n ? 100 * (full + trail / 2) / n : 0
    d = fname; sub(/\/[^\/]*$/, "", d); if (d == fname) d = "."
    dn[d] += n; df[d] += full; dt[d] += trail
}
FNR == 1 { flush_file(); fname = FILENAME; n = full = trail = 0; inblk = 0 }
{
    n++
    line = $0; code = 0; com = inblk
    i = 1; len = length(line); instr = 0
    while (i <= len) {
        c = substr(line, i, 1); c2 = substr(line, i, 2)
        if (inblk) {
            if (c2 == "*/") { inblk = 0; i += 2; continue }
            i++; continue
        }
        if (instr) {
            if (c == "\\") { i += 2; continue }
            if (c == "\"") instr = 0
            i++; continue
        }
        if (c2 == "//") { com = 1; break }
        if (c2 == "/*") { com = 1; inblk = 1; i += 2; continue }
        if (c == "\"") { instr = 1; code = 1; i++; continue }
        if (c !~ /[ \t]/) code = 1
        i++
    }
    if (com && !code) full++
    else if (com && code) trail++
}
END {
    flush_file()
    print ""
    for (d in dn) { tn += dn[d]; tf += df[d]; tt += dt[d] }
    for (d in dn)
        printf "%-36s %6d lines %5d full %5d trailing %5.1f%%\n", d "/", dn[d], df[d], dt[d],
               100 * (df[d] + dt[d] / 2) / dn[d] | "sort"
    close("sort")
    printf "%-36s %6d lines %5d full %5d trailing %5.1f%%\n", "all", tn, tf, tt,
           tn ? 100 * (tf + tt / 2) / tn : 0
}' "${files[@]}"
