#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes a book job's EPD output (generated from the start position: no seed_book) as the C
# source of an embedded opening set, one "startpos moves ..." line per position (the moves come
# from each EPD line's c0 comment), so engines that cannot load a FEN can play them too.
# usage: scripts/embed-book.sh BOOK.epd [NAME] > games/openings_NAME.c   (NAME: unbalanced)
set -euo pipefail
epd=${1:?usage: embed-book.sh BOOK.epd [NAME]}
name=${2:-unbalanced}
[[ $name =~ ^[a-z_]+$ ]] || { echo "embed-book.sh: '$name': a C identifier in lower case" >&2; exit 2; }
n=$(grep -c . "$epd")
missing=$(grep -vc ' c0 "' "$epd" || true)
[[ $missing -eq 0 ]] || { echo "embed-book.sh: $epd: $missing lines without a c0 move list" >&2; exit 1; }
cat <<HDR
// SPDX-License-Identifier: MIT
// The embedded opening set builtin:$name, $n lines from the start position where the side
// to move is 60..150 cp ahead by a depth-8 search, none in check, no two the same position or
// left-right mirrors, at most 8 lines per opening family (first 2 plies). Given as moves, so
// engines that cannot load a FEN (MaxQi) can play them too. Data, generated with xqforge's own
// engine: xqforge run jobs/book-unbalanced.ini, then
// scripts/embed-book.sh out/book-unbalanced/book.epd > games/openings_$name.c
// clang-format off
#include "openings.h"

const char *const openings_${name}_lines[] = {
HDR
sed -n 's/.* c0 "\([a-i0-9 ]*\)";.*/    "startpos moves \1",/p' "$epd"
cat <<FTR
};
const int openings_${name}_count =
    sizeof openings_${name}_lines / sizeof openings_${name}_lines[0];
// clang-format on
FTR
