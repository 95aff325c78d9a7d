// SPDX-License-Identifier: MIT
#include "share.h"

#include <math.h>

double share_itp(int throughput, double tc_ratio, bool sprt, double llr, double games)
{
    double itp = throughput;
    if (tc_ratio > 1) // a long time control: more ranks, for about the same latency
        itp *= pow(tc_ratio, 0.774);
    if (sprt) {
        if (isfinite(llr)) // near its verdict: a gentle bonus, at most 5/3
            itp *= (fmin(fmax(llr, 0), 2) + 3) / 3;
        if (isfinite(games) && games > 200000) // a long SPRT: up to twice
            itp *= fmin(games / 200000, 2);
    }
    return itp;
}

void share_split(const double *itp, int n, int workers, double *target, int *want)
{
    int k = n < workers ? n : workers, sum = 0;
    double itps = 0;
    for (int i = 0; i < n; i++)
        want[i] = 0, target[i] = 0;
    for (int i = 0; i < k; i++)
        itps += itp[i];
    for (int i = 0; i < k; i++) {
        target[i] = itps > 0 ? workers * itp[i] / itps : (double)workers / k;
        want[i] = (int)lround(target[i]);
        want[i] = want[i] < 1 ? 1 : want[i];
        sum += want[i];
    }
    while (sum > workers) {
        int best = -1;
        for (int i = 0; i < k; i++)
            if (want[i] > 1 && (best < 0 || want[i] / target[i] >= want[best] / target[best]))
                best = i;
        if (best < 0)
            break;
        want[best]--, sum--;
    }
    while (sum < workers && k > 0) {
        int best = 0;
        for (int i = 1; i < k; i++)
            if (want[i] / target[i] < want[best] / target[best])
                best = i;
        want[best]++, sum++;
    }
}

bool share_fair(int have, int want)
{
    return want > 0 && have <= 1.25 * want && have >= 0.75 * want;
}
