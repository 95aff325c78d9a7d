// SPDX-License-Identifier: MIT
// The weight table, generated from params.def: ids, the Weights struct, defaults, ranges, and
// loading/saving a weight set (`name value` per line). The table holds the evaluation weights
// and, last, the search's margins and time factors (search_params.def).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
#define PARAM(name, def, lo, hi, step) P_##name,
#include "params.def"
#undef PARAM
    PARAM_NB
} ParamId;

/// The rows of search_params.def, which params.def includes last: ids PARAM_SEARCH_FIRST on.
enum {
    PARAM_SEARCH_NB = 0
#define PARAM(name, def, lo, hi, step) +1
#include "search_params.def"
#undef PARAM
    ,
    PARAM_SEARCH_FIRST = PARAM_NB - PARAM_SEARCH_NB
};

typedef struct {
    const char *name;
    int def, min, max, step;
} ParamInfo;

typedef struct {
    int32_t v[PARAM_NB];
} Weights;

typedef enum {
    PARAMS_OK,
    PARAMS_ERR_UNKNOWN, // no weight of that name
    PARAMS_ERR_VALUE,   // not an integer, or outside [min, max]
    PARAMS_ERR_SYNTAX,  // a line of a weights file is not `name value`
    PARAMS_ERR_IO,      // the file cannot be read or written
    PARAMS_STATUS_NB
} ParamsStatus;

extern const ParamInfo params_info[PARAM_NB];

const char *params_strerror(ParamsStatus st);
void weights_default(Weights *w);
/// The id of a weight by name, or -1.
int params_find(const char *name);
/// Piece-square weights are many; protocol front ends may leave them out of option lists.
bool params_is_psq(int id);
/// Search margins and time factors (search_*, tm_*): the evaluation never reads them.
bool params_is_search(int id);
/// True when a params list names search rows ("search" or a search row's name); the first
/// such word is copied to word. Texel's callers refuse those lists.
bool params_list_names_search(const char *list, char *word, size_t len);
ParamsStatus weights_set(Weights *w, const char *name, const char *value);
/// Reads `name value` lines ('#' starts a comment); on error names the line in why.
/// Weights not in the file keep their values; w is unchanged if any line is bad.
ParamsStatus weights_load(Weights *w, const char *path, char *why, size_t why_len);
/// Writes every weight, one `name value` line each, atomically (temp file + rename).
ParamsStatus weights_save(const Weights *w, const char *path);

typedef enum {
    PARAMS_LIST_OK,
    PARAMS_LIST_EMPTY,    // no word at all
    PARAMS_LIST_UNKNOWN,  // a word names no weight (it is in bad)
    PARAMS_LIST_STOPPED,  // add refused a weight (the caller says why)
    PARAMS_LIST_TOO_LONG, // over 4095 characters
} ParamsListStatus;

/// The one reader of weight lists (SPSA's and Texel's `params`, `texel fit --params`): words
/// separated by spaces, tabs or commas, each "all" (every row of the table), "psq" (the
/// piece-square weights), "eval" (the other evaluation weights), "search" (the search and time
/// rows) or a weight's name. Calls add(ctx, id) for the weights of each word in table order (a
/// weight named twice comes twice); add returns false to stop. Texel fits only what the
/// evaluation reads, so its callers drop or refuse the search rows (params_is_search).
ParamsListStatus params_parse_list(const char *list, bool (*add)(void *ctx, int id), void *ctx,
                                   char *bad, size_t bad_len);
