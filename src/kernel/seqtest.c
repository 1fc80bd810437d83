/* compare's sequential decision (`--timing sequential`, the default): the
 * candidates and the baseline are sampled round-robin in one process, and at
 * a fixed schedule of looks (16, 32, 64, ... samples of the candidate, and
 * max_samples; and one more when the time limit stops a candidate between
 * looks) the time ratio candidate/baseline gets a distribution-free
 * interval: the order-statistic interval of each median at level alpha_look/2
 * (exact binomial ranks), divided crosswise. alpha_look = alpha / (m * L)
 * for m candidates and L looks at most (Bonferroni over looks and
 * candidates), so the chance that any look of any candidate has an interval
 * that misses the true ratio is <= alpha whatever the stopping rule: the
 * decision may be taken at the first look whose interval clears the band.
 * runtime/magpie_runner.py has the same code in Python; the math is in
 * bench/kernel_timing.md ("Sequential decision"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_int.h"

int kern_seq_first_look(int min_samples)
{
    return min_samples > K_SEQ_FIRST_LOOK ? min_samples : K_SEQ_FIRST_LOOK;
}

int kern_seq_nlooks(int min_samples, int max_samples)
{
    int n = 0, at = kern_seq_first_look(min_samples);
    for (; at < max_samples; at *= 2)
        n++;
    return n + 2; /* max_samples itself, and a look at the time limit */
}

bool kern_seq_is_look(int n, int min_samples, int max_samples)
{
    if (n == max_samples)
        return true;
    for (int at = kern_seq_first_look(min_samples); at < max_samples && at <= n; at *= 2)
        if (at == n)
            return true;
    return false;
}

int kern_median_ci_rank(int n, double a)
{
    if (n < 1 || !(a > 0))
        return 0;
    double ln2 = log(2.0), lgn = lgamma(n + 1.0), cdf = 0;
    int l = 0;
    for (int k = 0; k < (n + 1) / 2; k++) {
        cdf += exp(lgn - lgamma(k + 1.0) - lgamma(n - k + 1.0) - n * ln2);
        if (cdf > a / 2)
            break;
        l = k + 1; /* P(B <= l - 1) <= a/2 */
    }
    return l;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the interval [lo, hi] of the median of x[0..n) at level 1 - a */
static bool median_ci(const double *x, int n, double a, double *lo, double *hi)
{
    int l = kern_median_ci_rank(n, a);
    if (l < 1)
        return false;
    double *s = mp_calloc((size_t)n, sizeof(double));
    if (!s)
        return false;
    memcpy(s, x, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_dbl);
    *lo = s[l - 1];
    *hi = s[n - l];
    free(s);
    return true;
}

const char *kern_seq_decision_name(enum kern_seq_decision d)
{
    static const char *const nm[] = {"UNDECIDED", "FASTER", "SLOWER", "SAME"};
    return nm[d];
}

enum kern_seq_decision kern_seq_look(const double *base, int nb, const double *cand, int nc,
                                     double alpha_look, double thr, double *ratio_lo,
                                     double *ratio_hi)
{
    double bl, bh, cl, ch;
    *ratio_lo = *ratio_hi = NAN;
    if (!median_ci(base, nb, alpha_look / 2, &bl, &bh) ||
        !median_ci(cand, nc, alpha_look / 2, &cl, &ch) || !(bl > 0) || !(bh > 0))
        return K_SEQ_UNDECIDED;
    *ratio_lo = cl / bh;
    *ratio_hi = ch / bl;
    if (*ratio_hi < 1 - thr)
        return K_SEQ_FASTER;
    if (*ratio_lo > 1 + thr)
        return K_SEQ_SLOWER;
    if (*ratio_lo >= 1 - thr && *ratio_hi <= 1 + thr)
        return K_SEQ_SAME;
    return K_SEQ_UNDECIDED;
}
