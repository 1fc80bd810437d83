/* Arrival schedule and random numbers.
 *
 * vLLM draws inter-arrival gaps with numpy's global legacy RandomState
 * (np.random.seed(seed); np.random.gamma(...)), cumulates them and rescales
 * the sum to n/rate before the run. We reproduce that stream bit for bit:
 * MT19937 with numpy's seeding, 53-bit doubles, the polar Box-Muller gauss
 * with its cached second value, and the Marsaglia-Tsang / Johnk-style gamma
 * of numpy's legacy distributions. So `--seed S` gives the same absolute
 * schedule as `vllm bench serve --seed S` (its dataset sampling uses other
 * generators and does not disturb this stream).
 */
#include <math.h>
#include <string.h>

#include <magpie/loadgen.h>

#include "loadgen_int.h"

void loadgen_mt_seed(struct loadgen_mt *m, uint32_t seed)
{
    m->mt[0] = seed;
    for (int i = 1; i < 624; i++)
        m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->pos = 624;
    m->has_gauss = false;
    m->gauss = 0;
}

static void mt_refill(struct loadgen_mt *m)
{
    static const uint32_t mag01[2] = {0u, 0x9908b0dfu};
    int k;
    uint32_t y;
    for (k = 0; k < 624 - 397; k++) {
        y = (m->mt[k] & 0x80000000u) | (m->mt[k + 1] & 0x7fffffffu);
        m->mt[k] = m->mt[k + 397] ^ (y >> 1) ^ mag01[y & 1u];
    }
    for (; k < 623; k++) {
        y = (m->mt[k] & 0x80000000u) | (m->mt[k + 1] & 0x7fffffffu);
        m->mt[k] = m->mt[k + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1u];
    }
    y = (m->mt[623] & 0x80000000u) | (m->mt[0] & 0x7fffffffu);
    m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 1u];
    m->pos = 0;
}

uint32_t loadgen_mt_u32(struct loadgen_mt *m)
{
    if (m->pos >= 624)
        mt_refill(m);
    uint32_t y = m->mt[m->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double loadgen_mt_double(struct loadgen_mt *m)
{
    uint32_t a = loadgen_mt_u32(m) >> 5, b = loadgen_mt_u32(m) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

double loadgen_mt_exponential(struct loadgen_mt *m)
{
    return -log(1.0 - loadgen_mt_double(m));
}

static double mt_gauss(struct loadgen_mt *m)
{
    if (m->has_gauss) {
        m->has_gauss = false;
        return m->gauss;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * loadgen_mt_double(m) - 1.0;
        x2 = 2.0 * loadgen_mt_double(m) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    m->gauss = f * x1;
    m->has_gauss = true;
    return f * x2;
}

double loadgen_mt_gamma(struct loadgen_mt *m, double shape)
{
    if (shape == 1.0)
        return loadgen_mt_exponential(m);
    if (shape == 0.0)
        return 0.0;
    if (shape < 1.0) {
        for (;;) {
            double u = loadgen_mt_double(m), v = loadgen_mt_exponential(m);
            if (u <= 1.0 - shape) {
                double x = pow(u, 1.0 / shape);
                if (x <= v)
                    return x;
            } else {
                double y = -log((1.0 - u) / shape);
                double x = pow(1.0 - shape + shape * y, 1.0 / shape);
                if (x <= v + y)
                    return x;
            }
        }
    }
    double b = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * b);
    for (;;) {
        double x, v;
        do {
            x = mt_gauss(m);
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = loadgen_mt_double(m);
        if (u < 1.0 - 0.0331 * (x * x) * (x * x))
            return b * v;
        if (log(u) < 0.5 * x * x + b * (1.0 - v + log(v)))
            return b * v;
    }
}

int64_t loadgen_mt_range(struct loadgen_mt *m, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = (uint64_t)(hi - lo) + 1, lim = UINT64_MAX - UINT64_MAX % span;
    for (;;) {
        uint64_t r = ((uint64_t)loadgen_mt_u32(m) << 32) | loadgen_mt_u32(m);
        if (r < lim)
            return lo + (int64_t)(r % span);
    }
}

int mp_loadgen_schedule(size_t n, double rate, double burstiness, uint64_t seed, double *offsets_s,
                        struct mp_diag *d)
{
    if (n == 0)
        return 0;
    if (!(rate > 0))
        return mp_diag_set(d, MP_EINVAL, "request rate must be positive (or inf), not %g", rate);
    if (!(burstiness > 0))
        return mp_diag_set(d, MP_EINVAL, "burstiness must be positive, not %g", burstiness);
    if (isinf(rate)) {
        memset(offsets_s, 0, n * sizeof(*offsets_s));
        return 0;
    }
    if (seed > UINT32_MAX)
        return mp_diag_set(d, MP_EINVAL, "seed must be between 0 and 2**32 - 1 (numpy's limit)");
    struct loadgen_mt m;
    loadgen_mt_seed(&m, (uint32_t)seed);
    double theta = 1.0 / (rate * burstiness), acc = 0;
    for (size_t i = 0; i < n; i++) {
        double gap = isinf(burstiness) ? 1.0 / rate : theta * loadgen_mt_gamma(&m, burstiness);
        acc += gap;
        offsets_s[i] = acc;
    }
    /* vLLM rescales so the last arrival lands exactly at n/rate */
    if (offsets_s[n - 1] != 0) {
        double f = ((double)n / rate) / offsets_s[n - 1];
        for (size_t i = 0; i < n; i++)
            offsets_s[i] *= f;
    }
    return 0;
}
