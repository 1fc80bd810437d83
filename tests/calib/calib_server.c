/* calib_server: an OpenAI-compatible streaming server whose timing is known.
 *
 * Every response follows a schedule given in a JSON file: time to the first
 * token, the gaps between events, tokens per event, how the bytes are cut
 * into writes, token counts, and injected failures (HTTP 500, a dropped
 * connection, a malformed SSE event, an error event, a stall). Each event is
 * written at its due time (timerfd, absolute CLOCK_MONOTONIC, 1 ns timer
 * slack) and the time of every write() is logged, so a test can compute the
 * true TTFT / ITL / E2EL of every request and compare the load generator's
 * numbers with them. Same machine, same clock.
 *
 * usage: calib_server --schedule FILE [--port N] [--port-file F] [--log F]
 *                     [--exit-after-s S] [--seed N] [--scale-ttft F] [--scale-itl F]
 * --seed replaces the schedule's seed (independent noise per run); the
 * scales multiply every drawn TTFT / gap (a known change for `benchmark
 * compare`: --scale-itl 1.03 --scale-ttft 1.05).
 *
 * Schedule file:
 *   {"seed": 1, "match": "order" | "request-id",
 *    "default": SPEC, "requests": [SPEC, ...]}
 * Request i (arrival order, or the number at the end of x-request-id; warm-up
 * ids use "default") gets requests[i] merged over default. SPEC keys:
 *   ttft_ms: N | [lo, hi]         time from request read to first event
 *   prefill_ms_per_token: X       added to the TTFT per prompt token not cached
 *                                 (prompt_tokens - cached_tokens): a prefix
 *                                 cache's effect, for the shared-prefix workloads
 *   itl_ms: N | [lo, hi]          gap before each later event (0: same write)
 *   itl_list_ms: [a, b, ...]      gaps used in turn instead of itl_ms
 *   tokens: N                     output tokens (default: the request's max_tokens)
 *   tokens_per_event: N | [a,...] tokens carried by each event, in turn
 *   split_bytes: N, split_gap_us: U   write each event in N-byte pieces U us apart
 *   prompt_tokens: N              reported instead of the prompt's length
 *   usage: false                  never send a usage chunk
 *   fail: "http500" | "drop" | "malformed" | "error_event" | "stall"
 *   fail_after: K                 events sent before the failure (default 0)
 * [lo, hi] draws uniformly per request from the seed, so runs repeat exactly.
 * Top level "hold_until": N holds every streaming response (no headers, no
 * TTFT clock) until N requests are in, or "hold_max_ms" (default 30000)
 * after the first: the peak concurrency a client reaches is then its own
 * property, not the machine's speed.
 * Prefix accounting (the truth for the shared-prefix and session workloads):
 * every prompt is a token sequence (completions: its token ids, or its
 * words; chat: per message a role token, then its words), and each request
 * logs cached_tokens, the length of the longest prefix it shares with any
 * prompt received before it (what an unbounded prefix cache would hit), and
 * n_messages. GET /metrics answers Prometheus text with vLLM's names
 * (running / waiting requests, prefix-cache queries and hits in tokens,
 * prompt and generation tokens, KV-cache usage as the tokens of the active
 * streams over "kv_capacity" of the schedule, default 65536). POST /tokenize
 * answers {"count", "max_model_len", "tokens"} for a "prompt" or "messages"
 * body, counted as the requests are.
 * Log: one JSON line per request: rid, idx, recv_ns, hdr_ns, events [[due_ns,
 * write_ns, tokens, write_index], ...], writes [[pre_ns, post_ns], ...],
 * usage_ns, end_ns, prompt_tokens, completion_tokens, outcome. write_ns is
 * the time just before the write() that carried the event's first byte,
 * writes[write_index] that write's bracket (see log_write), post_ns 0 when
 * the bytes had not left by the end of the stream.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

enum { F_NONE = 0, F_HTTP500, F_DROP, F_MALFORMED, F_ERROR_EVENT, F_STALL, F_CLOSED };

static const char *const FAIL_NAMES[] = {"ok",          "http500", "drop",         "malformed",
                                         "error_event", "stall",   "client_closed"};

struct spec {
    double ttft[2], itl[2];
    double *itl_list;
    size_t n_itl_list;
    long tokens;
    long *tpe;
    size_t n_tpe;
    long split_bytes;
    double split_gap_us;
    long prompt_tokens;
    double prefill_ms_per_token;
    bool usage;
    int fail;
    long fail_after;
};

struct stream {
    bool active, stalled, done_sending;
    long idx;
    char rid[160];
    char model[128];
    bool chat, include_usage, continuous;
    long prompt_tokens, total_tokens, sent_tokens, ev_i;
    uint64_t t_recv, t_hdr, next_due, usage_ns;
    const struct spec *sp;
    uint64_t rng;
    double ttft_ms;
    /* split-write state of the current event */
    char *piece;
    size_t piece_len, piece_off;
    /* log */
    uint64_t *due, *wr;
    long *tok;
    size_t *wi; /* index in wpre/wpost of the write that carried the event's first byte */
    size_t n_log, cap_log;
    /* every write() of the response: the time just before it and the time
     * its bytes had all left the send queue (0: not yet seen) */
    uint64_t *wpre, *wpost;
    size_t n_w, cap_w, open_from; /* writes from open_from on may still be unsent */
    bool has_open;
    bool held; /* waiting for hold_until requests before its headers */
    int outcome;
    long cached_tokens, n_messages;
    bool running; /* counted in n_running */
};

struct conn {
    int fd;
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, wcap;
    bool want_out;
    uint32_t gen;
    struct stream st;
};

struct hent {
    uint64_t due;
    int fd;
    uint32_t gen;
};

static struct {
    int ep, lfd, tfd;
    struct conn **conns;
    size_t n_conns;
    struct hent *heap;
    size_t n_heap, cap_heap;
    uint64_t armed;
    struct spec def;
    struct spec *reqs;
    size_t n_reqs;
    bool match_rid;
    uint64_t seed;
    double scale_ttft, scale_itl; /* known change: multiply drawn TTFTs / gaps */
    long seed_override;           /* --seed, -1 = the schedule's */
    long counter;
    /* hold_until: every streaming response waits (no headers) until this
     * many have arrived or hold_max_ms has passed since the first one */
    long hold_until, n_seen_hold;
    double hold_max_ms;
    uint64_t hold_deadline;
    bool released;
    int *held_fd;
    uint32_t *held_gen;
    size_t n_held, cap_held;
    size_t n_open; /* connections with writes whose bytes may still be unsent */
    /* prefix accounting: hashes of every prefix of every prompt seen */
    uint64_t *pset;
    size_t pset_cap, pset_n;
    /* /metrics counters */
    long long m_queries, m_hits, m_prompt, m_gen, m_success;
    long n_running;
    double kv_capacity;
    FILE *log;
    char *out; /* scratch for building writes */
    size_t out_len, out_cap;
} S;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "calib_server: ");
    vfprintf(stderr, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): va_start above
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die("out of memory");
    return q;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double draw(uint64_t *s, const double r[2])
{
    if (r[1] <= r[0])
        return r[0];
    double u = (double)(splitmix(s) >> 11) / 9007199254740992.0;
    return r[0] + (r[1] - r[0]) * u;
}

/* ---- schedule file ---- */

static void range_of(json_t *v, double r[2], const char *key)
{
    if (json_is_number(v)) {
        r[0] = r[1] = json_number_value(v);
    } else if (json_is_array(v) && json_array_size(v) == 2 &&
               json_is_number(json_array_get(v, 0)) && json_is_number(json_array_get(v, 1))) {
        r[0] = json_number_value(json_array_get(v, 0));
        r[1] = json_number_value(json_array_get(v, 1));
    } else {
        die("schedule: %s must be a number or [lo, hi]", key);
    }
}

static void parse_spec(json_t *o, struct spec *sp)
{
    const char *k;
    json_t *v;
    if (!json_is_object(o))
        die("schedule: a SPEC must be an object");
    json_object_foreach(o, k, v)
    {
        if (!strcmp(k, "ttft_ms")) {
            range_of(v, sp->ttft, k);
        } else if (!strcmp(k, "itl_ms")) {
            range_of(v, sp->itl, k);
        } else if (!strcmp(k, "itl_list_ms")) {
            if (!json_is_array(v) || !json_array_size(v))
                die("schedule: itl_list_ms must be a non-empty list");
            sp->n_itl_list = json_array_size(v);
            sp->itl_list = xrealloc(NULL, sp->n_itl_list * sizeof(double));
            for (size_t i = 0; i < sp->n_itl_list; i++)
                sp->itl_list[i] = json_number_value(json_array_get(v, i));
        } else if (!strcmp(k, "tokens")) {
            sp->tokens = (long)json_integer_value(v);
        } else if (!strcmp(k, "tokens_per_event")) {
            if (json_is_integer(v)) {
                sp->n_tpe = 1;
                sp->tpe = xrealloc(NULL, sizeof(long));
                sp->tpe[0] = (long)json_integer_value(v);
            } else if (json_is_array(v) && json_array_size(v)) {
                sp->n_tpe = json_array_size(v);
                sp->tpe = xrealloc(NULL, sp->n_tpe * sizeof(long));
                for (size_t i = 0; i < sp->n_tpe; i++)
                    sp->tpe[i] = (long)json_integer_value(json_array_get(v, i));
            } else {
                die("schedule: tokens_per_event must be an int or a list");
            }
            for (size_t i = 0; i < sp->n_tpe; i++)
                if (sp->tpe[i] < 1)
                    die("schedule: tokens_per_event values must be >= 1");
        } else if (!strcmp(k, "split_bytes")) {
            sp->split_bytes = (long)json_integer_value(v);
        } else if (!strcmp(k, "split_gap_us")) {
            sp->split_gap_us = json_number_value(v);
        } else if (!strcmp(k, "prefill_ms_per_token")) {
            sp->prefill_ms_per_token = json_number_value(v);
            if (!json_is_number(v) || sp->prefill_ms_per_token < 0)
                die("schedule: prefill_ms_per_token must be a number >= 0");
        } else if (!strcmp(k, "prompt_tokens")) {
            sp->prompt_tokens = (long)json_integer_value(v);
        } else if (!strcmp(k, "usage")) {
            sp->usage = json_is_true(v);
        } else if (!strcmp(k, "fail")) {
            const char *f = json_string_value(v);
            sp->fail = -1;
            for (int i = 0; f && i <= F_STALL; i++)
                if (!strcmp(f, FAIL_NAMES[i]))
                    sp->fail = i;
            if (sp->fail < 0)
                die("schedule: unknown fail kind");
        } else if (!strcmp(k, "fail_after")) {
            sp->fail_after = (long)json_integer_value(v);
        } else {
            die("schedule: unknown key '%s'", k);
        }
    }
}

static void load_schedule(const char *path)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        die("%s:%d:%d: %s", path, je.line, je.column, je.text);
    memset(&S.def, 0, sizeof(S.def));
    S.def.tokens = -1;
    S.def.prompt_tokens = -1;
    S.def.usage = true;
    json_t *v = json_object_get(root, "default");
    if (v)
        parse_spec(v, &S.def);
    S.seed = S.seed_override >= 0 ? (uint64_t)S.seed_override
                                  : (uint64_t)json_integer_value(json_object_get(root, "seed"));
    const char *m = json_string_value(json_object_get(root, "match"));
    S.match_rid = m && !strcmp(m, "request-id");
    S.hold_until = (long)json_integer_value(json_object_get(root, "hold_until"));
    json_t *kc = json_object_get(root, "kv_capacity");
    S.kv_capacity = json_is_number(kc) && json_number_value(kc) > 0 ? json_number_value(kc) : 65536;
    json_t *hm = json_object_get(root, "hold_max_ms");
    S.hold_max_ms = json_is_number(hm) ? json_number_value(hm) : 30000;
    S.released = S.hold_until <= 0;
    json_t *rs = json_object_get(root, "requests");
    if (json_is_array(rs)) {
        S.n_reqs = json_array_size(rs);
        S.reqs = xrealloc(NULL, (S.n_reqs + 1) * sizeof(struct spec));
        for (size_t i = 0; i < S.n_reqs; i++) {
            S.reqs[i] = S.def;
            parse_spec(json_array_get(rs, i), &S.reqs[i]);
        }
    }
    json_decref(root);
}

/* ---- timer heap ---- */

static void heap_push(uint64_t due, int fd, uint32_t gen)
{
    if (S.n_heap == S.cap_heap) {
        S.cap_heap = S.cap_heap ? S.cap_heap * 2 : 1024;
        S.heap = xrealloc(S.heap, S.cap_heap * sizeof(*S.heap));
    }
    size_t i = S.n_heap++;
    S.heap[i] = (struct hent){due, fd, gen};
    while (i && S.heap[(i - 1) / 2].due > S.heap[i].due) {
        struct hent t = S.heap[i];
        S.heap[i] = S.heap[(i - 1) / 2];
        S.heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct hent heap_pop(void)
{
    struct hent top = S.heap[0];
    S.heap[0] = S.heap[--S.n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < S.n_heap && S.heap[l].due < S.heap[m].due)
            m = l;
        if (r < S.n_heap && S.heap[r].due < S.heap[m].due)
            m = r;
        if (m == i)
            break;
        struct hent t = S.heap[i];
        S.heap[i] = S.heap[m];
        S.heap[m] = t;
        i = m;
    }
    return top;
}

static void arm(uint64_t when)
{
    if (when == S.armed)
        return;
    S.armed = when;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)(when / 1000000000ull);
    its.it_value.tv_nsec = (long)(when % 1000000000ull);
    if (when == 0)
        its.it_value.tv_nsec = 0; /* disarm */
    timerfd_settime(S.tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* ---- output ---- */

static void out_reset(void)
{
    S.out_len = 0;
}

static void out_add(const char *p, size_t n)
{
    if (S.out_len + n + 1 > S.out_cap) {
        S.out_cap = (S.out_len + n + 1) * 2;
        S.out = xrealloc(S.out, S.out_cap);
    }
    memcpy(S.out + S.out_len, p, n);
    S.out_len += n;
}

static void out_printf(const char *fmt, ...)
{
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(tmp)) {
        out_add(tmp, (size_t)n);
        return;
    }
    char *big = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
    va_end(ap);
    out_add(big, (size_t)n);
    free(big);
}

/* one SSE event as one HTTP chunk */
static void out_event(const char *data, size_t n)
{
    out_printf("%zx\r\n", n + 8);
    out_add("data: ", 6);
    out_add(data, n);
    out_add("\n\n\r\n", 4);
}

static void conn_close(struct conn *c);

/* Bytes of fd's send queue not yet handed to the network (on loopback: not
 * yet in the peer's receive queue). */
static int unsent(int fd)
{
    int n = 0;
    if (ioctl(fd, SIOCOUTQNSD, &n))
        return 0;
    return n;
}

/* Logs one write of the active stream: pre is the time taken just before the
 * write(); the bracket closes when the send queue holds nothing unsent. On
 * loopback TCP the kernel timestamps a segment on its way into the peer's
 * receive queue (netif_rx), inside the write() that sends it, so the
 * receiver's SO_TIMESTAMPNS time of these bytes lies in [pre, post]. Bytes
 * that could not go at once (a full window, EAGAIN) leave the bracket open
 * until the main loop sees the queue drained. */
static void log_write(struct conn *c, uint64_t pre, bool backed_up)
{
    struct stream *st = &c->st;
    if (!st->active)
        return;
    if (st->n_w == st->cap_w) {
        st->cap_w = st->cap_w ? st->cap_w * 2 : 64;
        st->wpre = xrealloc(st->wpre, st->cap_w * sizeof(uint64_t));
        st->wpost = xrealloc(st->wpost, st->cap_w * sizeof(uint64_t));
    }
    size_t i = st->n_w++;
    st->wpre[i] = pre;
    st->wpost[i] = 0;
    if (!backed_up && !c->wlen && unsent(c->fd) == 0) {
        st->wpost[i] = now_ns();
        return;
    }
    if (!st->has_open) {
        st->has_open = true;
        st->open_from = i;
        S.n_open++;
    }
}

/* Closes the open brackets of c once nothing is left unsent. */
static void close_open(struct conn *c)
{
    struct stream *st = &c->st;
    if (!st->has_open || c->wlen || unsent(c->fd) != 0)
        return;
    uint64_t t = now_ns();
    for (size_t i = st->open_from; i < st->n_w; i++)
        if (!st->wpost[i])
            st->wpost[i] = t;
    st->has_open = false;
    S.n_open--;
}

/* Writes buf now (what does not fit waits for EPOLLOUT). Returns the time
 * taken just before the write(). */
static uint64_t conn_write(struct conn *c, const char *buf, size_t n)
{
    uint64_t t = now_ns();
    if (c->wlen) { /* already backed up: queue behind */
        if (c->wlen + n > c->wcap) {
            c->wcap = (c->wlen + n) * 2;
            c->wbuf = xrealloc(c->wbuf, c->wcap);
        }
        memcpy(c->wbuf + c->wlen, buf, n);
        c->wlen += n;
        log_write(c, t, true);
        return t;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(c->fd, buf + off, n - off);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        return t; /* peer gone: EPOLLHUP/EPOLLIN will close it */
    }
    if (off < n) {
        size_t rest = n - off;
        if (rest > c->wcap) {
            c->wcap = rest * 2;
            c->wbuf = xrealloc(c->wbuf, c->wcap);
        }
        memcpy(c->wbuf, buf + off, rest);
        c->wlen = rest;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.fd = c->fd};
        epoll_ctl(S.ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = true;
    }
    log_write(c, t, off < n);
    return t;
}

static void flush_out(struct conn *c)
{
    size_t off = 0;
    while (off < c->wlen) {
        ssize_t w = write(c->fd, c->wbuf + off, c->wlen - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno == EINTR)
            continue;
        else
            break;
    }
    memmove(c->wbuf, c->wbuf + off, c->wlen - off);
    c->wlen -= off;
    close_open(c);
    if (!c->wlen && c->want_out) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = c->fd};
        epoll_ctl(S.ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = false;
    }
}

static void log_stream(struct stream *st, uint64_t end)
{
    if (!S.log)
        return;
    fprintf(S.log,
            "{\"rid\": \"%s\", \"idx\": %ld, \"outcome\": \"%s\", \"recv_ns\": %llu, "
            "\"hdr_ns\": %llu, \"ttft_nominal_ms\": %.6f, \"prompt_tokens\": %ld, "
            "\"completion_tokens\": %ld, \"cached_tokens\": %ld, \"n_messages\": %ld, "
            "\"usage_ns\": %llu, \"end_ns\": %llu, \"events\": [",
            st->rid, st->idx, FAIL_NAMES[st->outcome], (unsigned long long)st->t_recv,
            (unsigned long long)st->t_hdr, st->ttft_ms, st->prompt_tokens, st->sent_tokens,
            st->cached_tokens, st->n_messages, (unsigned long long)st->usage_ns,
            (unsigned long long)end);
    for (size_t i = 0; i < st->n_log; i++)
        fprintf(S.log, "%s[%llu, %llu, %ld, %zu]", i ? ", " : "", (unsigned long long)st->due[i],
                (unsigned long long)st->wr[i], st->tok[i], st->wi[i]);
    fprintf(S.log, "], \"writes\": [");
    for (size_t i = 0; i < st->n_w; i++)
        fprintf(S.log, "%s[%llu, %llu]", i ? ", " : "", (unsigned long long)st->wpre[i],
                (unsigned long long)st->wpost[i]);
    fprintf(S.log, "]}\n");
}

static void stream_end(struct conn *c, uint64_t t)
{
    struct stream *st = &c->st;
    if (!st->active)
        return;
    close_open(c);
    if (st->has_open)
        S.n_open--;
    if (st->running)
        S.n_running--;
    S.m_gen += st->sent_tokens;
    S.m_success += st->outcome == F_NONE;
    log_stream(st, t);
    free(st->due);
    free(st->wr);
    free(st->tok);
    free(st->wi);
    free(st->wpre);
    free(st->wpost);
    free(st->piece);
    memset(st, 0, sizeof(*st));
    c->gen++;
}

static void log_event(struct stream *st, uint64_t due, uint64_t wr, long k)
{
    if (st->n_log == st->cap_log) {
        st->cap_log = st->cap_log ? st->cap_log * 2 : 64;
        st->due = xrealloc(st->due, st->cap_log * sizeof(uint64_t));
        st->wr = xrealloc(st->wr, st->cap_log * sizeof(uint64_t));
        st->tok = xrealloc(st->tok, st->cap_log * sizeof(long));
        st->wi = xrealloc(st->wi, st->cap_log * sizeof(size_t));
    }
    st->wi[st->n_log] = 0;
    st->due[st->n_log] = due;
    st->wr[st->n_log] = wr;
    st->tok[st->n_log] = k;
    st->n_log++;
}

static double next_gap_ms(struct stream *st)
{
    const struct spec *sp = st->sp;
    if (sp->n_itl_list)
        return sp->itl_list[(size_t)(st->ev_i - 1) % sp->n_itl_list];
    return draw(&st->rng, sp->itl) * S.scale_itl;
}

static void build_token_event(struct stream *st, long k, bool last, char *tmp, size_t cap,
                              size_t *len)
{
    char text[1024];
    size_t tl = 0;
    for (long j = 0; j < k && tl + 16 < sizeof(text); j++)
        tl += (size_t)snprintf(text + tl, sizeof(text) - tl, " t%ld", st->sent_tokens + j);
    char usage[160] = "";
    if (st->continuous)
        snprintf(usage, sizeof(usage),
                 ",\"usage\":{\"prompt_tokens\":%ld,\"completion_tokens\":%ld,"
                 "\"total_tokens\":%ld}",
                 st->prompt_tokens, st->sent_tokens + k, st->prompt_tokens + st->sent_tokens + k);
    int n;
    if (st->chat)
        n = snprintf(tmp, cap,
                     "{\"id\":\"chatcmpl-calib-%ld\",\"object\":\"chat.completion.chunk\","
                     "\"created\":1700000000,\"model\":\"%s\",\"choices\":[{\"index\":0,"
                     "\"delta\":{\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":%s}]%s}",
                     st->idx, st->model, text, last ? "\"length\"" : "null", usage);
    else
        n = snprintf(tmp, cap,
                     "{\"id\":\"cmpl-calib-%ld\",\"object\":\"text_completion\",\"created\":"
                     "1700000000,\"model\":\"%s\",\"choices\":[{\"index\":0,\"text\":\"%s\","
                     "\"logprobs\":null,\"finish_reason\":%s,\"stop_reason\":null}]%s}",
                     st->idx, st->model, text, last ? "\"length\"" : "null", usage);
    *len = n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

static void append_tail(struct stream *st)
{
    char tmp[512];
    if (st->include_usage && st->sp->usage) {
        int n = snprintf(tmp, sizeof(tmp),
                         "{\"id\":\"%s-calib-%ld\",\"object\":\"%s\",\"created\":1700000000,"
                         "\"model\":\"%s\",\"choices\":[],\"usage\":{\"prompt_tokens\":%ld,"
                         "\"completion_tokens\":%ld,\"total_tokens\":%ld}}",
                         st->chat ? "chatcmpl" : "cmpl", st->idx,
                         st->chat ? "chat.completion.chunk" : "text_completion", st->model,
                         st->prompt_tokens, st->sent_tokens, st->prompt_tokens + st->sent_tokens);
        out_event(tmp, (size_t)n);
    }
    out_event("[DONE]", 6);
    out_add("0\r\n\r\n", 5);
}

/* Sends what is due for this stream. */
static void stream_step(struct conn *c, uint64_t due)
{
    struct stream *st = &c->st;
    const struct spec *sp = st->sp;
    char tmp[4096];
    size_t len;
    if (st->piece) { /* continuing a split event */
        size_t n = st->piece_len - st->piece_off;
        if (n > (size_t)sp->split_bytes)
            n = (size_t)sp->split_bytes;
        conn_write(c, st->piece + st->piece_off, n);
        st->piece_off += n;
        if (st->piece_off < st->piece_len) {
            heap_push(due + (uint64_t)(sp->split_gap_us * 1e3), c->fd, c->gen);
            return;
        }
        free(st->piece);
        st->piece = NULL;
        if (st->done_sending) {
            st->usage_ns = now_ns();
            stream_end(c, st->usage_ns);
            return;
        }
        heap_push(st->next_due, c->fd, c->gen);
        return;
    }
    out_reset();
    long first_ev = st->ev_i;
    size_t first_log = st->n_log;
    uint64_t cur_due = due;
    for (;;) {
        if (sp->fail && st->ev_i == sp->fail_after && sp->fail != F_HTTP500) {
            st->outcome = sp->fail;
            if (sp->fail == F_DROP) {
                if (S.out_len)
                    conn_write(c, S.out, S.out_len);
                uint64_t t = now_ns();
                for (size_t i = first_log; i < st->n_log; i++) {
                    st->wr[i] = t;
                    st->wi[i] = st->n_w ? st->n_w - 1 : 0;
                }
                stream_end(c, t);
                conn_close(c);
                return;
            }
            if (sp->fail == F_MALFORMED) {
                static const char bad[] = "{\"choices\": [{\"text\": \"x\"}, oops";
                out_event(bad, sizeof(bad) - 1);
            } else if (sp->fail == F_ERROR_EVENT) {
                static const char err[] = "{\"error\": {\"message\": \"injected failure\", "
                                          "\"type\": \"InternalServerError\", \"code\": 500}}";
                out_event(err, sizeof(err) - 1);
                out_event("[DONE]", 6);
                out_add("0\r\n\r\n", 5);
            }
            /* stall: nothing more is sent; the client must give up */
            st->stalled = true;
            break;
        }
        long k = sp->n_tpe ? sp->tpe[(size_t)st->ev_i % sp->n_tpe] : 1;
        if (k > st->total_tokens - st->sent_tokens)
            k = st->total_tokens - st->sent_tokens;
        bool last = st->sent_tokens + k >= st->total_tokens;
        build_token_event(st, k, last, tmp, sizeof(tmp), &len);
        out_event(tmp, len);
        log_event(st, cur_due, 0, k);
        st->sent_tokens += k;
        st->ev_i++;
        if (last) {
            append_tail(st);
            st->done_sending = true;
            break;
        }
        double gap = next_gap_ms(st);
        st->next_due = cur_due + (uint64_t)llround(gap * 1e6);
        /* a gap of 0 (or a due time already passed) shares this write */
        if (sp->split_bytes > 0 || st->next_due > now_ns())
            break;
        cur_due = st->next_due;
    }
    (void)first_ev;
    if (sp->split_bytes > 0 && S.out_len > (size_t)sp->split_bytes) {
        st->piece = xrealloc(NULL, S.out_len);
        memcpy(st->piece, S.out, S.out_len);
        st->piece_len = S.out_len;
        st->piece_off = (size_t)sp->split_bytes;
        uint64_t t = conn_write(c, S.out, (size_t)sp->split_bytes);
        for (size_t i = first_log; i < st->n_log; i++) {
            st->wr[i] = t;
            st->wi[i] = st->n_w - 1;
        }
        heap_push(due + (uint64_t)(sp->split_gap_us * 1e3), c->fd, c->gen);
        return;
    }
    uint64_t t = S.out_len ? conn_write(c, S.out, S.out_len) : now_ns();
    for (size_t i = first_log; i < st->n_log; i++) {
        st->wr[i] = t;
        st->wi[i] = st->n_w ? st->n_w - 1 : 0;
    }
    if (st->done_sending) {
        st->usage_ns = t;
        stream_end(c, t);
    } else if (!st->stalled) {
        heap_push(st->next_due, c->fd, c->gen);
    } else if (st->outcome == F_MALFORMED || st->outcome == F_ERROR_EVENT) {
        int outcome = st->outcome;
        stream_end(c, t);
        if (outcome == F_MALFORMED)
            conn_close(c); /* the stream is broken; nothing valid can follow */
    }
}

/* ---- prefix accounting ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
    return splitmix(&z) | 1; /* 0 marks an empty slot */
}

static bool pset_has(uint64_t h)
{
    if (!S.pset_cap)
        return false;
    for (size_t i = h & (S.pset_cap - 1);; i = (i + 1) & (S.pset_cap - 1)) {
        if (S.pset[i] == h)
            return true;
        if (!S.pset[i])
            return false;
    }
}

static void pset_add(uint64_t h)
{
    if (S.pset_n >= ((size_t)1 << 26) || pset_has(h))
        return; /* bounded: past 64 Mi prefixes nothing new is remembered */
    if ((S.pset_n + 1) * 2 > S.pset_cap) {
        size_t cap = S.pset_cap ? S.pset_cap * 2 : 1 << 16;
        uint64_t *old = S.pset, oc = S.pset_cap;
        S.pset = calloc(cap, sizeof(uint64_t));
        if (!S.pset)
            die("out of memory");
        S.pset_cap = cap;
        S.pset_n = 0;
        for (size_t i = 0; i < oc; i++)
            if (old[i])
                pset_add(old[i]);
        free(old);
    }
    size_t i = h & (S.pset_cap - 1);
    while (S.pset[i])
        i = (i + 1) & (S.pset_cap - 1);
    S.pset[i] = h;
    S.pset_n++;
}

struct toks {
    uint64_t *v;
    size_t n, cap;
};

static void tok_add(struct toks *t, uint64_t v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = xrealloc(t->v, t->cap * sizeof(uint64_t));
    }
    t->v[t->n++] = v;
}

static void tok_words(struct toks *t, const char *s)
{
    while (s && *s) {
        while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            break;
        uint64_t h = 1469598103934665603ull;
        for (; *s && *s != ' ' && *s != '\n' && *s != '\t' && *s != '\r'; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ull;
        tok_add(t, h);
    }
}

/* The request's prompt as tokens (see the top of the file). */
static void prompt_tokens_of(json_t *body, bool chat, struct toks *t, long *n_messages)
{
    *n_messages = 0;
    if (!chat) {
        json_t *p = json_object_get(body, "prompt"), *v;
        size_t i;
        if (json_is_array(p) && !json_is_string(json_array_get(p, 0))) {
            json_array_foreach(p, i, v) tok_add(t, (uint64_t)json_integer_value(v) * 2 + 1);
        } else {
            tok_words(t, json_string_value(json_is_array(p) ? json_array_get(p, 0) : p));
        }
        return;
    }
    size_t i, j;
    json_t *m, *part;
    json_array_foreach(json_object_get(body, "messages"), i, m)
    {
        (*n_messages)++;
        const char *role = json_string_value(json_object_get(m, "role"));
        tok_add(t, role && !strcmp(role, "assistant") ? 2
                   : role && !strcmp(role, "system")  ? 4
                                                      : 6);
        json_t *ct = json_object_get(m, "content");
        if (json_is_string(ct))
            tok_words(t, json_string_value(ct));
        json_array_foreach(ct, j, part)
            tok_words(t, json_string_value(json_object_get(part, "text")));
    }
}

/* Tokens of this prompt a prompt before it started with; then remembers it. */
static long prefix_account(json_t *body, bool chat, long *n_messages)
{
    struct toks t = {0};
    prompt_tokens_of(body, chat, &t, n_messages);
    uint64_t h = 0;
    long hit = 0;
    bool miss = false;
    for (size_t k = 0; k < t.n; k++) {
        h = mix(h, t.v[k]);
        if (!miss && pset_has(h))
            hit += !(chat && t.v[k] < 8); /* role markers are not prompt tokens */
        else
            miss = true;
        pset_add(h);
    }
    free(t.v);
    return hit;
}

/* ---- requests ---- */

static long count_words(const char *s)
{
    long n = 0;
    bool in = false;
    for (; s && *s; s++) {
        bool sp = *s == ' ' || *s == '\n' || *s == '\t' || *s == '\r';
        if (!sp && !in)
            n++;
        in = !sp;
    }
    return n;
}

static long prompt_len(json_t *body, bool chat)
{
    if (!chat) {
        json_t *p = json_object_get(body, "prompt");
        if (json_is_array(p)) {
            json_t *f = json_array_get(p, 0);
            if (json_is_string(f))
                return count_words(json_string_value(f));
            return (long)json_array_size(p);
        }
        return count_words(json_string_value(p));
    }
    long n = 0;
    size_t i, j;
    json_t *m, *part;
    json_array_foreach(json_object_get(body, "messages"), i, m)
    {
        json_t *ct = json_object_get(m, "content");
        if (json_is_string(ct))
            n += count_words(json_string_value(ct));
        json_array_foreach(ct, j, part) n +=
            count_words(json_string_value(json_object_get(part, "text")));
    }
    return n;
}

static void respond_type(struct conn *c, int code, const char *reason, const char *type,
                         const char *body)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof(hdr),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: "
                     "%zu\r\n\r\n",
                     code, reason, type, strlen(body));
    out_reset();
    out_add(hdr, (size_t)n);
    out_add(body, strlen(body));
    conn_write(c, S.out, S.out_len);
}

static void respond(struct conn *c, int code, const char *reason, const char *body)
{
    respond_type(c, code, reason, "application/json", body);
}

/* GET /metrics: Prometheus text exposition with vLLM's metric names. */
static void respond_metrics(struct conn *c)
{
    double kv = 0;
    for (size_t i = 0; i < S.n_conns; i++) {
        const struct conn *o = S.conns[i];
        if (o && o->st.active && o->st.running)
            kv += (double)(o->st.prompt_tokens + o->st.sent_tokens);
    }
    kv /= S.kv_capacity;
    char body[2048];
    snprintf(body, sizeof(body),
             "# HELP vllm:num_requests_running Requests streaming now.\n"
             "# TYPE vllm:num_requests_running gauge\n"
             "vllm:num_requests_running{model_name=\"calib-model\"} %ld\n"
             "# HELP vllm:num_requests_waiting Requests held before their first byte.\n"
             "# TYPE vllm:num_requests_waiting gauge\n"
             "vllm:num_requests_waiting{model_name=\"calib-model\"} %zu\n"
             "# TYPE vllm:kv_cache_usage_perc gauge\n"
             "vllm:kv_cache_usage_perc{model_name=\"calib-model\"} %.17g\n"
             "# TYPE vllm:prefix_cache_queries counter\n"
             "vllm:prefix_cache_queries_total{model_name=\"calib-model\"} %lld\n"
             "# TYPE vllm:prefix_cache_hits counter\n"
             "vllm:prefix_cache_hits_total{model_name=\"calib-model\"} %lld\n"
             "# TYPE vllm:prompt_tokens counter\n"
             "vllm:prompt_tokens_total{model_name=\"calib-model\"} %lld\n"
             "# TYPE vllm:generation_tokens counter\n"
             "vllm:generation_tokens_total{model_name=\"calib-model\"} %lld\n"
             "# TYPE vllm:num_preemptions counter\n"
             "vllm:num_preemptions_total{model_name=\"calib-model\"} 0\n"
             "# TYPE vllm:request_success counter\n"
             "vllm:request_success_total{finished_reason=\"length\",model_name=\"calib-model\"} "
             "%lld\n",
             S.n_running, S.n_held, kv, S.m_queries, S.m_hits, S.m_prompt, S.m_gen, S.m_success);
    respond_type(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body);
}

/* POST /tokenize: the prompt's length as the requests count it. */
static void respond_tokenize(struct conn *c, const char *body, size_t blen)
{
    json_error_t je;
    json_t *j = json_loadb(body, blen, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        respond(c, 400, "Bad Request", "{\"error\":\"body is not a JSON object\"}");
        return;
    }
    long n = prompt_len(j, json_object_get(j, "messages") != NULL);
    json_decref(j);
    out_reset();
    out_printf("{\"count\":%ld,\"max_model_len\":1048576,\"tokens\":[", n);
    for (long k = 0; k < n && k < 1000000; k++)
        out_printf(k ? ",%ld" : "%ld", 1000 + k);
    out_add("]}", 2);
    char *copy = xrealloc(NULL, S.out_len + 1);
    memcpy(copy, S.out, S.out_len);
    copy[S.out_len] = 0;
    respond(c, 200, "OK", copy);
    free(copy);
}

/* Headers now, the first event ttft after base. */
static void start_stream(struct conn *c, uint64_t base)
{
    struct stream *st = &c->st;
    static const char hdr[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                              "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    st->held = false;
    st->running = true;
    S.n_running++;
    st->t_hdr = conn_write(c, hdr, sizeof(hdr) - 1);
    long uncached = st->prompt_tokens - st->cached_tokens;
    st->ttft_ms = draw(&st->rng, st->sp->ttft) * S.scale_ttft +
                  st->sp->prefill_ms_per_token * (double)(uncached > 0 ? uncached : 0);
    st->next_due = base + (uint64_t)llround(st->ttft_ms * 1e6);
    if (st->next_due <= now_ns())
        stream_step(c, st->next_due); /* zero-delay mode: no timer round trip */
    else
        heap_push(st->next_due, c->fd, c->gen);
}

/* hold_until reached (or hold_max_ms passed): every held response starts,
 * its TTFT counted from now. */
static void release_held(void)
{
    S.released = true;
    uint64_t now = now_ns();
    for (size_t i = 0; i < S.n_held; i++) {
        int fd = S.held_fd[i];
        struct conn *c = (size_t)fd < S.n_conns ? S.conns[fd] : NULL;
        if (c && c->gen == S.held_gen[i] && c->st.active && c->st.held)
            start_stream(c, now);
    }
    S.n_held = 0;
}

static void handle(struct conn *c, const char *method, const char *path, const char *rid,
                   const char *body, size_t blen, uint64_t t_recv)
{
    if (!strcmp(method, "GET") && !strcmp(path, "/v1/models")) {
        respond(c, 200, "OK",
                "{\"object\":\"list\",\"data\":[{\"id\":\"calib-model\",\"object\":\"model\","
                "\"root\":\"calib-model\"}]}");
        return;
    }
    if (!strcmp(method, "GET") && !strcmp(path, "/metrics")) {
        respond_metrics(c);
        return;
    }
    if (!strcmp(method, "POST") && !strcmp(path, "/tokenize")) {
        respond_tokenize(c, body, blen);
        return;
    }
    if (!strcmp(path, "/health") || !strcmp(path, "/start_profile") ||
        !strcmp(path, "/stop_profile")) {
        respond(c, 200, "OK", "{}");
        return;
    }
    bool chat = strcmp(path, "/v1/chat/completions") == 0;
    if (strcmp(method, "POST") != 0 || (!chat && strcmp(path, "/v1/completions") != 0)) {
        respond(c, 404, "Not Found", "{\"error\":\"not found\"}");
        return;
    }
    json_error_t je;
    json_t *j = json_loadb(body, blen, 0, &je);
    if (!json_is_object(j)) {
        json_decref(j);
        respond(c, 400, "Bad Request", "{\"error\":\"body is not a JSON object\"}");
        return;
    }
    long idx = S.counter++;
    bool warm = strstr(rid, "warmup") != NULL;
    if (S.match_rid) {
        size_t n = strlen(rid);
        while (n && rid[n - 1] >= '0' && rid[n - 1] <= '9')
            n--;
        idx = rid[n] ? atol(rid + n) : -1;
    }
    const struct spec *sp = !warm && idx >= 0 && (size_t)idx < S.n_reqs ? &S.reqs[idx] : &S.def;
    struct stream *st = &c->st;
    memset(st, 0, sizeof(*st));
    st->active = true;
    st->idx = warm ? -1 : idx;
    snprintf(st->rid, sizeof(st->rid), "%s", rid);
    const char *model = json_string_value(json_object_get(j, "model"));
    snprintf(st->model, sizeof(st->model), "%s", model ? model : "calib-model");
    for (char *q = st->model; *q; q++)
        if (*q == '"' || *q == '\\')
            *q = '_';
    st->chat = chat;
    json_t *so = json_object_get(j, "stream_options");
    st->include_usage = json_is_true(json_object_get(so, "include_usage"));
    st->continuous = json_is_true(json_object_get(so, "continuous_usage_stats"));
    json_t *mt = json_object_get(j, chat ? "max_completion_tokens" : "max_tokens");
    if (!mt)
        mt = json_object_get(j, "max_tokens");
    long max_tokens = json_is_integer(mt) ? (long)json_integer_value(mt) : 16;
    st->prompt_tokens = sp->prompt_tokens >= 0 ? sp->prompt_tokens : prompt_len(j, chat);
    st->cached_tokens = prefix_account(j, chat, &st->n_messages);
    S.m_queries += st->prompt_tokens;
    S.m_hits += st->cached_tokens;
    S.m_prompt += st->prompt_tokens;
    st->total_tokens = sp->tokens >= 0 ? sp->tokens : max_tokens;
    if (st->total_tokens < 1)
        st->total_tokens = 1;
    bool streaming = json_is_true(json_object_get(j, "stream"));
    json_decref(j);
    st->sp = sp;
    st->rng = S.seed * 0x9e3779b97f4a7c15ull + (uint64_t)(idx + 1) * 0xd1b54a32d192ed03ull;
    st->t_recv = t_recv;
    if (sp->fail == F_HTTP500) {
        st->outcome = F_HTTP500;
        respond(c, 500, "Internal Server Error",
                "{\"object\":\"error\",\"message\":\"injected failure\",\"type\":"
                "\"InternalServerError\",\"code\":500}");
        st->t_hdr = now_ns();
        stream_end(c, st->t_hdr);
        return;
    }
    if (!streaming) {
        stream_end(c, now_ns());
        respond(c, 400, "Bad Request", "{\"error\":\"only stream=true is supported\"}");
        return;
    }
    if (!S.released) {
        if (!S.n_seen_hold++)
            S.hold_deadline = t_recv + (uint64_t)(S.hold_max_ms * 1e6);
        if (S.n_held == S.cap_held) {
            S.cap_held = S.cap_held ? S.cap_held * 2 : 1024;
            S.held_fd = xrealloc(S.held_fd, S.cap_held * sizeof(int));
            S.held_gen = xrealloc(S.held_gen, S.cap_held * sizeof(uint32_t));
        }
        S.held_fd[S.n_held] = c->fd;
        S.held_gen[S.n_held++] = c->gen;
        st->held = true;
        if (S.n_seen_hold >= S.hold_until)
            release_held();
        return;
    }
    start_stream(c, t_recv);
}

static void conn_close(struct conn *c)
{
    if (c->fd < 0)
        return;
    if (c->st.active) {
        if (!c->st.outcome)
            c->st.outcome = F_CLOSED; /* closed by the client before the end */
        stream_end(c, now_ns());
    }
    epoll_ctl(S.ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    S.conns[c->fd] = NULL;
    free(c->rbuf);
    free(c->wbuf);
    free(c);
}

/* Parses every complete request in the read buffer. */
static void parse_requests(struct conn *c)
{
    for (;;) {
        if (c->st.active)
            return; /* one request at a time per connection (HTTP/1.1, no pipelining) */
        char *end = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
        if (!end)
            return;
        size_t hlen = (size_t)(end - c->rbuf) + 4;
        char method[16] = "", path[256] = "", rid[160] = "";
        long clen = 0;
        sscanf(c->rbuf, "%15s %255s", method, path);
        char *line = memchr(c->rbuf, '\n', hlen);
        while (line && line < end) {
            line++;
            if (!strncasecmp(line, "content-length:", 15))
                clen = atol(line + 15);
            else if (!strncasecmp(line, "x-request-id:", 13))
                sscanf(line + 13, " %159[^\r\n]", rid);
            line = memchr(line, '\n', (size_t)(end + 2 - line));
        }
        if (clen < 0 || clen > (64L << 20)) {
            conn_close(c);
            return;
        }
        if (c->rlen < hlen + (size_t)clen)
            return;
        uint64_t t = now_ns();
        handle(c, method, path, rid, c->rbuf + hlen, (size_t)clen, t);
        if (S.conns[c->fd] != c)
            return;
        size_t used = hlen + (size_t)clen;
        memmove(c->rbuf, c->rbuf + used, c->rlen - used);
        c->rlen -= used;
    }
}

static void on_readable(struct conn *c)
{
    int fd = c->fd;
    for (;;) {
        if (c->rcap - c->rlen < 65536) {
            if (c->rcap > (64u << 20)) {
                conn_close(c);
                return;
            }
            c->rcap = c->rcap ? c->rcap * 2 : 131072;
            c->rbuf = xrealloc(c->rbuf, c->rcap);
        }
        ssize_t r = read(fd, c->rbuf + c->rlen, c->rcap - c->rlen - 1);
        if (r > 0) {
            c->rlen += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        conn_close(c); /* EOF or error */
        return;
    }
    parse_requests(c);
}

static void on_accept(void)
{
    for (;;) {
        int fd = accept4(S.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if ((size_t)fd >= S.n_conns) {
            size_t n = (size_t)fd * 2 + 64;
            S.conns = xrealloc(S.conns, n * sizeof(struct conn *));                  // NOLINT
            memset(S.conns + S.n_conns, 0, (n - S.n_conns) * sizeof(struct conn *)); // NOLINT
            S.n_conns = n;
        }
        struct conn *c = calloc(1, sizeof(*c));
        if (!c)
            die("out of memory");
        c->fd = fd;
        S.conns[fd] = c;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = fd};
        epoll_ctl(S.ep, EPOLL_CTL_ADD, fd, &ev);
    }
}

int main(int argc, char **argv)
{
    const char *sched = NULL, *port_file = NULL, *log_path = NULL;
    int port = 0;
    double exit_after = 600;
    S.scale_ttft = S.scale_itl = 1;
    S.seed_override = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--schedule") && v)
            sched = argv[++i];
        else if (!strcmp(a, "--port") && v)
            port = atoi(argv[++i]);
        else if (!strcmp(a, "--port-file") && v)
            port_file = argv[++i];
        else if (!strcmp(a, "--log") && v)
            log_path = argv[++i];
        else if (!strcmp(a, "--exit-after-s") && v)
            exit_after = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && v)
            S.seed_override = atol(argv[++i]);
        else if (!strcmp(a, "--scale-ttft") && v)
            S.scale_ttft = atof(argv[++i]);
        else if (!strcmp(a, "--scale-itl") && v)
            S.scale_itl = atof(argv[++i]);
        else
            die("usage: calib_server --schedule FILE [--port N] [--port-file F] [--log F] "
                "[--exit-after-s S] [--seed N] [--scale-ttft F] [--scale-itl F]");
    }
    if (!sched)
        die("--schedule is required");
    load_schedule(sched);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    if (log_path) {
        S.log = fopen(log_path, "w");
        if (!S.log)
            die("cannot open %s", log_path);
        setvbuf(S.log, NULL, _IOFBF, 1 << 20);
    }
    S.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(S.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(S.lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(S.lfd, 4096))
        die("cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
    socklen_t sl = sizeof(sa);
    getsockname(S.lfd, (struct sockaddr *)&sa, &sl);
    port = ntohs(sa.sin_port);
    if (port_file) {
        char tmp[4200];
        snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f) || rename(tmp, port_file))
            die("cannot write %s", port_file);
    }
    printf("calib_server listening on 127.0.0.1:%d\n", port);
    fflush(stdout);
    S.ep = epoll_create1(EPOLL_CLOEXEC);
    S.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = S.lfd};
    epoll_ctl(S.ep, EPOLL_CTL_ADD, S.lfd, &ev);
    ev.data.fd = S.tfd;
    epoll_ctl(S.ep, EPOLL_CTL_ADD, S.tfd, &ev);
    uint64_t deadline = now_ns() + (uint64_t)(exit_after * 1e9);
    struct epoll_event evs[256];
    while (!g_stop && now_ns() < deadline) {
        /* everything that is due */
        uint64_t now = now_ns();
        while (S.n_heap && S.heap[0].due <= now) {
            struct hent h = heap_pop();
            struct conn *c = (size_t)h.fd < S.n_conns ? S.conns[h.fd] : NULL;
            if (c && c->gen == h.gen && c->st.active)
                stream_step(c, h.due);
            now = now_ns();
        }
        if (!S.released && S.n_held && now >= S.hold_deadline)
            release_held();
        if (S.n_open) /* brackets waiting for their bytes to leave */
            for (size_t i = 0; i < S.n_conns; i++)
                if (S.conns[i] && S.conns[i]->st.active && S.conns[i]->st.has_open)
                    close_open(S.conns[i]);
        arm(S.n_heap ? S.heap[0].due : 0);
        int n = epoll_wait(S.ep, evs, 256,
                           S.n_open || (!S.released && S.n_held) ? 1
                           : S.n_heap                            ? -1
                                                                 : 200);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == S.tfd) {
                uint64_t ticks;
                ssize_t r = read(S.tfd, &ticks, sizeof(ticks));
                (void)r;
                S.armed = 0;
                continue;
            }
            if (fd == S.lfd) {
                on_accept();
                continue;
            }
            struct conn *c = (size_t)fd < S.n_conns ? S.conns[fd] : NULL;
            if (!c)
                continue;
            if (evs[i].events & EPOLLOUT)
                flush_out(c);
            if (S.conns[fd] == c && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
                on_readable(c);
        }
        if (!S.n_heap && S.log)
            fflush(S.log);
    }
    for (size_t i = 0; i < S.n_conns; i++)
        if (S.conns[i])
            conn_close(S.conns[i]);
    if (S.log)
        fclose(S.log);
    return 0;
}
