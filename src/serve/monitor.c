/* The GPU monitor of a benchmark run (docs/magpie-compat.md, GPU monitor): a thread
 * that samples one NVIDIA GPU's temperature, SM clock, memory clock and
 * power draw with nvidia-smi every interval while the engine runs, and the
 * report's `gpu_monitor` object (min / max / avg of each). The samples are
 * taken by a child process, so the load generator's thread is never
 * blocked by them. AMD (rocm-smi) is not sampled yet.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <magpie/fmt.h>
#include <magpie/proc.h>
#include <magpie/serve.h>

#include "serve_int.h"

#define N_FIELDS 4

struct serve_monitor {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    int device;
    double interval_s;
    uint64_t t0_ns, t1_ns;
    size_t n;
    size_t cnt[N_FIELDS];
    double min[N_FIELDS], max[N_FIELDS], sum[N_FIELDS];
};

int mp_serve_parse_gpu_sample(const char *line, double out[4])
{
    int got = 0;
    const char *p = line;
    for (int i = 0; i < N_FIELDS; i++) {
        while (*p == ' ')
            p++;
        char *end;
        double v = strtod(p, &end);
        out[i] = end != p ? v : NAN; /* "[N/A]" and the like */
        got += end != p;
        p = strchr(p, ',');
        if (!p) {
            for (int k = i + 1; k < N_FIELDS; k++)
                out[k] = NAN;
            break;
        }
        p++;
    }
    return got;
}

static void sample(struct serve_monitor *m)
{
    char id[16];
    const char *argv[6];
    snprintf(id, sizeof(id), "%d", m->device);
    argv[0] = "nvidia-smi";
    argv[1] = "--query-gpu=temperature.gpu,clocks.sm,clocks.mem,power.draw";
    argv[2] = "--format=csv,noheader,nounits";
    argv[3] = "-i";
    argv[4] = id;
    argv[5] = NULL;
    struct mp_proc_opts po = {.timeout_s = 10, .err_mode = MP_PROC_DISCARD};
    struct mp_proc_result pr;
    if (mp_proc_run(argv, &po, &pr, NULL) == 0 && mp_proc_result_ok(&pr)) {
        double v[N_FIELDS];
        if (mp_serve_parse_gpu_sample(mp_buf_cstr(&pr.out), v) > 0) {
            pthread_mutex_lock(&m->mu);
            m->n++;
            for (int i = 0; i < N_FIELDS; i++) {
                if (isnan(v[i]))
                    continue;
                if (!m->cnt[i]++ || v[i] < m->min[i])
                    m->min[i] = v[i];
                if (m->cnt[i] == 1 || v[i] > m->max[i])
                    m->max[i] = v[i];
                m->sum[i] += v[i];
            }
            pthread_mutex_unlock(&m->mu);
        }
    }
    mp_proc_result_fini(&pr);
}

static void *loop(void *arg)
{
    struct serve_monitor *m = arg;
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        pthread_mutex_unlock(&m->mu);
        sample(m);
        pthread_mutex_lock(&m->mu);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + m->interval_s;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &ts) == 0)
            ;
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int serve_monitor_start(int device, double interval_s, struct serve_monitor **out)
{
    *out = NULL;
    struct serve_monitor *m = calloc(1, sizeof(*m));
    if (!m)
        return MP_ENOMEM;
    m->device = device;
    m->interval_s = interval_s < 0.5 ? 0.5 : interval_s;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    m->t0_ns = mp_time_ns();
    if (pthread_create(&m->thread, NULL, loop, m) != 0) {
        pthread_mutex_destroy(&m->mu);
        pthread_cond_destroy(&m->cv);
        free(m);
        return MP_ECHILD;
    }
    *out = m;
    return 0;
}

static int stat_obj(struct mp_buf *b, const char *key, const struct serve_monitor *m, int i)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", key);
    if (!m->cnt[i])
        return rc | mp_buf_puts(b, "null");
    rc |= mp_buf_puts(b, "{\"min\": ");
    rc |= mp_json_double(b, m->min[i]);
    rc |= mp_buf_puts(b, ", \"max\": ");
    rc |= mp_json_double(b, m->max[i]);
    rc |= mp_buf_puts(b, ", \"avg\": ");
    rc |= mp_json_double(b, m->sum[i] / (double)m->cnt[i]);
    return rc | mp_buf_putc(b, '}');
}

void serve_monitor_stop(struct serve_monitor *m, struct mp_buf *json)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    m->t1_ns = mp_time_ns();
    if (json && m->n) {
        mp_buf_printf(json, "{\"sample_count\": %zu, \"duration_sec\": ", m->n);
        mp_json_double(json, (double)(m->t1_ns - m->t0_ns) / 1e9);
        mp_buf_printf(json, ", \"device_id\": %d", m->device);
        stat_obj(json, "temperature_c", m, 0);
        stat_obj(json, "gpu_clock_mhz", m, 1);
        stat_obj(json, "mem_clock_mhz", m, 2);
        stat_obj(json, "power_watts", m, 3);
        mp_buf_putc(json, '}');
    }
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m);
}
