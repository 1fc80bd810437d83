/* The HTTP engine: one thread, libcurl's multi interface driven by epoll
 * (curl_multi_socket_action), a timerfd for sub-millisecond dispatch times.
 *
 * Why this shape: Python clients take their timestamps after the event loop
 * got round to the coroutine, so loop lag lands in TTFT and ITL. Here an SSE
 * event gets the kernel's receive time of the data holding its first byte
 * (SO_TIMESTAMPNS, peeked just before curl reads the socket; see on_data for
 * when it applies), else the time of that read, taken in curl's write
 * callback right after the recv(), before any parsing; the per-request
 * record says which (events_src). Connections are kept alive and reused by
 * curl's connection cache; each request slot (easy handle, body buffer, SSE
 * parser) is reused, so nothing is allocated per token.
 *
 * Arrival times are absolute offsets from t0 computed before the run (vLLM's
 * semantics); with --max-concurrency a request that arrives while every slot
 * is busy waits in order, and that wait is its client queue time.
 */
#include <errno.h>
#include <linux/tcp.h>
#include <math.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include <magpie/fmt.h>
#include <magpie/loadgen.h>

#include "loadgen_int.h"

#define MAX_EVENTS_PER_REQ (1u << 24)
#define MAX_BODY ((size_t)1 << 30)
#define ERRBODY_MAX 512
#define TEXT_MAX ((size_t)4 << 20)
#define HOUSEKEEPING_NS 50000000ull

struct engine;

struct slot {
    struct engine *e;
    CURL *easy;
    struct curl_slist *hdrs;
    struct mp_buf body;
    struct mp_loadgen_sse sse;
    struct mp_loadgen_record *rec;
    struct mp_loadgen_record scratch; /* warm-up requests are measured here */
    uint32_t ev_cap, scratch_cap;
    int fd; /* socket curl uses for this transfer, -1 when none */
    bool warmup, active, removed;
    int64_t last_cum; /* continuous usage: completion tokens so far */
    int64_t usage_completion, usage_prompt;
    uint64_t last_byte_ns;
    char fail[320];
    char reason[96];
    char errbuf[CURL_ERROR_SIZE];
    struct mp_buf errbody;
    struct mp_buf text;
};

struct engine {
    const struct mp_loadgen_config *cfg;
    const struct mp_loadgen_dataset *ds;
    struct mp_loadgen_result *res;
    CURLM *multi;
    int ep, tfd;
    uint64_t curl_deadline; /* 0 = none */
    uint64_t armed;
    struct slot **slots;
    size_t n_slots, cap_slots;
    struct slot **free_slots;
    size_t n_free;
    size_t in_flight, done, failed;
    size_t phase_total;
    bool phase_warmup;
    char url[2048];
    bool tls;    /* https: peeked bytes are TLS records, not HTTP text */
    char *extra; /* extra body members without the outer braces */
    struct curl_slist *dummy;
    uint64_t phase_t0, next_house;
    struct mp_diag *d;
    int err;
    /* kernel receive time of the newest unread byte on rx_fd, peeked just
     * before curl reads that socket (0: unknown, use the read time) */
    int rx_fd;
    uint64_t rx_ns;
    uint64_t rx_first_ns;    /* kernel time of the oldest unread segment (0: none) */
    struct slot *rx_slot;    /* its first event was given rx_first_ns */
    size_t n_roots;          /* requests that are not a later turn of a session */
    uint64_t rx_bytes;       /* the socket's bytes received when peeked */
    bool rx_clean;           /* the unread bytes start at a write boundary, not "\r" or "\n" */
    int rx_decided;          /* -1: not yet decided for this read, 0: read time, 1: rx_ns */
    int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
    uint64_t offset_span;    /* width of the clock reading behind real_minus_mono */
    struct loadgen_sched sched;
    char **answers; /* sessions with history: each turn's answer (JSON-escaped), for the next */
    int32_t *turn;  /* sessions: each request's turn in its session */
};

void mp_loadgen_config_default(struct mp_loadgen_config *c)
{
    memset(c, 0, sizeof(*c));
    c->endpoint = "/v1/completions";
    c->api = MP_LOADGEN_API_COMPLETIONS;
    c->request_id_prefix = "bench-magpie-";
    c->request_rate = INFINITY;
    c->burstiness = 1.0;
    c->request_timeout_s = 6 * 3600;
    c->kernel_timestamps = true;
}

void mp_loadgen_result_free(struct mp_loadgen_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->recs[i].event_ns);
        free(r->recs[i].event_tokens);
        free(r->recs[i].event_src);
    }
    free(r->recs);
    free(r->scrapes);
    mp_arena_free(r->arena);
    free(r);
}

/* ---- per-request callbacks ---- */

static int grow_events(struct slot *s)
{
    struct mp_loadgen_record *rec = s->rec;
    if (rec->n_events < s->ev_cap)
        return 0;
    if (s->ev_cap >= MAX_EVENTS_PER_REQ)
        return MP_ENOMEM;
    uint32_t cap = s->ev_cap ? s->ev_cap * 2 : 64;
    uint64_t *ns = mp_reallocarray(rec->event_ns, cap, sizeof(*ns));
    if (!ns)
        return MP_ENOMEM;
    rec->event_ns = ns;
    uint8_t *src = realloc(rec->event_src, cap);
    if (!src)
        return MP_ENOMEM;
    rec->event_src = src;
    if (s->e->cfg->continuous_usage) {
        uint16_t *tk = mp_reallocarray(rec->event_tokens, cap, sizeof(*tk));
        if (!tk)
            return MP_ENOMEM;
        rec->event_tokens = tk;
    }
    s->ev_cap = cap;
    if (s->warmup)
        s->scratch_cap = cap;
    return 0;
}

static int on_sse(const struct mp_loadgen_sse_event *ev, void *user)
{
    struct slot *s = user;
    struct mp_loadgen_record *rec = s->rec;
    if (ev->prompt_tokens >= 0)
        s->usage_prompt = ev->prompt_tokens;
    switch (ev->kind) {
    case MP_LOADGEN_SSE_TOKEN:
        if (grow_events(s)) {
            snprintf(s->fail, sizeof(s->fail), "too many stream events (limit %u)",
                     MAX_EVENTS_PER_REQ);
            return -1;
        }
        /* bit 0 of the time says where it came from (see on_data) */
        rec->event_ns[rec->n_events] = ev->t_ns & ~(uint64_t)1;
        rec->event_src[rec->n_events] = (uint8_t)(ev->t_ns & 1);
        if (rec->event_tokens) {
            int64_t delta = 0;
            if (ev->completion_tokens >= 0) {
                delta = ev->completion_tokens - s->last_cum;
                s->last_cum = ev->completion_tokens;
            }
            rec->event_tokens[rec->n_events] = (uint16_t)(delta < 0       ? 0
                                                          : delta > 65535 ? 65535
                                                                          : delta);
        }
        rec->n_events++;
        if (ev->completion_tokens >= 0)
            s->usage_completion = ev->completion_tokens;
        if ((s->e->cfg->keep_text || s->e->ds->history) && ev->text_len && !s->warmup)
            (void)mp_buf_append(&s->text, ev->text, ev->text_len); /* capped: loses the tail */
        return 0;
    case MP_LOADGEN_SSE_USAGE:
        if (ev->completion_tokens >= 0)
            s->usage_completion = ev->completion_tokens;
        return 0;
    case MP_LOADGEN_SSE_ERROR:
        if (!s->fail[0])
            snprintf(s->fail, sizeof(s->fail), "server sent an error event: %.*s",
                     (int)(ev->msg_len > 200 ? 200 : ev->msg_len), ev->msg ? ev->msg : "");
        return 0;
    case MP_LOADGEN_SSE_BAD: {
        size_t n = s->sse.data.len > 80 ? 80 : s->sse.data.len;
        snprintf(s->fail, sizeof(s->fail), "malformed SSE event (%.*s): %.*s", (int)ev->msg_len,
                 ev->msg, (int)n, s->sse.data.data ? s->sse.data.data : "");
        return -1; /* stop reading this response, as vLLM's json.loads would */
    }
    case MP_LOADGEN_SSE_DONE:
    case MP_LOADGEN_SSE_OTHER:
    default:
        return 0;
    }
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *user)
{
    struct slot *s = user;
    size_t n = size * nmemb;
    /* the oldest unread segment held the headers, not the first event: the
     * events read with them get the newest segment's time (see on_data) */
    if (s->fd == s->e->rx_fd)
        s->e->rx_first_ns = 0;
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        const char *sp = memchr(p, ' ', n);
        s->reason[0] = 0;
        if (sp) {
            const char *r = sp + 1;
            while (r < p + n && *r >= '0' && *r <= '9')
                r++;
            while (r < p + n && *r == ' ')
                r++;
            size_t rl = (size_t)(p + n - r);
            while (rl && (r[rl - 1] == '\r' || r[rl - 1] == '\n'))
                rl--;
            snprintf(s->reason, sizeof(s->reason), "%.*s", (int)rl, r);
        }
    } else if (n <= 2 && (p[0] == '\r' || p[0] == '\n')) {
        long code = 0;
        curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200)
            s->rec->headers_ns = mp_time_ns();
    }
    return n;
}

/* Bytes the kernel has received on fd so far (0 if it cannot say). */
static uint64_t rx_bytes(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
        len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
        return 0;
    return ti.tcpi_bytes_received;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *user)
{
    uint64_t now = mp_time_ns(); /* first: nothing below may delay the timestamp */
    struct slot *s = user;
    struct engine *e = s->e;
    bool kernel = false;
    if (e->rx_ns && s->fd == e->rx_fd) {
        /* The peeked time is the arrival of the newest byte that was unread
         * then: every byte present at the peek arrived at or before it, and
         * it is the arrival of one of them (the kernel stamps a segment as
         * it enters the receive queue; a later segment merged into an
         * unread one carries its own, later time). It dates the events of
         * this read when the read starts at an event boundary and every
         * byte curl has read since the peek was already there (the socket's
         * received-byte count has not moved). Otherwise (the read begins
         * with the rest of an earlier event or its chunk trailer, or bytes
         * arrived after the peek) events starting in it arrived at an
         * unknown time: they get the read time, an upper bound. Decided on
         * the first callback of the read; later callbacks check the count. */
        if (e->rx_decided < 0)
            e->rx_decided =
                e->rx_clean && !s->sse.in_event && e->rx_ns <= now && e->rx_ns >= s->rec->start_ns;
        if (e->rx_decided && rx_bytes(s->fd) != e->rx_bytes)
            e->rx_decided = 0;
        if (e->rx_decided) {
            now = e->rx_ns;
            kernel = true;
            /* the read's first event starts at the queue's head: the head
             * segment's time is its arrival or a later one merged into it,
             * no later than the newest */
            if (e->rx_first_ns && e->rx_first_ns <= e->rx_ns && !e->rx_slot) {
                s->sse.first_t_ns = e->rx_first_ns & ~(uint64_t)1;
                e->rx_slot = s;
            }
        }
    }
    /* bit 0 carries the source to on_sse: 0 kernel time, 1 read time */
    now = kernel ? now & ~(uint64_t)1 : now | 1;
    size_t n = size * nmemb;
    s->last_byte_ns = now;
    long code = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) {
        size_t room = ERRBODY_MAX - s->errbody.len;
        (void)mp_buf_append(&s->errbody, p, n < room ? n : room);
        return n;
    }
    s->rec->n_chunks++;
    int rc = mp_loadgen_sse_feed(&s->sse, p, n, now);
    if (rc) {
        if (rc == MP_ENOMEM && !s->fail[0])
            snprintf(s->fail, sizeof(s->fail), "an SSE event exceeded the size limit");
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    return n;
}

/* ---- curl <-> epoll glue ---- */

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *user, void *sockp)
{
    struct engine *e = user;
    struct slot *owner = NULL;
    if (easy)
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&owner);
    if (owner)
        owner->fd = what == CURL_POLL_REMOVE ? -1 : fd;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(e->ep, EPOLL_CTL_DEL, fd, NULL); /* may already be closed: ignore */
        return 0;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.data.fd = fd;
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    if (sockp) {
        if (epoll_ctl(e->ep, EPOLL_CTL_MOD, fd, &ev) == 0)
            return 0;
        if (errno != ENOENT)
            return -1;
    }
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, fd, &ev) && errno == EEXIST)
        epoll_ctl(e->ep, EPOLL_CTL_MOD, fd, &ev);
    curl_multi_assign(e->multi, fd, (void *)1);
    return 0;
}

static int on_timer(CURLM *multi, long timeout_ms, void *user)
{
    (void)multi;
    struct engine *e = user;
    if (timeout_ms < 0)
        e->curl_deadline = 0;
    else
        e->curl_deadline = mp_time_ns() + (uint64_t)timeout_ms * 1000000ull;
    if (e->curl_deadline == 0 && timeout_ms >= 0)
        e->curl_deadline = 1;
    return 0;
}

/* Every connection asks the kernel for receive timestamps. */
static int on_sockopt(void *user, curl_socket_t fd, curlsocktype purpose)
{
    struct engine *e = user;
    (void)purpose;
    if (e->cfg->kernel_timestamps) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    }
    return CURL_SOCKOPT_OK;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC from a realtime reading between two
 * monotonic ones; its error is at most half their distance. A reading cut
 * by preemption would put that error (up to a time slice) into every kernel
 * timestamp, so the narrowest of a few readings is kept, and a new offset
 * replaces the old one only when it is read at least as tightly or within
 * 10 us (the clocks move together except when the realtime clock is
 * stepped, and a step is seen within a few calls). */
static void clock_offset(struct engine *e)
{
    uint64_t best_span = UINT64_MAX;
    int64_t best = 0;
    for (int i = 0; i < 5 && best_span > 2000; i++) {
        struct timespec r;
        uint64_t a = mp_time_ns();
        clock_gettime(CLOCK_REALTIME, &r);
        uint64_t b = mp_time_ns();
        if (b - a < best_span) {
            best_span = b - a;
            best = (int64_t)r.tv_sec * 1000000000LL + r.tv_nsec - (int64_t)(a + (b - a) / 2);
        }
    }
    if (!e->offset_span || best_span <= e->offset_span || best_span <= 10000) {
        e->real_minus_mono = best;
        e->offset_span = best_span ? best_span : 1;
    }
}

/* The SO_TIMESTAMPNS time in msg as CLOCK_MONOTONIC ns, 0 if none. */
static uint64_t cmsg_mono(const struct engine *e, struct msghdr *msg)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof(ts));
            int64_t mono = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - e->real_minus_mono;
            return mono > 0 ? (uint64_t)mono : 0;
        }
    }
    return 0;
}

/* The arrival time of the newest unread byte on fd: MSG_PEEK | MSG_TRUNC
 * walks the whole receive queue without copying and returns the timestamp
 * of its last segment. That is a time the data reached this host, before
 * any scheduling delay of ours; 0 if the kernel gave none. A one-byte peek
 * first gives the head segment's time (rx_first_ns) and tells whether the
 * queue starts at a write boundary. */
static uint64_t peek_rx_time(struct engine *e, int fd)
{
    char byte[2] = {0, 0};
    e->rx_bytes = rx_bytes(fd); /* before the peek: a byte arriving after it moves the count */
    e->rx_first_ns = 0;
    struct iovec iov1 = {byte, 1};
    /* MSG_TRUNC: the kernel copies nothing; the sink only bounds the length
     * (a queue longer than it gives no kernel time) */
    static char sink[1 << 18];
    struct iovec iov = {sink, sizeof(sink)};

    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov1; /* the head: one byte, copied */
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    if (recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT) <= 0)
        return 0;
    e->rx_first_ns = cmsg_mono(e, &msg);
    msg.msg_iov = &iov; /* the whole queue */
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof(ctl.buf);
    ssize_t got = recvmsg(fd, &msg, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    if (got <= 0 || (size_t)got >= sizeof(sink) || !e->rx_bytes)
        return 0;
    e->rx_clean = e->tls || (byte[0] != '\r' && byte[0] != '\n');
    return cmsg_mono(e, &msg);
}

/* ---- request setup ---- */

/* s JSON-escaped, without the quotes */
static int json_inner(struct mp_buf *b, const char *s)
{
    size_t at = b->len;
    int rc = mp_json_str(b, s, strlen(s));
    if (rc)
        return rc;
    memmove(b->data + at, b->data + at + 1, b->len - at - 2);
    b->len -= 2;
    return 0;
}

/* The earlier turns of request idx's session and their answers (as the
 * server sent them, still JSON-escaped): chat messages, or for completions
 * the start of the prompt string, turns and answers one a line. */
static int history(struct engine *e, size_t idx, bool chat, struct mp_buf *b)
{
    int32_t n = e->turn[idx];
    int rc = 0;
    size_t *chain = malloc(((size_t)n + 1) * sizeof(size_t));
    if (!chain)
        return MP_ENOMEM;
    size_t j = idx;
    for (int32_t k = n; k > 0; k--) {
        j = (size_t)e->ds->prev[j];
        chain[k - 1] = j;
    }
    for (int32_t k = 0; k < n && !rc; k++) {
        const char *t = e->ds->prompts[chain[k]].text;
        const char *a = e->answers[chain[k]] ? e->answers[chain[k]] : "";
        if (chat) {
            rc |= mp_buf_puts(b, "{\"role\":\"user\",\"content\":");
            rc |= mp_json_str(b, t ? t : "", t ? strlen(t) : 0);
            rc |= mp_buf_printf(b, "},{\"role\":\"assistant\",\"content\":\"%s\"},", a);
        } else {
            rc |= json_inner(b, t ? t : "");
            rc |= mp_buf_printf(b, "\\n%s\\n", a);
        }
    }
    free(chain);
    return rc;
}

static int build_body(struct engine *e, size_t idx, const struct mp_loadgen_prompt *p,
                      struct mp_buf *b)
{
    const struct mp_loadgen_config *c = e->cfg;
    bool hist = e->ds->history && e->turn && e->turn[idx] > 0;
    int rc = 0;
    b->len = 0;
    rc |= mp_buf_puts(b, "{\"model\":");
    rc |= mp_json_str(b, c->model, strlen(c->model));
    if (c->api == MP_LOADGEN_API_CHAT) {
        rc |= mp_buf_puts(b, ",\"messages\":[");
        if (hist)
            rc |= history(e, idx, true, b);
        rc |= mp_buf_puts(b, "{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                             "\"text\":");
        if (p->text) {
            rc |= mp_json_str(b, p->text, strlen(p->text));
        } else { /* token ids cannot go to chat; send them as text, documented */
            rc |= mp_buf_putc(b, '"');
            for (uint32_t k = 0; k < p->n_ids && !rc; k++)
                rc |= mp_buf_printf(b, k ? " %d" : "%d", p->ids[k]);
            rc |= mp_buf_putc(b, '"');
        }
        rc |= mp_buf_printf(b, "}]}],\"max_completion_tokens\":%d", p->output_len);
    } else {
        rc |= mp_buf_puts(b, ",\"prompt\":");
        if (hist && p->text) {
            rc |= mp_buf_putc(b, '"');
            rc |= history(e, idx, false, b);
            rc |= json_inner(b, p->text);
            rc |= mp_buf_putc(b, '"');
        } else if (p->ids) {
            rc |= mp_buf_putc(b, '[');
            for (uint32_t k = 0; k < p->n_ids && !rc; k++)
                rc |= mp_buf_printf(b, k ? ",%d" : "%d", p->ids[k]);
            rc |= mp_buf_putc(b, ']');
        } else {
            rc |= mp_json_str(b, p->text ? p->text : "", p->text ? strlen(p->text) : 0);
        }
        /* the same fields vllm bench serve sends */
        rc |= mp_buf_printf(b, ",\"repetition_penalty\":1.0,\"max_tokens\":%d,\"logprobs\":null",
                            p->output_len);
    }
    rc |= mp_buf_puts(b, ",\"stream\":true,\"stream_options\":{\"include_usage\":true");
    if (c->continuous_usage)
        rc |= mp_buf_puts(b, ",\"continuous_usage_stats\":true");
    rc |= mp_buf_putc(b, '}');
    if (c->ignore_eos)
        rc |= mp_buf_puts(b, ",\"ignore_eos\":true");
    if (e->extra && e->extra[0]) { /* later duplicate keys win, like dict.update */
        rc |= mp_buf_putc(b, ',');
        rc |= mp_buf_puts(b, e->extra);
    }
    rc |= mp_buf_putc(b, '}');
    return rc ? MP_ENOMEM : 0;
}

static struct slot *slot_get(struct engine *e)
{
    if (e->n_free)
        return e->free_slots[--e->n_free];
    if (e->n_slots == e->cap_slots) {
        size_t cap = e->cap_slots ? e->cap_slots * 2 : 64;
        struct slot **ns = mp_reallocarray(e->slots, cap, sizeof(struct slot *)); // NOLINT
        if (!ns)
            return NULL;
        e->slots = ns;
        struct slot **nf = mp_reallocarray(e->free_slots, cap, sizeof(struct slot *)); // NOLINT
        if (!nf)
            return NULL;
        e->free_slots = nf;
        e->cap_slots = cap;
    }
    struct slot *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->e = e;
    s->easy = curl_easy_init();
    if (!s->easy) {
        free(s);
        return NULL;
    }
    mp_buf_init(&s->body, MAX_BODY);
    mp_buf_init(&s->errbody, ERRBODY_MAX + 1);
    mp_buf_init(&s->text, TEXT_MAX);
    mp_loadgen_sse_init(&s->sse, (size_t)64 << 20, on_sse, s);
    const struct mp_loadgen_config *c = e->cfg;
    CURL *h = s->easy;
    curl_easy_setopt(h, CURLOPT_URL, e->url);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(h, CURLOPT_PRIVATE, s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->request_timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    curl_easy_setopt(h, CURLOPT_SOCKOPTDATA, e);
    s->fd = -1;
    if (c->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    e->slots[e->n_slots++] = s;
    return s;
}

static void slot_free(struct slot *s)
{
    if (!s)
        return;
    curl_easy_cleanup(s->easy);
    curl_slist_free_all(s->hdrs);
    mp_buf_fini(&s->body);
    mp_buf_fini(&s->errbody);
    mp_buf_fini(&s->text);
    mp_loadgen_sse_fini(&s->sse);
    free(s->scratch.event_ns);
    free(s->scratch.event_tokens);
    free(s->scratch.event_src);
    free(s);
}

static int start_request(struct engine *e, size_t idx, bool warmup, uint64_t arrival_ns)
{
    const struct mp_loadgen_config *c = e->cfg;
    const struct mp_loadgen_prompt *p = &e->ds->prompts[warmup ? 0 : idx];
    struct slot *s = slot_get(e);
    if (!s)
        return mp_diag_set(e->d, MP_ENOMEM, "out of memory for request slots");
    s->warmup = warmup;
    if (warmup) {
        s->rec = &s->scratch;
        uint64_t *ns = s->scratch.event_ns;
        uint16_t *tk = s->scratch.event_tokens;
        uint8_t *src = s->scratch.event_src;
        memset(&s->scratch, 0, sizeof(s->scratch));
        s->scratch.event_ns = ns;
        s->scratch.event_tokens = tk;
        s->scratch.event_src = src;
        s->ev_cap = s->scratch_cap;
    } else {
        s->rec = &e->res->recs[idx];
        s->ev_cap = 0;
        uint32_t want = (uint32_t)(p->output_len > 0 ? p->output_len : 16) + 4;
        if (want > 1u << 20)
            want = 1u << 20;
        s->rec->event_ns = malloc(want * sizeof(uint64_t));
        s->rec->event_src = malloc(want);
        if (c->continuous_usage)
            s->rec->event_tokens = malloc(want * sizeof(uint16_t));
        if (!s->rec->event_ns || !s->rec->event_src ||
            (c->continuous_usage && !s->rec->event_tokens)) {
            e->free_slots[e->n_free++] = s;
            return mp_diag_set(e->d, MP_ENOMEM, "out of memory for request records");
        }
        s->ev_cap = want;
    }
    struct mp_loadgen_record *rec = s->rec;
    rec->index = (uint32_t)idx;
    rec->expected_prompt_len = p->prompt_len;
    rec->prompt_exact = e->ds->exact_lengths || (e->ds->exact && e->ds->exact[warmup ? 0 : idx]);
    rec->max_tokens = p->output_len;
    rec->arrival_ns = arrival_ns;
    s->last_cum = 0;
    s->usage_completion = s->usage_prompt = -1;
    s->fail[0] = s->reason[0] = s->errbuf[0] = 0;
    s->errbody.len = 0;
    s->text.len = 0;
    s->removed = false;
    mp_loadgen_sse_reset(&s->sse);
    if (build_body(e, warmup ? 0 : idx, p, &s->body)) {
        e->free_slots[e->n_free++] = s;
        return mp_diag_set(e->d, MP_ENOMEM, "request body too large");
    }
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    char line[512];
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    h = h ? curl_slist_append(h, "Expect:") : NULL; /* no 100-continue round trip */
    for (int i = 0; h && i < c->n_headers; i++)
        h = curl_slist_append(h, c->headers[i]);
    snprintf(line, sizeof(line), "x-request-id: %s%s%zu", e->res->request_id_prefix,
             warmup ? "warmup-" : "", idx);
    h = h ? curl_slist_append(h, line) : NULL;
    if (!h) {
        e->free_slots[e->n_free++] = s;
        return mp_diag_set(e->d, MP_ENOMEM, "out of memory for headers");
    }
    s->hdrs = h;
    curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->hdrs);
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body.data);
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->body.len);
    s->active = true;
    rec->start_ns = mp_time_ns();
    s->last_byte_ns = rec->start_ns;
    CURLMcode mc = curl_multi_add_handle(e->multi, s->easy);
    if (mc != CURLM_OK) {
        s->active = false;
        e->free_slots[e->n_free++] = s;
        return mp_diag_set(e->d, MP_EIO, "curl_multi_add_handle: %s", curl_multi_strerror(mc));
    }
    e->in_flight++;
    /* send now rather than on the next loop turn */
    int running;
    curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    return 0;
}

static void finish(struct engine *e, struct slot *s, CURLcode cc)
{
    struct mp_loadgen_record *rec = s->rec;
    rec->end_ns = mp_time_ns();
    long code = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    rec->http_status = (int)code;
    if (cc == CURLE_OK && code == 200 && !s->fail[0])
        (void)mp_loadgen_sse_finish(&s->sse);
    char err[512];
    err[0] = 0;
    /* the kind follows the message chosen below; a stall ends with
     * CURLE_OPERATION_TIMEDOUT and its own message */
    enum mp_loadgen_fail_kind kind = MP_LOADGEN_FAIL_NONE;
    if (s->fail[0]) {
        snprintf(err, sizeof(err), "%s", s->fail);
        kind = cc == CURLE_OPERATION_TIMEDOUT ? MP_LOADGEN_FAIL_TIMEOUT : MP_LOADGEN_FAIL_STREAM;
    } else if (code != 200 && code != 0) {
        snprintf(err, sizeof(err), "HTTP %ld %s: %.*s", code, s->reason, (int)s->errbody.len,
                 s->errbody.data ? s->errbody.data : "");
        kind = MP_LOADGEN_FAIL_HTTP;
    } else if (cc != CURLE_OK) {
        snprintf(err, sizeof(err), "%s%s%s", curl_easy_strerror(cc), s->errbuf[0] ? ": " : "",
                 s->errbuf);
        kind =
            cc == CURLE_OPERATION_TIMEDOUT ? MP_LOADGEN_FAIL_TIMEOUT : MP_LOADGEN_FAIL_CONNECTION;
    } else if (rec->n_events == 0) {
        snprintf(err, sizeof(err), "Never received a valid chunk to calculate TTFT.");
        kind = MP_LOADGEN_FAIL_STREAM;
    }
    rec->fail_kind = (uint8_t)kind;
    for (char *q = err; *q; q++) /* keep reasons on one line */
        if (*q == '\n' || *q == '\r')
            *q = ' ';
    rec->success = err[0] == 0;
    rec->usage_seen = s->usage_completion >= 0;
    rec->output_tokens = rec->usage_seen ? (int32_t)s->usage_completion : (int32_t)rec->n_events;
    rec->prompt_len = s->usage_prompt >= 0 ? (int32_t)s->usage_prompt : rec->expected_prompt_len;
    if (!s->warmup) {
        if (err[0])
            rec->error = mp_arena_strndup(e->res->arena, err, strlen(err));
        if (e->cfg->keep_text && rec->success)
            rec->text =
                mp_arena_strndup(e->res->arena, s->text.data ? s->text.data : "", s->text.len);
        if (e->answers && e->sched.next && e->sched.next[rec->index] >= 0) {
            free(e->answers[rec->index]);
            e->answers[rec->index] = mp_strndup(s->text.data ? s->text.data : "", s->text.len);
        }
        loadgen_sched_ended(&e->sched, rec->index, rec->end_ns);
    }
    if (!s->removed)
        curl_multi_remove_handle(e->multi, s->easy);
    s->active = false;
    e->in_flight--;
    e->done++;
    if (!rec->success)
        e->failed++;
    e->free_slots[e->n_free++] = s;
}

static void drain_done(struct engine *e)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(e->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct slot *s = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
        CURLcode cc = msg->data.result;
        if (s && s->active)
            finish(e, s, cc);
    }
}

static void arm(struct engine *e, uint64_t when)
{
    if (when == e->armed)
        return;
    e->armed = when;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (when < 1)
        when = 1;
    its.it_value.tv_sec = (time_t)(when / 1000000000ull);
    its.it_value.tv_nsec = (long)(when % 1000000000ull);
    timerfd_settime(e->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void housekeeping(struct engine *e, uint64_t now)
{
    const struct mp_loadgen_config *c = e->cfg;
    clock_offset(e); /* follows NTP slewing of the realtime clock */
    if (c->stall_timeout_s > 0) {
        uint64_t lim = (uint64_t)(c->stall_timeout_s * 1e9);
        for (size_t i = 0; i < e->n_slots; i++) {
            struct slot *s = e->slots[i];
            if (!s->active || now - s->last_byte_ns < lim)
                continue;
            snprintf(s->fail, sizeof(s->fail), "stalled: no data from the server for %.3f s",
                     (double)(now - s->last_byte_ns) / 1e9);
            curl_multi_remove_handle(e->multi, s->easy);
            s->removed = true;
            finish(e, s, CURLE_OPERATION_TIMEDOUT);
        }
    }
    if (c->on_progress) {
        struct mp_loadgen_progress p = {e->done,         e->failed,
                                        e->phase_total,  e->in_flight,
                                        e->phase_warmup, (double)(now - e->phase_t0) / 1e9};
        c->on_progress(&p, c->progress_user);
    }
}

/* The next request to send and its arrival: the schedule's, or (warm-ups,
 * sc NULL) the next of n, due at once. */
static bool next_due(const struct loadgen_sched *sc, size_t next, size_t n, size_t *idx,
                     uint64_t *arr)
{
    if (!sc) {
        *idx = next;
        *arr = 0;
        return next < n;
    }
    return loadgen_sched_peek(sc, idx, arr);
}

/* Runs n requests in the order and at the times of sc (NULL: warm-ups, all
 * now). */
static int run_phase(struct engine *e, size_t n, struct loadgen_sched *sc, bool warmup)
{
    const struct mp_loadgen_config *c = e->cfg;
    size_t next = 0, cap = c->max_concurrency > 0 ? (size_t)c->max_concurrency : SIZE_MAX, idx;
    uint64_t arr;
    e->done = e->failed = 0;
    e->phase_total = n;
    e->phase_warmup = warmup;
    e->phase_t0 = mp_time_ns();
    e->next_house = e->phase_t0 + HOUSEKEEPING_NS;
    struct epoll_event evs[512];
    int rc = 0, running;
    while (e->done < n) {
        uint64_t now = mp_time_ns();
        int budget = 16; /* then serve the sockets, so a burst does not delay reads */
        while (e->in_flight < cap && next_due(sc, next, n, &idx, &arr) && arr <= now &&
               budget-- > 0) {
            if (!sc)
                arr = now;
            else
                loadgen_sched_pop(sc);
            if ((rc = start_request(e, idx, warmup, arr)))
                return rc;
            if (!warmup && sc && cap == SIZE_MAX) {
                double lag = (double)(e->res->recs[idx].start_ns - arr) / 1e6;
                /* lag only counts when the request did not wait for a slot */
                if (lag > e->res->max_dispatch_lag_ms && e->res->recs[idx].start_ns > arr)
                    e->res->max_dispatch_lag_ms = lag;
            }
            next++;
            now = mp_time_ns();
        }
        drain_done(e);
        if (e->curl_deadline && e->curl_deadline <= now) {
            e->curl_deadline = 0;
            curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
            drain_done(e);
            continue;
        }
        if (now >= e->next_house) {
            housekeeping(e, now);
            e->next_house = now + HOUSEKEEPING_NS;
            drain_done(e);
        }
        if (e->done >= n)
            break;
        uint64_t wake = e->next_house;
        bool due = e->in_flight < cap && next_due(sc, next, n, &idx, &arr);
        if (due && arr < wake)
            wake = arr;
        if (e->curl_deadline && e->curl_deadline < wake)
            wake = e->curl_deadline;
        if (due && arr <= now)
            wake = now; /* more are due: poll the sockets without sleeping */
        arm(e, wake);
        int k = epoll_wait(e->ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), -1);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return mp_diag_set(e->d, MP_EIO, "epoll_wait: %s", strerror(errno));
        }
        for (int i = 0; i < k; i++) {
            int fd = evs[i].data.fd;
            if (fd == e->tfd) {
                uint64_t ticks;
                ssize_t r = read(e->tfd, &ticks, sizeof(ticks));
                (void)r;
                e->armed = 0;
                continue;
            }
            int flags = 0;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                flags |= CURL_CSELECT_IN;
            if (evs[i].events & EPOLLOUT)
                flags |= CURL_CSELECT_OUT;
            if (evs[i].events & EPOLLERR)
                flags |= CURL_CSELECT_ERR;
            if ((flags & CURL_CSELECT_IN) && c->kernel_timestamps) {
                e->rx_fd = fd;
                e->rx_decided = -1;
                e->rx_ns = peek_rx_time(e, fd);
            }
            curl_multi_socket_action(e->multi, fd, flags, &running);
            if (e->rx_slot) /* unused (no event started): not for the next read */
                e->rx_slot->sse.first_t_ns = 0;
            e->rx_slot = NULL;
            e->rx_ns = 0;
            e->rx_fd = -1;
        }
        drain_done(e);
    }
    housekeeping(e, mp_time_ns());
    return rc;
}

/* Sessions: each record's session and turn, the answers kept for the
 * history, the number of first turns (they get the rate schedule). */
static int sessions_setup(struct engine *e, const struct mp_loadgen_config *cfg,
                          const struct mp_loadgen_dataset *ds, struct mp_diag *d)
{
    e->n_roots = ds->n;
    if (cfg->fixed_schedule && !ds->arrival_s)
        return mp_diag_set(d, MP_EINVAL,
                           "--fixed-schedule needs a dataset with recorded arrival times "
                           "(mooncake with timestamps, burstgpt), not %s",
                           ds->name);
    if (!ds->prev) {
        for (size_t i = 0; i < ds->n; i++)
            e->res->recs[i].session = -1;
        return 0;
    }
    e->res->sessions = true;
    e->turn = calloc(ds->n, sizeof(int32_t));
    e->answers = ds->history ? calloc(ds->n, sizeof(char *)) : NULL;
    if (!e->turn || (ds->history && !e->answers))
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    e->n_roots = 0;
    for (size_t i = 0; i < ds->n; i++) {
        int32_t p = ds->prev[i];
        if (p >= (int32_t)i || p < -1)
            return mp_diag_set(d, MP_EINVAL, "dataset: prompt %zu follows prompt %d", i, (int)p);
        e->turn[i] = p >= 0 ? e->turn[p] + 1 : 0;
        e->n_roots += p < 0;
        e->res->recs[i].session = ds->session ? ds->session[i] : -1;
        e->res->recs[i].turn = e->turn[i];
    }
    return 0;
}

/* Arrival times from t0: the recorded ones (fixed schedule; also each
 * turn's earliest time in *recorded), else the rate schedule's off[k] for
 * the k-th first turn; later turns get theirs when the turn before ends. */
static int arrivals(struct engine *e, const double *off, uint64_t *arrival, uint64_t **recorded,
                    struct mp_diag *d)
{
    const struct mp_loadgen_dataset *ds = e->ds;
    uint64_t t0 = e->res->t0_ns;
    size_t k = 0;
    for (size_t i = 0; i < ds->n; i++) {
        bool root = !ds->prev || ds->prev[i] < 0;
        if (e->cfg->fixed_schedule) {
            double a = ds->arrival_s[i];
            if (!(a >= 0) || a > 1e9)
                return mp_diag_set(d, MP_EINVAL, "dataset: bad arrival time %g s of prompt %zu", a,
                                   i);
            arrival[i] = t0 + (uint64_t)llround(a * 1e9);
        } else {
            arrival[i] = root ? t0 + (uint64_t)llround(off[k++] * 1e9) : UINT64_MAX;
        }
    }
    if (e->cfg->fixed_schedule && ds->prev) {
        *recorded = malloc((ds->n + 1) * sizeof(uint64_t));
        if (!*recorded)
            return mp_diag_set(d, MP_ENOMEM, "out of memory");
        memcpy(*recorded, arrival, ds->n * sizeof(uint64_t));
    }
    return 0;
}

static int engine_setup(struct engine *e, struct mp_diag *d)
{
    const struct mp_loadgen_config *c = e->cfg;
    if (!c->base_url || !c->base_url[0])
        return mp_diag_set(d, MP_EINVAL, "no base URL given");
    if (!c->model || !c->model[0])
        return mp_diag_set(d, MP_EINVAL, "no model given");
    size_t bl = strlen(c->base_url);
    while (bl && c->base_url[bl - 1] == '/')
        bl--;
    const char *ep = c->endpoint && c->endpoint[0] ? c->endpoint : "/v1/completions";
    if ((size_t)snprintf(e->url, sizeof(e->url), "%.*s%s%s", (int)bl, c->base_url,
                         ep[0] == '/' ? "" : "/", ep) >= sizeof(e->url))
        return mp_diag_set(d, MP_EINVAL, "URL too long");
    e->tls = strncmp(e->url, "https://", 8) == 0;
    if (strncmp(e->url, "http://", 7) != 0 && !e->tls)
        return mp_diag_set(d, MP_EINVAL, "base URL must start with http:// or https://, not '%s'",
                           c->base_url);
    if (c->extra_body && c->extra_body[0]) {
        json_error_t je;
        json_t *j = json_loads(c->extra_body, 0, &je);
        if (!json_is_object(j)) {
            json_decref(j);
            mp_diag_set(d, MP_EINVAL, "--extra-body must be a JSON object%s%s", j ? "" : ": ",
                        j ? "" : je.text);
            mp_diag_set_field(d, "extra-body");
            return MP_EINVAL;
        }
        char *txt = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!txt)
            return mp_diag_set(d, MP_ENOMEM, "out of memory");
        size_t tl = strlen(txt);
        memmove(txt, txt + 1, tl - 1); /* drop the braces */
        txt[tl - 2] = 0;
        e->extra = txt;
    }
    e->ep = epoll_create1(EPOLL_CLOEXEC);
    e->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (e->ep < 0 || e->tfd < 0)
        return mp_diag_set(d, MP_EIO, "cannot create epoll/timerfd: %s", strerror(errno));
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.fd = e->tfd;
    if (epoll_ctl(e->ep, EPOLL_CTL_ADD, e->tfd, &ev))
        return mp_diag_set(d, MP_EIO, "epoll_ctl: %s", strerror(errno));
    e->multi = curl_multi_init();
    if (!e->multi)
        return mp_diag_set(d, MP_EIO, "curl_multi_init failed");
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    size_t conns = c->max_concurrency > 0 ? (size_t)c->max_concurrency : e->ds->n;
    if (conns < (size_t)c->num_warmups)
        conns = (size_t)c->num_warmups;
    conns += 8;
    if (conns > 100000)
        conns = 100000;
    curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, (long)conns);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < conns + 32)
        mp_log(MP_LOG_WARN,
               "open-file limit %llu is below the %zu connections this run may need; raise "
               "ulimit -n",
               (unsigned long long)rl.rlim_cur, conns + 32);
    return 0;
}

int mp_loadgen_run(const struct mp_loadgen_config *cfg, const struct mp_loadgen_dataset *ds,
                   struct mp_loadgen_result **out, struct mp_diag *d)
{
    *out = NULL;
    if (!ds || ds->n == 0)
        return mp_diag_set(d, MP_EINVAL, "empty dataset");
    if (cfg->max_concurrency < 0 || cfg->num_warmups < 0)
        return mp_diag_set(d, MP_EINVAL, "negative concurrency or warm-up count");
    struct engine e;
    memset(&e, 0, sizeof(e));
    e.cfg = cfg;
    e.ds = ds;
    e.d = d;
    e.ep = e.tfd = e.rx_fd = -1;
    double *off = NULL;
    uint64_t *arrival = NULL, *recorded = NULL;
    struct loadgen_scraper *scraper = NULL;
    int rc = 0, old_slack = -1;
    bool curl_inited = false;
    struct mp_loadgen_result *res = calloc(1, sizeof(*res));
    if (!res)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    res->arena = mp_arena_new(1 << 16);
    res->recs = calloc(ds->n, sizeof(*res->recs));
    res->n = ds->n;
    res->request_rate = cfg->request_rate;
    res->burstiness = cfg->burstiness;
    res->max_concurrency = cfg->max_concurrency;
    res->continuous_usage = cfg->continuous_usage;
    res->fixed_schedule = cfg->fixed_schedule;
    for (size_t i = 0; ds->exact && i < ds->n; i++)
        res->tokenized += ds->exact[i] && ds->prompts[i].text;
    snprintf(res->request_id_prefix, sizeof(res->request_id_prefix), "%s",
             cfg->request_id_prefix ? cfg->request_id_prefix : "");
    off = malloc(ds->n * sizeof(*off));
    arrival = malloc(ds->n * sizeof(*arrival));
    if (!res->arena || !res->recs || !off || !arrival) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory for %zu requests", ds->n);
        goto out;
    }
    e.res = res;
    if ((rc = sessions_setup(&e, cfg, ds, d)))
        goto out;
    if (!cfg->fixed_schedule && (rc = mp_loadgen_schedule(e.n_roots, cfg->request_rate,
                                                          cfg->burstiness, cfg->seed, off, d)))
        goto out;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        rc = mp_diag_set(d, MP_EIO, "curl_global_init failed");
        goto out;
    }
    curl_inited = true;
    if ((rc = engine_setup(&e, d)))
        goto out;
    clock_offset(&e);
    /* sub-microsecond timer slack for this thread while it runs the schedule */
    old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (cfg->num_warmups > 0) {
        if ((rc = run_phase(&e, (size_t)cfg->num_warmups, NULL, true)))
            goto out;
        res->warmup_done = e.done;
        res->warmup_failed = e.failed;
    }
    if (cfg->scrape_interval_s > 0 && (rc = loadgen_scrape_start(&scraper, cfg, d)))
        goto out;
    res->t0_ns = mp_time_ns();
    if ((rc = arrivals(&e, off, arrival, &recorded, d)))
        goto out;
    if ((rc = loadgen_sched_init(&e.sched, ds, arrival, recorded, d)))
        goto out;
    if ((rc = run_phase(&e, ds->n, &e.sched, false)))
        goto out;
    res->t_end_ns = mp_time_ns();
    res->duration_s = (double)(res->t_end_ns - res->t0_ns) / 1e9;
    loadgen_scrape_stop(scraper, res);
    scraper = NULL;
    *out = res;
    res = NULL;
out:
    if (old_slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
    for (size_t i = 0; i < e.n_slots; i++) {
        if (e.slots[i]->active)
            curl_multi_remove_handle(e.multi, e.slots[i]->easy);
        slot_free(e.slots[i]);
    }
    free(e.slots);
    free(e.free_slots);
    if (e.multi)
        curl_multi_cleanup(e.multi);
    if (curl_inited)
        curl_global_cleanup();
    if (e.ep >= 0)
        close(e.ep);
    if (e.tfd >= 0)
        close(e.tfd);
    free(e.extra);
    free(off);
    free(arrival);
    free(recorded);
    loadgen_scrape_stop(scraper, NULL);
    loadgen_sched_fini(&e.sched);
    if (e.answers)
        for (size_t i = 0; i < ds->n; i++)
            free(e.answers[i]);
    free(e.answers);
    free(e.turn);
    mp_loadgen_result_free(res);
    return rc;
}

static size_t collect(char *p, size_t size, size_t nmemb, void *user)
{
    struct mp_buf *b = user;
    return mp_buf_append(b, p, size * nmemb) ? 0 : size * nmemb;
}

int mp_loadgen_first_model(const char *base_url, const char *const *headers, int n_headers,
                           bool insecure, char *out, size_t out_len, struct mp_diag *d)
{
    char url[2048];
    size_t bl = strlen(base_url);
    while (bl && base_url[bl - 1] == '/')
        bl--;
    snprintf(url, sizeof(url), "%.*s/v1/models", (int)bl, base_url);
    struct mp_buf b;
    mp_buf_init(&b, (size_t)4 << 20);
    struct curl_slist *h = NULL;
    int rc = 0;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return mp_diag_set(d, MP_EIO, "curl_global_init failed");
    CURL *c = curl_easy_init();
    if (!c) {
        rc = mp_diag_set(d, MP_EIO, "curl_easy_init failed");
        goto out;
    }
    for (int i = 0; i < n_headers; i++)
        h = curl_slist_append(h, headers[i]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (cc != CURLE_OK || code != 200) {
        rc = mp_diag_set(d, MP_EIO, "cannot list models at %s: %s", url,
                         cc != CURLE_OK ? curl_easy_strerror(cc) : "HTTP error");
        goto out;
    }
    json_error_t je;
    json_t *j = json_loadb(b.data ? b.data : "", b.len, 0, &je);
    const char *id =
        json_string_value(json_object_get(json_array_get(json_object_get(j, "data"), 0), "id"));
    if (!id) {
        rc = mp_diag_set(d, MP_EPARSE, "no models found at %s", url);
    } else if ((size_t)snprintf(out, out_len, "%s", id) >= out_len) {
        rc = mp_diag_set(d, MP_EINVAL, "model id too long");
    }
    json_decref(j);
out:
    curl_slist_free_all(h);
    if (c)
        curl_easy_cleanup(c);
    curl_global_cleanup();
    mp_buf_fini(&b);
    return rc;
}
