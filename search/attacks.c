// SPDX-License-Identifier: MIT
#include "attacks.h"

#include <pthread.h>
#include <string.h>

LineEntry attacks_rank[FILE_NB][1 << FILE_NB];
LineEntry attacks_file[RANK_NB][1 << RANK_NB];
StepList attacks_king[SQUARE_NB];
StepList attacks_advisor[SQUARE_NB];
StepList attacks_elephant[SQUARE_NB];
StepList attacks_horse[SQUARE_NB];
StepList attacks_soldier[COLOR_NB][SQUARE_NB];
StepList attacks_horse_from[SQUARE_NB];
uint8_t attacks_exposure[SQUARE_NB][SQUARE_NB];

/// Walks both ways from point p of a line of n points: empty points are quiet moves, the
/// first piece is a chariot target, the second a cannon target.
static LineEntry line_entry(int p, unsigned occ, int n)
{
    unsigned quiet = 0, hit = 0, screen = 0;
    for (int dir = -1; dir <= 1; dir += 2) {
        int seen = 0;
        for (int q = p + dir; q >= 0 && q < n; q += dir) {
            if (!(occ & (1u << q))) {
                if (seen == 0)
                    quiet |= 1u << q;
                continue;
            }
            if (++seen == 1) {
                hit |= 1u << q;
            } else {
                screen |= 1u << q;
                break;
            }
        }
    }
    return quiet | hit << 10 | screen << 20;
}

bool attacks_in_palace(Color c, Square s)
{
    int f = sq_file(s), r = sq_rank(s);
    if (f < 3 || f > 5)
        return false;
    return c == RED ? r <= 2 : r >= 7;
}

bool attacks_advisor_point(Color c, Square s)
{
    // d0 f0 e1 d2 f2 and their mirrors: palace points whose file and rank offsets share parity.
    return attacks_in_palace(c, s) && (sq_file(s) + sq_rank(s)) % 2 == (c == RED ? 1 : 0);
}

bool attacks_elephant_point(Color c, Square s)
{
    static const Square red[] = {2, 6, 18, 22, 26, 38, 42}; // c0 g0 a2 e2 i2 c4 g4
    for (unsigned i = 0; i < sizeof red / sizeof red[0]; i++) {
        Square t = c == RED ? red[i] : sq_make(sq_file(red[i]), 9 - sq_rank(red[i]));
        if (t == s)
            return true;
    }
    return false;
}

static bool on_board(int f, int r) { return f >= 0 && f < FILE_NB && r >= 0 && r < RANK_NB; }

static void step_add(StepList *l, Square to, Square via)
{
    l->to[l->n] = (uint8_t)to;
    l->via[l->n] = (uint8_t)via;
    l->n++;
}

static void init_steps(Square s)
{
    static const int orth[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    static const int diag[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    int f = sq_file(s), r = sq_rank(s);
    Color half = r <= 4 ? RED : BLACK;

    for (int i = 0; i < 4; i++) {
        int tf = f + orth[i][0], tr = r + orth[i][1];
        if (on_board(tf, tr) && attacks_in_palace(half, s) &&
            attacks_in_palace(half, sq_make(tf, tr)))
            step_add(&attacks_king[s], sq_make(tf, tr), sq_make(tf, tr));
        tf = f + diag[i][0], tr = r + diag[i][1];
        if (on_board(tf, tr) && attacks_advisor_point(half, s) &&
            attacks_advisor_point(half, sq_make(tf, tr)))
            step_add(&attacks_advisor[s], sq_make(tf, tr), sq_make(tf, tr));
        tf = f + 2 * diag[i][0], tr = r + 2 * diag[i][1];
        if (on_board(tf, tr) && attacks_elephant_point(half, s) &&
            attacks_elephant_point(half, sq_make(tf, tr)))
            step_add(&attacks_elephant[s], sq_make(tf, tr),
                     sq_make(f + diag[i][0], r + diag[i][1]));
    }
    // Horse: one point orthogonally (the leg), then one diagonally outward.
    for (int i = 0; i < 4; i++) {
        int lf = f + orth[i][0], lr = r + orth[i][1];
        for (int side = -1; side <= 1; side += 2) {
            int tf = lf + (orth[i][0] ? orth[i][0] : side);
            int tr = lr + (orth[i][1] ? orth[i][1] : side);
            if (on_board(tf, tr))
                step_add(&attacks_horse[s], sq_make(tf, tr), sq_make(lf, lr));
        }
    }
    // Soldier: forward; sideways once across the river.
    for (Color c = RED; c < COLOR_NB; c++) {
        int fwd = c == RED ? 1 : -1;
        bool crossed = c == RED ? r >= 5 : r <= 4;
        if (on_board(f, r + fwd))
            step_add(&attacks_soldier[c][s], sq_make(f, r + fwd), sq_make(f, r + fwd));
        for (int side = -1; crossed && side <= 1; side += 2)
            if (on_board(f + side, r))
                step_add(&attacks_soldier[c][s], sq_make(f + side, r), sq_make(f + side, r));
    }
}

static void attacks_build(void)
{
    for (int p = 0; p < FILE_NB; p++)
        for (unsigned occ = 0; occ < 1u << FILE_NB; occ++)
            attacks_rank[p][occ] = line_entry(p, occ, FILE_NB);
    for (int p = 0; p < RANK_NB; p++)
        for (unsigned occ = 0; occ < 1u << RANK_NB; occ++)
            attacks_file[p][occ] = line_entry(p, occ, RANK_NB);
    memset(attacks_horse_from, 0, sizeof attacks_horse_from);
    for (Square s = 0; s < SQUARE_NB; s++)
        init_steps(s);
    for (Square s = 0; s < SQUARE_NB; s++)
        for (int i = 0; i < attacks_horse[s].n; i++)
            step_add(&attacks_horse_from[attacks_horse[s].to[i]], s, attacks_horse[s].via[i]);
    for (Square k = 0; k < SQUARE_NB; k++) {
        for (Square s = 0; s < SQUARE_NB; s++) {
            bool line = sq_file(s) == sq_file(k) || sq_rank(s) == sq_rank(k);
            int df = sq_file(s) - sq_file(k), dr = sq_rank(s) - sq_rank(k);
            bool leg = (df == 1 || df == -1) && (dr == 1 || dr == -1);
            int ad = df * df + dr * dr; // 5: a horse's jump, 1: a soldier's step
            attacks_exposure[k][s] = (uint8_t)((line || leg ? 1 : 0) | (line ? 2 : 0) |
                                               (ad == 5 ? 4 : 0) | (ad == 1 ? 8 : 0));
        }
    }
}

void attacks_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, attacks_build);
}
