// SPDX-License-Identifier: MIT
#include "doe.h"

#include <stdlib.h>
#include <string.h>

#include "move.h"

enum { DOE_MAX_EDGES = 256 };

struct DoeTree {
    DoeConfig cfg;
    DoeNode *node;
    uint32_t n, cap;
    DoeEdge *edge;
    uint32_t edge_n, edge_cap;
    uint32_t *slot; // open addressing: node index + 1 by stored key (0: empty)
    uint32_t slot_cap;
    uint32_t *in_head; // per node: its first incoming edge + 1 (0: none; the root)
    uint32_t *in_next; // per edge: the next edge into the same child + 1
    uint32_t *stamp;   // per node: the walk that saw it last
    uint32_t walk;
    uint32_t *stack, *iter, *order; // scratch of the walks, a node's worth each
    uint32_t *dirty;                // leaves expanded since the last doe_update
    uint32_t dirty_n;
    DoeCounts counts;
};

const char *doe_strerror(DoeStatus st)
{
    static const char *const names[DOE_STATUS_NB] = {
        [DOE_OK] = "ok",
        [DOE_ERR_NOMEM] = "out of memory",
        [DOE_ERR_STATE] = "the node is not a leaf chosen for expansion",
    };
    return (unsigned)st < DOE_STATUS_NB ? names[st] : "unknown status";
}

static uint32_t slot_of(const DoeTree *t, uint64_t key)
{
    uint32_t mask = t->slot_cap - 1, i = (uint32_t)(key ^ (key >> 32)) & mask;
    while (t->slot[i] && t->node[t->slot[i] - 1].key != key)
        i = (i + 1) & mask;
    return i;
}

/// Node index of the stored key, or UINT32_MAX.
static uint32_t find(const DoeTree *t, uint64_t key)
{
    uint32_t s = t->slot[slot_of(t, key)];
    return s ? s - 1 : UINT32_MAX;
}

static bool grow_slots(DoeTree *t)
{
    uint32_t cap = t->slot_cap ? 2 * t->slot_cap : 1024;
    uint32_t *old = t->slot, old_cap = t->slot_cap;
    t->slot = calloc(cap, sizeof *t->slot);
    if (!t->slot) {
        t->slot = old;
        return false;
    }
    t->slot_cap = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i])
            t->slot[slot_of(t, t->node[old[i] - 1].key)] = old[i];
    free(old);
    return true;
}

/// A new leaf; UINT32_MAX when out of memory.
static uint32_t add_node(DoeTree *t, const char *fen, uint64_t key, uint64_t mirror_key, int ply,
                         int eval, bool terminal, bool in_check, uint32_t parent, uint16_t move)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 1024;
        DoeNode *nn = realloc(t->node, cap * sizeof *nn);
        if (!nn)
            return UINT32_MAX;
        t->node = nn;
        // The per-node arrays: stamps and incoming lists start empty, the scratch is scratch.
        uint32_t **arrays[] = {&t->in_head, &t->stamp, &t->stack, &t->iter, &t->order, &t->dirty};
        for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) {
            uint32_t *grown = realloc(*arrays[a], cap * sizeof *grown);
            if (!grown)
                return UINT32_MAX;
            memset(grown + t->cap, 0, (cap - t->cap) * sizeof *grown);
            *arrays[a] = grown;
        }
        t->cap = cap;
    }
    if (2 * (t->n + 1) > t->slot_cap && !grow_slots(t))
        return UINT32_MAX;
    uint32_t i = t->n++;
    DoeNode *d = &t->node[i];
    memset(d, 0, sizeof *d);
    snprintf(d->fen, sizeof d->fen, "%s", fen);
    d->key = key;
    d->mirror_key = mirror_key;
    d->ply = ply;
    d->eval = d->value = eval;
    d->state = terminal ? DOE_TERMINAL : DOE_LEAF;
    d->in_check = in_check;
    d->parent = parent;
    d->parent_move = move;
    d->prio = terminal || ply >= t->cfg.plies_max ? DOE_INF : 0;
    t->slot[slot_of(t, key)] = i + 1;
    return i;
}

DoeTree *doe_new(const DoeConfig *cfg, const char *root_epd, uint64_t key, uint64_t mirror_key,
                 bool in_check)
{
    DoeTree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *cfg;
    if (add_node(t, root_epd, key, mirror_key, 0, 0, false, in_check, UINT32_MAX, 0) != 0) {
        doe_free(t);
        return NULL;
    }
    return t;
}

void doe_free(DoeTree *t)
{
    if (!t)
        return;
    free(t->node);
    free(t->edge);
    free(t->slot);
    free(t->in_head);
    free(t->in_next);
    free(t->stamp);
    free(t->stack);
    free(t->iter);
    free(t->order);
    free(t->dirty);
    free(t);
}

/// Whether node a is node v or one of its ancestors: a walk up the incoming edges from v,
/// which visits only v's ancestors (a few, against the whole subtree below a).
static bool is_ancestor(DoeTree *t, uint32_t a, uint32_t v)
{
    uint32_t walk = ++t->walk, top = 0;
    t->stack[top++] = v;
    t->stamp[v] = walk;
    while (top) {
        uint32_t x = t->stack[--top];
        if (x == a)
            return true;
        for (uint32_t e = t->in_head[x]; e; e = t->in_next[e - 1]) {
            uint32_t p = t->edge[e - 1].parent;
            if (t->stamp[p] != walk) {
                t->stamp[p] = walk;
                t->stack[top++] = p;
            }
        }
    }
    return false;
}

DoeStatus doe_expand(DoeTree *t, uint32_t leaf, const DoeChild *c, int n)
{
    if (leaf >= t->n || t->node[leaf].state != DOE_LEAF || !t->node[leaf].pending)
        return DOE_ERR_STATE;
    if (t->edge_n + (uint32_t)n > t->edge_cap) {
        uint32_t cap = t->edge_cap ? t->edge_cap : 4096;
        while (cap < t->edge_n + (uint32_t)n)
            cap *= 2;
        DoeEdge *e = realloc(t->edge, cap * sizeof *e);
        if (!e)
            return DOE_ERR_NOMEM;
        t->edge = e;
        uint32_t *next = realloc(t->in_next, cap * sizeof *next);
        if (!next)
            return DOE_ERR_NOMEM;
        t->in_next = next;
        t->edge_cap = cap;
    }
    t->counts.scored += (uint64_t)n;
    t->counts.expansions++;
    uint32_t first = t->edge_n;
    for (int i = 0; i < n; i++) {
        uint32_t child = find(t, c[i].key);
        bool mirrored = false;
        if (child == UINT32_MAX && c[i].mirror_key != c[i].key) {
            child = find(t, c[i].mirror_key);
            mirrored = child != UINT32_MAX;
        }
        if (child != UINT32_MAX) {
            // An edge back into the line would make a cycle: a repetition, not a book move.
            if (is_ancestor(t, child, leaf)) {
                t->counts.repetitions++;
                continue;
            }
            t->counts.transpositions++;
            t->counts.mirrors += mirrored;
        } else {
            child = add_node(t, c[i].fen, c[i].key, c[i].mirror_key, t->node[leaf].ply + 1,
                             c[i].score, c[i].terminal, c[i].in_check, leaf, c[i].move);
            if (child == UINT32_MAX)
                return DOE_ERR_NOMEM;
        }
        t->in_next[t->edge_n] = t->in_head[child];
        t->in_head[child] = t->edge_n + 1;
        t->edge[t->edge_n++] = (DoeEdge){child, leaf, c[i].move, mirrored};
    }
    DoeNode *d = &t->node[leaf];
    d->pending = false;
    d->edge0 = first;
    d->edge_n = t->edge_n - first;
    // No move left (none legal, or each a repetition): nothing more to expand here.
    d->state = d->edge_n ? DOE_EXPANDED : DOE_TERMINAL;
    t->dirty[t->dirty_n++] = leaf;
    return DOE_OK;
}

/// The children p considers, best first (by value for p, then by edge order): *k of them
/// from order[0..edge_n).
static void considered(const DoeTree *t, const DoeNode *p, uint32_t *order, uint32_t *k)
{
    uint32_t n = p->edge_n;
    for (uint32_t i = 0; i < n; i++) {
        // Insertion sort: a node has at most a few dozen moves, and it is stable.
        uint32_t j = i;
        int vi = t->node[t->edge[p->edge0 + i].child].value;
        while (j > 0 && t->node[t->edge[p->edge0 + order[j - 1]].child].value > vi) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    uint64_t w = (uint64_t)t->cfg.width + p->visits / (uint32_t)t->cfg.widen;
    *k = w < n ? (uint32_t)w : n;
}

/// The term of p's edge e in p's priority.
static double term(const DoeTree *t, const DoeNode *p, uint32_t e)
{
    const DoeNode *c = &t->node[t->edge[p->edge0 + e].child];
    if (c->prio >= DOE_INF)
        return DOE_INF;
    return t->cfg.alpha * (double)(p->value + c->value) + c->prio + 1;
}

/// Node i's value and priority from its children's, which are up to date.
static void compute_node(DoeTree *t, uint32_t i)
{
    DoeNode *d = &t->node[i];
    if (d->state != DOE_EXPANDED) {
        d->value = d->eval;
        d->prio =
            d->state == DOE_TERMINAL || d->pending || d->ply >= t->cfg.plies_max ? DOE_INF : 0;
        return;
    }
    int best = -1000000;
    for (uint32_t e = 0; e < d->edge_n; e++) {
        int v = -t->node[t->edge[d->edge0 + e].child].value;
        if (v > best)
            best = v;
    }
    d->value = best;
    uint32_t order[DOE_MAX_EDGES], k;
    considered(t, d, order, &k);
    d->prio = DOE_INF;
    for (uint32_t j = 0; j < k; j++) {
        double x = term(t, d, order[j]);
        if (x < d->prio)
            d->prio = x;
    }
}

/// Everything below node i, then i (children first): the whole tree from the root.
static void update_all(DoeTree *t, uint32_t i, uint32_t walk)
{
    DoeNode *d = &t->node[i];
    t->stamp[i] = walk;
    for (uint32_t e = 0; d->state == DOE_EXPANDED && e < d->edge_n; e++) {
        uint32_t c = t->edge[d->edge0 + e].child;
        if (t->stamp[c] != walk)
            update_all(t, c, walk);
    }
    compute_node(t, i);
}

/// Recomputes the nodes whose value or priority can have changed: the n changed nodes and
/// their ancestors, children before parents. A node outside that cone has no changed node
/// below it, so its figures stand, and the result is the full recompute's, bit for bit. The
/// cone's order is the reverse of a depth-first post-order over the incoming edges.
static void update_cone(DoeTree *t, const uint32_t *changed, uint32_t n)
{
    uint32_t walk = ++t->walk, count = 0;
    for (uint32_t s = 0; s < n; s++) {
        if (t->stamp[changed[s]] == walk)
            continue;
        uint32_t top = 0;
        t->stack[top] = changed[s];
        t->iter[top++] = t->in_head[changed[s]];
        t->stamp[changed[s]] = walk;
        while (top) {
            uint32_t *e = &t->iter[top - 1];
            if (!*e) {
                t->order[count++] = t->stack[--top];
                continue;
            }
            uint32_t p = t->edge[*e - 1].parent;
            *e = t->in_next[*e - 1];
            if (t->stamp[p] != walk) {
                t->stamp[p] = walk;
                t->stack[top] = p;
                t->iter[top++] = t->in_head[p];
            }
        }
    }
    while (count)
        compute_node(t, t->order[--count]);
}

void doe_update(DoeTree *t)
{
    update_cone(t, t->dirty, t->dirty_n);
    t->dirty_n = 0;
}

bool doe_verify(DoeTree *t)
{
    int *value = malloc(t->n * sizeof *value);
    double *prio = malloc(t->n * sizeof *prio);
    bool same = value && prio;
    for (uint32_t i = 0; same && i < t->n; i++)
        value[i] = t->node[i].value, prio[i] = t->node[i].prio;
    update_all(t, 0, ++t->walk);
    // Bit for bit: the priorities are the same sums in the same order, or a step differs.
    for (uint32_t i = 0; same && i < t->n; i++)
        same = value[i] == t->node[i].value && !memcmp(&prio[i], &t->node[i].prio, sizeof *prio);
    free(value);
    free(prio);
    return same;
}

int doe_select(DoeTree *t, uint32_t *leaves, int max)
{
    int got = 0;
    while (got < max && t->node[0].prio < DOE_INF) {
        uint32_t i = 0;
        while (t->node[i].state == DOE_EXPANDED) {
            DoeNode *d = &t->node[i];
            uint32_t order[DOE_MAX_EDGES], k, pick = UINT32_MAX;
            considered(t, d, order, &k);
            double best = DOE_INF;
            for (uint32_t j = 0; j < k; j++) {
                double x = term(t, d, order[j]);
                if (x < best)
                    best = x, pick = order[j];
            }
            d->visits++;
            i = t->edge[d->edge0 + pick].child;
        }
        t->node[i].pending = true;
        leaves[got++] = i;
        update_cone(t, &i, 1);
    }
    return got;
}

const DoeNode *doe_node(const DoeTree *t, uint32_t i) { return i < t->n ? &t->node[i] : NULL; }

const DoeEdge *doe_edges(const DoeTree *t, uint32_t i)
{
    return i < t->n ? &t->edge[t->node[i].edge0] : NULL;
}

uint32_t doe_node_count(const DoeTree *t) { return t->n; }

const DoeCounts *doe_counts(const DoeTree *t) { return &t->counts; }

size_t doe_bytes(const DoeTree *t)
{
    return sizeof *t + t->cap * (sizeof *t->node + 6 * sizeof(uint32_t)) +
           t->edge_cap * (sizeof *t->edge + sizeof *t->in_next) + t->slot_cap * sizeof *t->slot;
}

bool doe_write(const DoeTree *t, FILE *f)
{
    static const char states[] = {'L', 'E', 'T'};
    for (uint32_t i = 0; i < t->n; i++) {
        const DoeNode *d = &t->node[i];
        if (fprintf(f, "%u %016llx %d %c %d %d %u %s", i, (unsigned long long)d->key, d->ply,
                    states[d->state], d->eval, d->value, d->visits, d->fen) < 0)
            return false;
        for (uint32_t e = 0; e < d->edge_n; e++) {
            const DoeEdge *x = &t->edge[d->edge0 + e];
            char mv[MOVE_TEXT_MAX];
            move_text((Move)x->move, 0, mv);
            if (fprintf(f, " %s>%s%u", mv, x->mirrored ? "~" : "", x->child) < 0)
                return false;
        }
        if (fputc('\n', f) == EOF)
            return false;
    }
    return true;
}
