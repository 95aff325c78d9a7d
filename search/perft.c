// SPDX-License-Identifier: MIT
#include "perft.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "movegen.h"

uint64_t perft(Board *b, int depth)
{
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return (uint64_t)movegen_count_legal(b);
    MoveList list;
    int n = movegen_legal(b, &list);
    uint64_t nodes = 0;
    for (int i = 0; i < n; i++) {
        board_make_move(b, list.moves[i]);
        nodes += perft(b, depth - 1);
        board_unmake_move(b);
    }
    return nodes;
}

typedef struct {
    const Board *root;
    const MoveList *moves;
    atomic_int *next;
    int depth;
    int error;
    uint64_t nodes;
} PerftJob;

static void *perft_worker(void *arg)
{
    PerftJob *job = arg;
    Board *b = malloc(sizeof *b); // a Board is large (its history): keep it off the stack
    if (!b) {
        job->error = ENOMEM;
        return NULL;
    }
    *b = *job->root;
    for (int i; (i = atomic_fetch_add(job->next, 1)) < job->moves->count;) {
        board_make_move(b, job->moves->moves[i]);
        job->nodes += perft(b, job->depth - 1);
        board_unmake_move(b);
    }
    free(b);
    return NULL;
}

int perft_parallel(const Board *b, int depth, int threads, uint64_t *nodes)
{
    enum { MAX_THREADS = 256 };
    MoveList list;
    movegen_legal(b, &list);
    atomic_int next = 0;
    PerftJob jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (depth <= 1) {
        *nodes = depth <= 0 ? 1 : (uint64_t)list.count;
        return 0;
    }
    int started = 0, err = 0;
    for (int t = 0; t < threads; t++) {
        jobs[t] = (PerftJob){b, &list, &next, depth, 0, 0};
        if (t > 0 && pthread_create(&tid[t], NULL, perft_worker, &jobs[t]) != 0)
            break;
        started++;
    }
    perft_worker(&jobs[0]); // the calling thread works too
    uint64_t total = 0;
    for (int t = 0; t < started; t++) {
        if (t > 0)
            pthread_join(tid[t], NULL);
        total += jobs[t].nodes;
        if (jobs[t].error)
            err = jobs[t].error;
    }
    *nodes = total;
    return err;
}
