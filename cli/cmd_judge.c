// SPDX-License-Identifier: MIT
// xqforge judge: the referee's verdict on a move list, or on every game of a PGN file, by the
// rules of search/rules (the engine's own code, as ElephantEye's referee compiles its engine's).
//   judge [--rules R] [--fen FEN] MOVE...   result and reason of the game so far
//   judge [--rules R] FILE.pgn              the games whose record disagrees with the rules
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "commands.h"
#include "pgn.h"
#include "pgn_read.h"

static void judge_usage(FILE *out)
{
    fprintf(out,
            "usage: xqforge judge [OPTIONS] [--fen FEN] MOVE...\n"
            "       xqforge judge [OPTIONS] FILE.pgn\n\n"
            "Replays the moves from FEN (default: the start position) and prints the rules'\n"
            "verdict: 'result: 1-0|0-1|1/2-1/2|*' ('*': the game goes on) and 'reason: R'\n"
            "(checkmate, perpetual check, repetition, ..., none). An illegal move, or a move\n"
            "after the rules ended the game, is refused with its number and why (exit 2).\n"
            "With a PGN file (an argument ending in .pgn, containing '/', or '-' for stdin),\n"
            "judges every game (ours, cutechess's, fastchess's, XQBase's: any xiangqi PGN\n"
            "with coordinate, ICCS, SAN or WXF moves) and lists those whose recorded result\n"
            "or termination (Termination, or our TerminationDetails beside it)\n"
            "disagrees with the rules, those with an illegal move, and a summary line\n"
            "'games N, agree A, disagree D, illegal I'.\n\n"
            "  --rules seed|asian  the rule set (default: a game's [Rules] tag, else seed)\n"
            "  --counting N        moves of the counting rule when no row applies (default 60)\n"
            "  --ply-limit N       seed's whole-game limit in plies, 0 none (default: the set's)\n"
            "  --ranks 0|1|auto    ranks 0-9 (ours, Pikafish's) or 1-10 (Fairy-Stockfish's,\n"
            "                      cutechess's). auto (default): 1-10 if a move names rank 10,\n"
            "                      else 0-9 if one names rank 0, else 0-9 unless the moves are\n"
            "                      illegal that way and legal throughout read in 1-10\n"
            "  --all               with a PGN: list the games that agree too\n"
            "  -h, --help          this help\n\n"
            "Exit status: 0 judged (with a PGN: every game agrees), 1 some game disagrees or\n"
            "has an illegal move, 2 bad usage, an illegal move given, or unreadable input.\n");
}

typedef struct {
    bool rules_given, all;
    RuleSet set;
    long counting, ply_limit; // -1: the rule set's default
    int ranks;                // 0, 1 or PGN_RANKS_AUTO
} JudgeOptions;

static RulesConfig judge_config(const JudgeOptions *o, RuleSet set)
{
    RulesConfig cfg = rules_config_default(set);
    if (o->counting > 0)
        cfg.counting_default = (int)o->counting;
    if (o->ply_limit >= 0)
        cfg.ply_limit = (int)o->ply_limit;
    return cfg;
}

/// Where the rules end a game: the first position they end (ply 0 is the start), or none.
typedef struct {
    GameEnd end;
    int ply;   // plies made when the rules ended the game
    int plies; // plies of the game
} RuleEnd;

/// Walks the game that b holds from its start, asking the rules after every ply.
static RuleEnd rules_walk(Board *b, const RulesConfig *cfg)
{
    Move moves[GAME_MAX_PLIES];
    int n = b->hist_len;
    for (int i = n - 1; i >= 0; i--) {
        moves[i] = b->hist[i].move;
        board_unmake_move(b);
    }
    RuleEnd r = {{OUTCOME_NONE, END_NONE}, n, n};
    for (int i = 0;; i++) {
        GameEnd e = rules_game_end(b, cfg);
        if (e.outcome != OUTCOME_NONE) {
            r.end = e;
            r.ply = i;
            return r;
        }
        if (i == n)
            return r;
        board_make_move(b, moves[i]);
    }
}

/// The verdict on a move list: result and reason lines, or the refused move (exit 2).
static int judge_moves(const JudgeOptions *o, const char *fen, char **moves, int n, PgnText *g,
                       Board *b)
{
    char why[160];
    FenStatus st = board_set_fen(b, fen ? fen : BOARD_START_FEN, why, sizeof why);
    if (st != FEN_OK) {
        fprintf(stderr, "xqforge judge: invalid FEN: %s (%s)\n", why, fen_strerror(st));
        return EXIT_USAGE;
    }
    if (n > GAME_MAX_PLIES) {
        fprintf(stderr, "xqforge judge: %d moves, at most %d\n", n, GAME_MAX_PLIES);
        return EXIT_USAGE;
    }
    memset(g, 0, sizeof *g);
    snprintf(g->fen, sizeof g->fen, "%s", fen ? fen : "");
    for (int i = 0; i < n; i++) {
        if (strlen(moves[i]) >= PGN_TOKEN_MAX) {
            fprintf(stderr, "xqforge judge: move %d '%s': not a move\n", i + 1, moves[i]);
            return EXIT_USAGE;
        }
        snprintf(g->moves[i], PGN_TOKEN_MAX, "%s", moves[i]);
    }
    g->ply_count = n;
    PgnReplay rep;
    pgn_text_replay(g, o->ranks, b, &rep);
    if (rep.why[0]) {
        fprintf(stderr, "xqforge judge: move %d %s\n", rep.plies + 1, rep.why);
        return EXIT_USAGE;
    }
    RulesConfig cfg = judge_config(o, o->set);
    RuleEnd r = rules_walk(b, &cfg);
    if (r.ply < r.plies) {
        char when[48] = "in the start position";
        if (r.ply > 0)
            snprintf(when, sizeof when, "after move %d", r.ply);
        fprintf(stderr, "xqforge judge: move %d '%s': the game is over %s (%s, %s)\n", r.ply + 1,
                moves[r.ply], when, pgn_result(r.end.outcome), rules_end_name(r.end.reason));
        return EXIT_USAGE;
    }
    printf("result: %s\nreason: %s\n", pgn_result(r.end.outcome), rules_end_name(r.end.reason));
    return 0;
}

typedef enum { VERDICT_AGREE, VERDICT_DISAGREE, VERDICT_ILLEGAL, VERDICT_UNREADABLE } Verdict;

/// Whether a game's record agrees with the rules' verdict r: the rules end it at its last ply
/// with the recorded result and no other termination; or they do not end it, and it ended
/// outside the rules (resignation, adjudication, time, ...) with a result of that kind, or not
/// at all. why says what disagrees.
static bool record_agrees(const PgnText *g, const PgnEnd *said, const RuleEnd *r, char *why,
                          size_t len)
{
    const char *rule = rules_end_name(r->end.reason);
    if (g->result_tag[0] && pgn_outcome(g->result_tag) != g->outcome) {
        snprintf(why, len, "the Result tag says %s, the moves end with %s", g->result_tag,
                 pgn_result(g->outcome));
    } else if (r->end.outcome != OUTCOME_NONE && r->ply < r->plies) {
        snprintf(why, len, "the moves go on after the rules end the game at ply %d", r->ply);
    } else if (r->end.outcome != OUTCOME_NONE) {
        if (g->outcome != r->end.outcome)
            snprintf(why, len, "the rules end the game by %s with %s", rule,
                     pgn_result(r->end.outcome));
        else if (said->kind != PGN_END_UNKNOWN &&
                 (said->kind != PGN_END_RULE || said->rule != r->end.reason))
            snprintf(why, len, "the rules end the game by %s, the record says %s", rule,
                     said->text);
        else
            return true;
    } else {
        bool cap = said->kind == PGN_END_RULE && said->rule == END_PLY_LIMIT; // a job's cap
        PgnEndNeeds needs = cap ? PGN_NEEDS_DRAW : said->needs;
        if (said->kind == PGN_END_RULE && !cap)
            snprintf(why, len, "the record says %s, no rule ends the game there", said->text);
        else if (g->outcome == OUTCOME_NONE && (cap || said->kind == PGN_END_OTHER))
            snprintf(why, len, "%s without a result", said->text);
        else if (g->outcome != OUTCOME_NONE && said->kind == PGN_END_UNFINISHED)
            snprintf(why, len, "%s with a result", said->text);
        else if (g->outcome != OUTCOME_NONE &&
                 (needs == PGN_NEEDS_DRAW) != (g->outcome == OUTCOME_DRAW) &&
                 needs != PGN_NEEDS_ANY)
            snprintf(why, len, "%s with a %s", said->text,
                     g->outcome == OUTCOME_DRAW ? "draw" : "decisive result");
        else
            return true;
    }
    return false;
}

/// The rules' verdict as one phrase: "0-1 (perpetual check at ply 57)".
static void verdict_text(const RuleEnd *r, char *out, size_t len)
{
    if (r->end.outcome == OUTCOME_NONE)
        snprintf(out, len, "* (no rule ends the game after ply %d)", r->plies);
    else
        snprintf(out, len, "%s (%s at ply %d)", pgn_result(r->end.outcome),
                 rules_end_name(r->end.reason), r->ply);
}

typedef struct {
    int games, agree, disagree, illegal, unreadable;
} Tally;

/// "game 3, red vs black (line 41)": how a listed game is named.
static void game_name(const PgnText *g, int number, char *out, size_t len)
{
    snprintf(out, len, "game %d, %s vs %s (line %d)", number, g->white[0] ? g->white : "?",
             g->black[0] ? g->black : "?", g->first_line);
}

/// Judges one game read from a PGN, printing a line unless it agrees (or --all).
static Verdict judge_game(const JudgeOptions *o, const PgnText *g, const char *who, Board *b)
{
    RuleSet set = o->set;
    if (!o->rules_given && g->rules[0] && !rules_set_parse(g->rules, &set)) {
        printf("%s: unreadable: Rules tag '%s' names no rule set (give --rules)\n", who, g->rules);
        return VERDICT_UNREADABLE;
    }
    PgnReplay rep;
    if (!pgn_text_replay(g, o->ranks, b, &rep)) {
        printf("%s: unreadable: %s\n", who, rep.why);
        return VERDICT_UNREADABLE;
    }
    if (rep.why[0]) {
        printf("%s: illegal move at ply %d: %s (line %d)\n", who, rep.plies + 1, rep.why,
               g->move_line[rep.plies]);
        return VERDICT_ILLEGAL;
    }
    RulesConfig cfg = judge_config(o, set);
    RuleEnd r = rules_walk(b, &cfg);
    PgnEnd said = pgn_text_end(g);
    if (!said.text[0])
        snprintf(said.text, sizeof said.text, "no termination");
    char why[400], judged[128];
    bool ok = record_agrees(g, &said, &r, why, sizeof why);
    if (ok && !o->all)
        return VERDICT_AGREE;
    verdict_text(&r, judged, sizeof judged);
    printf("%s: %s: recorded %s (%s), judged %s under %s%s%s\n", who, ok ? "agrees" : "disagrees",
           pgn_result(g->outcome), said.text, judged, rules_set_name(set), ok ? "" : ": ",
           ok ? "" : why);
    return ok ? VERDICT_AGREE : VERDICT_DISAGREE;
}

/// Judges every game of a PGN file: exit 0 (all agree), 1 (some disagree or are illegal) or
/// 2 (the input, or a game of it, cannot be read).
static int judge_file(const JudgeOptions *o, const char *path, PgnText *g, Board *b)
{
    struct stat sb;
    bool std_in = !strcmp(path, "-");
    const char *unusable = std_in                 ? NULL
                           : stat(path, &sb) != 0 ? strerror(errno)
                           : S_ISDIR(sb.st_mode)  ? "a directory, not a PGN file"
                                                  : NULL;
    FILE *in = unusable ? NULL : std_in ? stdin : fopen(path, "r");
    if (!in) {
        fprintf(stderr, "xqforge judge: %s: %s\n", path, unusable ? unusable : strerror(errno));
        return EXIT_USAGE;
    }
    Tally t = {0};
    char why[400], who[2 * PLAYER_NAME_MAX + 64];
    int line = 0, got;
    while ((got = pgn_read_text(in, g, &line, why, sizeof why)) != 0) {
        game_name(g, ++t.games, who, sizeof who);
        Verdict v = VERDICT_UNREADABLE;
        if (got < 0)
            printf("%s: unreadable: %s\n", who, why);
        else
            v = judge_game(o, g, who, b);
        t.agree += v == VERDICT_AGREE;
        t.disagree += v == VERDICT_DISAGREE;
        t.illegal += v == VERDICT_ILLEGAL;
        t.unreadable += v == VERDICT_UNREADABLE;
    }
    bool read_error = ferror(in);
    if (!std_in)
        fclose(in);
    if (read_error || t.games == 0) {
        fprintf(stderr, "xqforge judge: %s: %s\n", path,
                read_error ? "read error" : "no games: not a PGN file");
        return EXIT_USAGE;
    }
    printf("games %d, agree %d, disagree %d, illegal %d", t.games, t.agree, t.disagree, t.illegal);
    printf(t.unreadable ? ", unreadable %d\n" : "\n", t.unreadable);
    return t.unreadable ? EXIT_USAGE : t.disagree || t.illegal ? 1 : 0;
}

static bool is_pgn_path(const char *a)
{
    size_t n = strlen(a);
    return !strcmp(a, "-") || strchr(a, '/') || (n > 4 && !strcasecmp(a + n - 4, ".pgn"));
}

/// Reads the options; false (with the reason said) on bad usage.
static bool judge_options(int argc, char **argv, JudgeOptions *o, const char **fen, bool *help)
{
    static const struct option opts[] = {
        {"rules", required_argument, NULL, 'r'},    {"fen", required_argument, NULL, 'f'},
        {"counting", required_argument, NULL, 'c'}, {"ply-limit", required_argument, NULL, 'p'},
        {"ranks", required_argument, NULL, 'k'},    {"all", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case 'r':
            o->rules_given = true;
            if (!rules_set_parse(optarg, &o->set)) {
                fprintf(stderr, "xqforge judge: --rules %s: expected seed or asian\n", optarg);
                return false;
            }
            break;
        case 'f': *fen = optarg; break;
        case 'c':
            if (!cli_parse_int(optarg, 1, 1000, &o->counting)) {
                fprintf(stderr, "xqforge judge: --counting must be 1-1000, got '%s'\n", optarg);
                return false;
            }
            break;
        case 'p':
            if (!cli_parse_int(optarg, 0, GAME_MAX_PLIES, &o->ply_limit)) {
                fprintf(stderr, "xqforge judge: --ply-limit must be 0-%d, got '%s'\n",
                        GAME_MAX_PLIES, optarg);
                return false;
            }
            break;
        case 'k':
            o->ranks = !strcmp(optarg, "0") ? 0 : !strcmp(optarg, "1") ? 1 : PGN_RANKS_AUTO;
            if (o->ranks == PGN_RANKS_AUTO && strcmp(optarg, "auto") != 0) {
                fprintf(stderr, "xqforge judge: --ranks %s: expected 0, 1 or auto\n", optarg);
                return false;
            }
            break;
        case 'a': o->all = true; break;
        case 'h': *help = true; return true;
        default: return false;
        }
    }
    return true;
}

int cmd_judge(int argc, char **argv)
{
    JudgeOptions o = {.set = RULES_SEED, .counting = -1, .ply_limit = -1, .ranks = PGN_RANKS_AUTO};
    const char *fen = NULL;
    bool help = false;
    // Moves are positional and never start with '-', but options may follow them.
    if (!judge_options(argc, argv, &o, &fen, &help)) {
        judge_usage(stderr);
        return EXIT_USAGE;
    }
    if (help) {
        judge_usage(stdout);
        return 0;
    }
    int first = optind, n = argc - optind;
    bool file = n > 0 && is_pgn_path(argv[first]);
    if ((n == 0 && !fen) || (file && (n != 1 || fen))) {
        fprintf(stderr, "xqforge judge: %s\n",
                file ? "one PGN file, without --fen" : "give moves, --fen FEN, or a PGN file");
        judge_usage(stderr);
        return EXIT_USAGE;
    }
    PgnText *g = malloc(sizeof *g);
    Board *b = malloc(sizeof *b);
    int rc = 1;
    if (!g || !b)
        fprintf(stderr, "xqforge judge: out of memory\n");
    else if (file)
        rc = judge_file(&o, argv[first], g, b);
    else
        rc = judge_moves(&o, fen, argv + first, n, g, b);
    free(g);
    free(b);
    return rc;
}
