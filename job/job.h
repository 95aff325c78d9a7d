// SPDX-License-Identifier: MIT
// Job files: what a cluster run does, as a commented INI file plus command-line overrides
// ("section.key=value", "engine.NAME.key=value"). This is the job model: its sections and
// keys, their defaults and validation (reading the file is inifile.h's). Engines take the
// settings of `xqforge play -engine` through the same parser (engine_spec.h). Relative paths
// in the file are taken from the file's directory; paths given in overrides stay as typed
// (the shell's current directory). Every error names the file (or the override), the line
// and the key. Sections and keys: jobs/README.md and the comment block of every job in jobs/.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "game.h"
#include "inifile.h"
#include "params.h"
#include "player.h"

enum {
    JOB_PLAYERS_MAX = 8,
    JOB_FILE_MAX = INIFILE_SIZE_MAX, // bytes; larger files are refused before parsing
    JOB_LINE_MAX = INIFILE_LINE_MAX, // characters a line (libinih's buffer)
    JOB_TEXT_MAX = 1024,             // names, paths, URLs
    JOB_NOMINAL_NPS = 1000000,       // job_tc_ratio: a node limit's nodes a second
    JOB_URLS_MAX = 4,
    JOB_SPSA_PARAMS_MAX = 1024,
    // Scheduled units (game pairs, or games without repeat): rounds x pairings. Games (two a
    // pair) then stay below 2^30, so counts of games or pairs never overflow an int.
    JOB_PAIRS_MAX = 1 << 29,
    JOB_TRAIN_DATA_MAX = 16,             // positions files of a train job
    JOB_DATAGEN_POSITIONS_MAX = 1 << 28, // POSDATA_MAX_RECORDS
    JOB_DATAGEN_UNIT_MAX = 16            // games per datagen work unit
};

/// One tuned weight of an SPSA job (fishtest's `name, start, min, max, c_end, r_end`).
typedef struct {
    int id;                               // the engine weight (params.h)
    bool has_start;                       // false: start from the engine's configured value
    double start, min, max, c_end, r_end; // r_end NAN: the section's r_end
} JobSpsaParam;

typedef enum {
    JOB_SPRT,
    JOB_MATCH,
    JOB_SPSA,
    JOB_TEXEL,
    JOB_BOOK,
    JOB_DATAGEN, // NNUE training positions from self-play ([datagen])
    JOB_TRAIN,   // an NNUE net trained on positions files ([train])
    JOB_LOOP,    // generations of datagen, train and a gate SPRT ([loop], job_loop.h)
    JOB_DOE,     // an opening book grown by drop-out expansion ([doe], games/doe.h)
    JOB_KIND_NB
} JobKind;
/// The same order as SprtModel (coordinator/stats.h), so a cast converts.
typedef enum { JOB_SPRT_NORMALIZED, JOB_SPRT_LOGISTIC, JOB_SPRT_MODEL_NB } JobSprtModel;
/// The same order as UploadMethod (coordinator/upload.h), so a cast converts.
typedef enum {
    JOB_REPORT_POST,
    JOB_REPORT_PUT,
    JOB_REPORT_MULTIPART,
    JOB_REPORT_METHOD_NB
} JobReportMethod;

/// How an external engine's bench signature is checked on every rank ([engine NAME] bench).
typedef enum { JOB_BENCH_NONE, JOB_BENCH_AUTO, JOB_BENCH_VALUE } JobBenchMode;

enum {
    JOB_BUILD_ENV_MAX = 8,
    JOB_BUILD_TEXT_MAX = 256, // build_env entries, the compiler's version line
    JOB_GIT_ID_MAX = 41,      // a full git object id (sha1) and its NUL
    JOB_NET_HASH_MAX = 65     // a sha256 in hex and its NUL
};

/// An engine built from a commit ([engine NAME] source, commit, build, binary: engine_build.h).
/// The settings come from the job file; the ids are resolved once on rank 0 and the compiler
/// and net hash found by each rank's build (rank 0's are the identity's).
typedef struct {
    char source[JOB_TEXT_MAX]; // a local git repository (absolute); empty: not built
    char commit[JOB_TEXT_MAX]; // the ref as written
    char build[JOB_TEXT_MAX];  // a shell command run in a clean checkout of the commit
    char binary[JOB_TEXT_MAX]; // the program, relative to the checkout
    char env[JOB_BUILD_ENV_MAX][JOB_BUILD_TEXT_MAX]; // "NAME=VALUE" (build_env.NAME)
    int env_count;
    int build_timeout_s;
    JobBenchMode bench_mode;
    uint64_t bench; // JOB_BENCH_VALUE: the declared signature
    char bench_cmd[JOB_BUILD_TEXT_MAX];
    char net[JOB_TEXT_MAX];            // a net file (absolute); empty: none
    char net_expect[JOB_NET_HASH_MAX]; // an expected hex prefix of its sha256; empty: any
    char commit_id[JOB_GIT_ID_MAX];    // resolved: the full commit id
    char tree_id[JOB_GIT_ID_MAX];      // resolved: its tree
    char subject[JOB_BUILD_TEXT_MAX];  // resolved: the commit's subject line (what is shown)
    char compiler[JOB_BUILD_TEXT_MAX]; // found: the compiler's version line
    char net_hash[JOB_NET_HASH_MAX];   // found: the net's sha256
} JobSource;

typedef struct {
    PlayerConfig cfg;
    TimeControl tc;
} JobPlayer;

/// How a two-engine game job chose its tested engine ("new", players[0]: every figure is its
/// own) and its reference ("base", players[1]). Never the file's order alone when both names
/// exist: a job that writes [engine base] first still measures new.
typedef enum {
    JOB_ROLES_NONE,    // not a two-engine game job (a gauntlet, tuning, books, data)
    JOB_ROLES_NAMED,   // [sprt] new = NAME and/or base = NAME
    JOB_ROLES_NAMES,   // the engines called "new" and "base"
    JOB_ROLES_FIRST,   // neither: the first engine in the file is new (as fastchess's -engine)
    JOB_ROLES_DERIVED, // an SPRT a run makes ([verify], the loop's gate): its tuned side is new
    JOB_ROLES_NB
} JobRoles;

typedef struct {
    JobKind kind;
    char name[JOB_TEXT_MAX];
    char file_dir[JOB_TEXT_MAX]; // the job file's directory, absolute: relative paths written
                                 // in the file (not in overrides) were taken from it
    JobPlayer players[JOB_PLAYERS_MAX];
    int player_count;
    JobSource sources[JOB_PLAYERS_MAX]; // players[i] built from source: sources[i].source set
    // Game rules and adjudication (GameConfig without the time controls)
    RulesConfig rules;
    DrawAdjudication draw;
    ResignAdjudication resign;
    int max_plies; // 0: none
    // Mixed hardware ([time] scale, reference_nps, nps_floor; fishtest's approach): with
    // scale = bench every worker's clock (base, increment, movetime) is multiplied by
    // job_time_scale(reference_nps, its bench nps), so slow and fast ranks search about the
    // same nodes a move. Depth and node limits are not scaled.
    struct {
        bool bench;             // scale = bench (else none)
        uint64_t reference_nps; // required with scale = bench
        uint64_t nps_floor;     // a worker whose bench nps is below is refused; 0: none
    } scale;
    // Openings
    char openings_file[JOB_TEXT_MAX]; // a path or builtin:NAME; empty: builtin:balanced
    bool openings_random;
    int openings_start;  // 0-based (the file says 1-based, as play's start=)
    int openings_format; // an OpeningsFormat: EPD/FEN lines (0, the default) or PGN games
    int openings_plies;  // at most this many moves of each opening; 0: all of them
    uint64_t seed;
    // Limits
    int rounds; // rounds; with repeat each round is a game pair
    bool repeat;
    int concurrency;  // 0: one game per core
    bool round_robin; // with more than two engines: every pairing; else the first engine
                      // against each other one (a gauntlet)
    // The engine the joint rating puts at 0 ([job] anchor); empty: the first engine.
    char anchor[JOB_TEXT_MAX];
    // How a run starts and stops (not part of the experiment): docs in jobs/README.md, Slurm.
    bool resume_auto;       // resume = auto: continue output.dir's journal when there is one
    int drain_grace;        // seconds a signalled run lets the games in progress finish
    bool coordinator_plays; // rank 0 plays too (one rank per node, no core idle)
    // SPRT (enabled exactly when kind is JOB_SPRT)
    struct {
        bool enabled;
        double elo0, elo1, alpha, beta;
        JobSprtModel model;
        // The roles of a two-engine game job (sprt or match), engine names; empty: by rule
        char new_name[JOB_TEXT_MAX], base_name[JOB_TEXT_MAX];
    } sprt;
    // How players[0] (new) and players[1] (base) were chosen; the loader puts new first.
    JobRoles roles;
    struct {
        char dir[JOB_TEXT_MAX]; // a path (from the file: absolute); default "."
        // Plain file names in dir, distinct among the files the kind writes, none of them
        // report.json or report.html
        char pgn[JOB_TEXT_MAX];       // file name in dir; empty: no PGN
        char journal[JOB_TEXT_MAX];   // file name in dir
        char result[JOB_TEXT_MAX];    // file name in dir (JSON)
        char positions[JOB_TEXT_MAX]; // Texel dataset of the games' quiet positions (empty: none)
        // The external engines' protocol lines, per rank and engine (games/englog.h), in dir
        bool engine_log;
        uint64_t engine_log_size; // bytes a log file holds before it rotates
        int pgn_notation;         // a PgnNotation: coordinate (0, the default), iccs, wxf
        int pgn_ranks;            // coordinates in the PGN: ranks 0-9 (0) or 1-10 (1)
    } output;
    struct {
        char urls[JOB_URLS_MAX][JOB_TEXT_MAX];
        int url_count; // 0: no reporting
        JobReportMethod method;
        char token_env[JOB_TEXT_MAX];  // environment variable holding the token
        char token_file[JOB_TEXT_MAX]; // or a file holding it
        int interval_s;                // report.json/html refreshed (and uploaded) this often
        char ca_file[JOB_TEXT_MAX];    // extra CA bundle for https (empty: the system's)
        int connect_timeout_s, timeout_s;
        int attempts;                    // per upload and pass, retries included
        double backoff_s, backoff_max_s; // first retry wait, doubling up to the cap
        double final_wait_s;             // the end of a run waits this long for delivery
        char spool[JOB_TEXT_MAX];        // undelivered reports, relative to output.dir
    } report;
    // Engines built from source ([build]): the cache of builds and nets, and the report's link
    struct {
        char cache[JOB_TEXT_MAX];    // a directory; empty: build-cache beside output.dir
        char diff_url[JOB_TEXT_MAX]; // {repo}, {base}, {new} replaced; empty: no link
    } build;
    // Opening book generation (kind = book): the [book] section, jobs/README.md
    struct {
        int positions;             // accepted positions to reach
        int plies_min, plies_max;  // random plies played from the start position
        int multipv, select_depth; // the shallow search that proposes moves
        int margin;                // cp below the best line that a move may be
        double temperature;        // cp; 0: uniform within the margin, else softmax
        int verify_depth;          // the search that judges a candidate
        int score_min, score_max;  // the window, cp in score_view's view
        double draw_min, draw_max; // the draw-rate window, 0..1 (with wdl_model)
        double abort_margin;       // > 0: verification gives up when the draw rate is this
        int abort_depth;           // far outside the window, from this depth on
        bool either_side;          // also accept the mirrored band (-max..-min)
        bool side_to_move;         // score_view = side_to_move (else red)
        int family_plies;          // a line's opening family: its first plies (0: none)
        int family_cap;            // accepted lines per family at most (0: no cap)
        int unit;                  // candidates per work unit
        int64_t max_candidates;    // give up after this many (0: 100 x positions)
        int hash_mb;               // per generator thread
        uint64_t seed;
        char seed_book[JOB_TEXT_MAX]; // start positions (empty: the start position)
        char existing[JOB_TEXT_MAX];  // positions that must not be emitted again
        char epd[JOB_TEXT_MAX];       // file names in output.dir
        char moves[JOB_TEXT_MAX];     // empty: no weighted move book
        char html[JOB_TEXT_MAX];      // empty: no HTML report
        char wdl_model[JOB_TEXT_MAX]; // a WDL model (tuning/wdl.h); empty: no draw window
    } book;
    // Drop-out expansion (kind = doe): the [doe] section, jobs/README.md, games/doe.h
    struct {
        int64_t nodes;             // positions scored by search before the tree stops growing
        int round;                 // leaves expanded per round (the parallel part)
        double alpha;              // priority per cp of drop-out (Lincke's / Fuego's alpha)
        int width, widen;          // children considered: width + visits / widen
        int depth;                 // the search that scores each child
        int hash_mb;               // per search thread
        int plies_min, plies_max;  // exits from plies_min; no expansion at plies_max
        int score_min, score_max;  // the exits' window, cp, Red's view
        double draw_min, draw_max; // the draw-rate window, 0..1 (with wdl_model)
        int margin;                // cp below the best: a move of the move books
        char root[JOB_TEXT_MAX];   // the tree's root, a FEN as validate writes it; "": the start
        char wdl_model[JOB_TEXT_MAX];
        char epd[JOB_TEXT_MAX]; // file names in output.dir
        char moves[JOB_TEXT_MAX];
        char dat[JOB_TEXT_MAX];
        char tree[JOB_TEXT_MAX];
    } doe;
    // SPSA (kind = spsa): the [spsa] section. Exactly one builtin engine, whose weights give
    // the start of parameters listed by `params`; it plays itself as "plus" and "minus".
    struct {
        JobSpsaParam params[JOB_SPSA_PARAMS_MAX];
        int param_count;
        double a_ratio, alpha, gamma;
        double r_end;                  // for parameters taken from the weight table
        char weights[JOB_TEXT_MAX];    // tuned weights file name in the output dir
        char trajectory[JOB_TEXT_MAX]; // CSV of theta over iterations, in the output dir
    } spsa;
    // Texel fitting (kind = texel): the [texel] section.
    struct {
        char data[JOB_TEXT_MAX];  // dataset file (xqforge texel extract)
        char start[JOB_TEXT_MAX]; // start weights file (empty: the engine's defaults)
        bool tuned[PARAM_NB];     // per weight id: fitted (else held at its start value)
        bool has_params;          // a `params` line was given (else every weight is fitted)
        int epochs, threads;
        double lr, l2, k;           // k 0: fitted
        double val;                 // the fraction of games held out for validation (0: none)
        int checkpoint_every;       // epochs between checkpoints
        double checkpoint_seconds;  // at most this long between them (0: by epochs only)
        char weights[JOB_TEXT_MAX]; // output file names in the output dir
        char loss[JOB_TEXT_MAX];
    } texel;
    // [verify] (spsa and texel jobs, optional): once the tuning is complete, an SPRT of the
    // tuned weights against the start weights on the same ranks, a sprt job of its own in
    // output.dir/verify (job_verify_make builds it).
    struct {
        bool enabled;          // the section was written (or a verify.* override given)
        char tc[JOB_TEXT_MAX]; // the clock, as [time] tc; not used with nodes
        int64_t nodes;         // a node limit a move instead of the clock (0: the clock)
        double elo0, elo1, alpha, beta;
        int max_games;           // the game limit (game pairs: max_games / 2, rounded up)
        char book[JOB_TEXT_MAX]; // openings (empty: spsa the job's [openings], texel builtin)
    } verify;
    // NNUE training positions (kind = datagen): the [datagen] section. One builtin engine
    // plays itself; its limit per move is the engine's depth or nodes ([time], [each]).
    struct {
        int positions;           // accepted (deduplicated) records to reach: the run's end
        int random_plies;        // random legal plies after the opening line (not recorded)
        int min_ply;             // positions before this ply of the game are not recorded
        int unit;                // games per work unit
        int64_t max_games;       // give up after this many games (0: positions / 4)
        uint64_t seed;           // the random plies' seed
        char file[JOB_TEXT_MAX]; // the positions file (.xqp), a name in output.dir
        // Filters (worker/work_datagen.h): skip a position whose side to move is in check or
        // whose best move captures; keep a position of ply p < skip_early_plies with
        // probability (p + 1) / (skip_early_plies + 1); skip a score of at least skip_wdl
        // centipawns that the game's result contradicts (0: off).
        bool skip_capture, skip_in_check;
        int skip_early_plies, skip_wdl;
    } datagen;
    // NNUE training (kind = train): the [train] section, read by coordinator/nnue_fit.
    struct {
        char data[JOB_TRAIN_DATA_MAX][JOB_TEXT_MAX]; // positions files (.xqp), absolute
        int data_count;                              // 1..JOB_TRAIN_DATA_MAX
        int hidden;                                  // accumulator units per side
        int epochs, batch, threads;                  // threads 0: the node's cores
        double lr;                                   // Adam's learning rate
        double lambda; // the target's weight of the search score (1) against the result (0)
        double val;    // share of the positions held out for validation
        uint64_t seed; // shuffling, the validation split and the initial weights
        char net[JOB_TEXT_MAX];      // output file names in output.dir
        char loss[JOB_TEXT_MAX];     // the loss curves (CSV)
        char init[JOB_TEXT_MAX];     // a net to start from (empty: fresh weights from seed)
        char features[JOB_TEXT_MAX]; // the net's feature set: "xq1" or "xq2" (king-bucketed)
    } train;
    // The training loop (kind = loop): the [loop] section. Each generation runs a datagen job
    // with the best net, a train job on the last `keep` generations' data and an SPRT of the
    // new net against the best; [datagen] and [train] give those jobs' settings.
    struct {
        int generations;            // generations to run
        int positions;              // positions per generation (0: [datagen] positions)
        int keep;                   // generations of data a train job reads (a window)
        char gate_tc[JOB_TEXT_MAX]; // the gate SPRT's clock; not used with gate_nodes
        int64_t gate_nodes;         // a node limit a move instead of the clock (0: the clock)
        int gate_games;             // the gate's game limit (game pairs: rounded up)
        double elo0, elo1, alpha, beta;
        bool from_scratch; // each net from fresh weights (false: not supported yet)
    } loop;
} JobConfig;

typedef enum {
    JOB_OK,
    JOB_ERR_IO,       // the file cannot be read
    JOB_ERR_TOO_BIG,  // over JOB_FILE_MAX bytes
    JOB_ERR_SYNTAX,   // not INI, or a line too long
    JOB_ERR_KEY,      // unknown section or key
    JOB_ERR_VALUE,    // a bad or out-of-range value
    JOB_ERR_MISSING,  // a mandatory setting is missing
    JOB_ERR_OVERRIDE, // an override is not section.key=value
    JOB_ERR_UNSUPPORTED,
    JOB_ERR_NOMEM,
    JOB_STATUS_NB
} JobStatus;

/// The type of a plain key's value (job_keys.def).
typedef enum { KEY_INT, KEY_I64, KEY_U64, KEY_DBL, KEY_BOOL, KEY_STR } JobKeyType;
/// Flags of a plain key: what the key is to the run's identity and how its text is checked
/// (job_keys.def says what each means).
enum {
    KEY_IDENTITY = 1 << 0,
    KEY_COMPOSITE = 1 << 1,
    KEY_HOOK = 1 << 2,
    KEY_CONTENT = 1 << 3,
    KEY_PATH = 1 << 4,
    KEY_FILE_NAME = 1 << 5,
    KEY_REQUIRED = 1 << 6,
    KEY_DIR = 1 << 7
};

/// One row of job_keys.def: a plain key of a job file.
typedef struct {
    const char *section, *name;
    JobKeyType type;
    size_t offset, size;    // of the field in JobConfig
    double lo, hi;          // the range of a number
    double def;             // the default of a number or a boolean
    const char *def_text;   // the default of a string
    const char *empty_text; // KEY_CONTENT: the identity's text of an empty value
    unsigned flags;
} JobKeyDef;

/// The rows of job_keys.def, in its order; *count gets their number.
const JobKeyDef *job_keys(int *count);

const char *job_strerror(JobStatus st);
const char *job_kind_name(JobKind k);
/// How roles were chosen, in words for a summary ("the engines called new and base").
const char *job_roles_text(JobRoles r);

/// Loads path, then applies overrides[0..n_overrides) in order, and validates the whole.
/// On failure why says "file:line: [section] key: what is wrong" (or "override N 'text':
/// ..."). JobConfig is large (about 1.4 MB): allocate it on the heap.
JobStatus job_load(const char *path, const char *const *overrides, int n_overrides, JobConfig *out,
                   char *why, size_t why_len);

/// job_load as if the file were in file_dir (its relative paths taken from there) and the
/// overrides typed in override_dir (theirs from there); NULL: the file's own directory, and
/// overrides' paths as typed. A fleet reads a submitted copy of a job this way.
JobStatus job_load_at(const char *path, const char *file_dir, const char *override_dir,
                      const char *const *overrides, int n_overrides, JobConfig *out, char *why,
                      size_t why_len);

/// The pairings a job plays each round: 1 for two engines and for spsa (the engine against
/// itself), N-1 for a gauntlet of N engines, N(N-1)/2 for a round robin; 0 for book, texel,
/// datagen and train.
int job_pairing_count(const JobConfig *job);

/// rounds x pairings: the game pairs of the whole job (single games without repeat); at most
/// JOB_PAIRS_MAX in a loaded job.
int64_t job_pairs_total(const JobConfig *job);

enum { JOB_SCALE_MAX = 100 }; // a worker's scale lies in [1/JOB_SCALE_MAX, JOB_SCALE_MAX]

/// The factor of a worker's clock: reference_nps / bench_nps, within [1/JOB_SCALE_MAX,
/// JOB_SCALE_MAX]; 1 when reference_nps is 0 (no scaling). The worker scales its games and
/// the coordinator reports the factor with this one function, so the two never disagree.
double job_time_scale(uint64_t reference_nps, uint64_t bench_nps);

/// tc with its clock (base, increment) and movetime multiplied by scale, rounded to the
/// millisecond and never rounded down to 0; depth, nodes and the margin stay as they are.
TimeControl job_scale_time_control(const TimeControl *tc, double scale);

/// The job's time control against fishtest's STC, as fishtest's get_tc_ratio: the estimated
/// duration of a game (each player's clock plus 68 increments, or 68 moves at its movetime or
/// node limit, times its Threads; a game 92% of both players' time) over that of 10+0.1. A
/// node limit counts at JOB_NOMINAL_NPS nodes a second; a depth limit or no limit counts as
/// 10+0.1. The fleet gives a long time control proportionally more ranks (jobs/README.md).
double job_tc_ratio(const JobConfig *job);

/// The game settings for a game between players a and b of the job.
void job_game_config(const JobConfig *job, int a, int b, GameConfig *out);
