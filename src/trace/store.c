/* Event store: a whole trace as struct-of-arrays in file order, names
 * interned, raw args text copied into one arena on request. Built on top of
 * the streaming parser's callback, so loading is one pass. */
#include <stdlib.h>
#include <string.h>

#include <magpie/trace.h>

#define STORE_MAX_EVENTS ((size_t)1 << 31)

#define NAME_CACHE 512 /* slots of load_ctx.seen, a power of two */

struct load_ctx {
    struct mp_trace_store *s;
    /* recently interned strings by a digest of their length and ends (id + 1,
     * 0 empty): a name seen before is found with one compare, not a hash of
     * its whole text (kernel names are hundreds of bytes) */
    int32_t seen[NAME_CACHE];
    int32_t last[4]; /* the previous event's cat, pid, tid and name ids (or -1): runs of
                        events share them, and a compare is cheaper than a hash lookup */
    struct mp_buf scratch;
    bool keep_args;
    bool (*keep_args_for)(const struct mp_trace_event *ev, void *user);
    void *user;
    struct mp_diag *d;
};

#define GROW(arr, n)                                                                               \
    do {                                                                                           \
        void *np_ = mp_reallocarray((arr), (n), sizeof(*(arr)));                                   \
        if (!np_)                                                                                  \
            return MP_ENOMEM;                                                                      \
        (arr) = np_;                                                                               \
    } while (0)

int mp_trace_store_reserve(struct mp_trace_store *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    GROW(s->ph, n);
    GROW(s->flags, n);
    GROW(s->name, n);
    GROW(s->cat, n);
    GROW(s->pid, n);
    GROW(s->tid, n);
    GROW(s->ts, n);
    GROW(s->dur, n);
    GROW(s->id, n);
    GROW(s->external_id, n);
    GROW(s->correlation, n);
    GROW(s->stream, n);
    GROW(s->args, n);
    GROW(s->args_len, n);
    s->cap = n;
    return 0;
}

static int grow(struct mp_trace_store *s)
{
    size_t nc = s->cap ? s->cap * 2 : 4096;
    if (nc > STORE_MAX_EVENTS)
        return MP_ENOMEM;
    return mp_trace_store_reserve(s, nc);
}

static bool is_op(const struct mp_trace_event *ev)
{
    return (ev->cat.n == 6 && memcmp(ev->cat.p, "cpu_op", 6) == 0) ||
           (ev->cat.n == 15 && memcmp(ev->cat.p, "python_function", 15) == 0);
}

/* The args text without the members that only number the event (the
 * parser marked them), and without the separators they leave behind. */
static int strip_ids(const struct mp_trace_event *ev, struct mp_buf *out)
{
    const char *pos = ev->args.p, *end = ev->args.p + ev->args.n;
    int rc = 0;
    for (unsigned i = 0; i < ev->n_id_members && !rc; i++) {
        const struct mp_strview *m = &ev->id_members[i];
        rc = mp_buf_append(out, pos, (size_t)(m->p - pos));
        const char *q = m->p + m->n;
        while (q < end && (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r'))
            q++;
        if (q < end && *q == ',') {
            q++;
        } else { /* the last member: drop the comma before it instead */
            while (out->len && (out->data[out->len - 1] == ' ' || out->data[out->len - 1] == '\n' ||
                                out->data[out->len - 1] == '\t' || out->data[out->len - 1] == '\r'))
                out->len--;
            if (out->len && out->data[out->len - 1] == ',')
                out->len--;
        }
        pos = q;
    }
    return rc ? rc : mp_buf_append(out, pos, (size_t)(end - pos));
}

static int32_t *seen_slot(struct load_ctx *c, struct mp_strview v)
{
    uint64_t a = 0, b = 0;
    if (v.n >= 8) {
        memcpy(&a, v.p, 8);
        memcpy(&b, v.p + v.n - 8, 8);
    } else {
        memcpy(&a, v.p, v.n);
    }
    uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ v.n;
    h ^= h >> 31;
    return &c->seen[(h * 0x94d049bb133111ebULL) >> 55 & (NAME_CACHE - 1)];
}

static bool same_text(const struct mp_intern *in, int32_t id, struct mp_strview v)
{
    return mp_intern_len(in, id) == v.n && memcmp(mp_intern_str(in, id), v.p, v.n) == 0;
}

static int32_t intern_view(struct load_ctx *c, struct mp_strview v, bool present, int32_t *last)
{
    if (!present)
        return -1;
    struct mp_intern *in = c->s->strings;
    if (*last >= 0 && same_text(in, *last, v))
        return *last;
    int32_t *slot = seen_slot(c, v), id = *slot - 1;
    if (id < 0 || !same_text(in, id, v)) {
        id = mp_intern_add(in, v.p, v.n);
        if (id < 0)
            return id;
        *slot = id + 1;
    }
    *last = id;
    return id;
}

static int on_event(const struct mp_trace_event *ev, void *user)
{
    struct load_ctx *c = user;
    struct mp_trace_store *s = c->s;
    if (s->n == s->cap && grow(s) != 0)
        return mp_diag_set(c->d, MP_ENOMEM, "out of memory storing event %llu",
                           (unsigned long long)ev->index);
    size_t i = s->n;
    s->ph[i] = ev->ph;
    s->flags[i] = ev->flags;
    s->name[i] = intern_view(c, ev->name, ev->flags & MP_EV_NAME, &c->last[3]);
    s->cat[i] = intern_view(c, ev->cat, ev->flags & MP_EV_CAT, &c->last[0]);
    s->pid[i] = intern_view(c, ev->pid_text, ev->flags & MP_EV_PID, &c->last[1]);
    s->tid[i] = intern_view(c, ev->tid_text, ev->flags & MP_EV_TID, &c->last[2]);
    if ((s->name[i] < -1) || (s->cat[i] < -1) || (s->pid[i] < -1) || (s->tid[i] < -1))
        return mp_diag_set(c->d, MP_ENOMEM, "out of memory interning names");
    s->ts[i] = ev->ts;
    s->dur[i] = ev->dur;
    s->id[i] = ev->id;
    s->external_id[i] = ev->external_id;
    s->correlation[i] = ev->correlation;
    s->stream[i] = ev->stream;
    s->args[i] = NULL;
    s->args_len[i] = 0;
    if (c->keep_args && (ev->flags & MP_EV_ARGS) &&
        (!c->keep_args_for || c->keep_args_for(ev, c->user))) {
        if (ev->args.n > UINT32_MAX)
            return mp_diag_set(c->d, MP_ENOMEM, "args of event %llu too large",
                               (unsigned long long)ev->index);
        const char *a;
        size_t an = ev->args.n;
        if (is_op(ev)) {
            /* shared: thousands of ops have the same shapes */
            mp_buf_reset(&c->scratch);
            if (strip_ids(ev, &c->scratch) != 0)
                return mp_diag_set(c->d, MP_ENOMEM, "out of memory storing args");
            int32_t id = mp_intern_add(s->op_args, c->scratch.data, c->scratch.len);
            if (id < 0)
                return mp_diag_set(c->d, MP_ENOMEM, "out of memory storing args");
            a = mp_intern_str(s->op_args, id);
            an = c->scratch.len;
        } else {
            a = mp_arena_strndup(s->arena, ev->args.p, ev->args.n);
        }
        if (!a)
            return mp_diag_set(c->d, MP_ENOMEM, "out of memory storing args");
        s->args[i] = a;
        s->args_len[i] = (uint32_t)an;
    }
    s->n++;
    return 0;
}

static int on_meta(struct mp_strview key, struct mp_strview raw, void *user)
{
    struct load_ctx *c = user;
    if (key.n == 16 && memcmp(key.p, "deviceProperties", 16) == 0) {
        c->s->meta_device_properties = mp_arena_strndup(c->s->arena, raw.p, raw.n);
        if (!c->s->meta_device_properties)
            return MP_ENOMEM;
    }
    return 0;
}

int mp_trace_store_load(const char *path, const struct mp_trace_store_opts *opts,
                        struct mp_trace_store **out, struct mp_diag *d)
{
    *out = NULL;
    struct mp_trace_store *s = calloc(1, sizeof(*s));
    if (!s)
        return mp_diag_set(d, MP_ENOMEM, "out of memory");
    s->strings = mp_intern_new();
    s->op_args = mp_intern_new();
    s->arena = mp_arena_new((size_t)4 << 20);
    s->path = mp_strdup(path);
    int rc = 0;
    if (!s->strings || !s->op_args || !s->arena || !s->path) {
        rc = mp_diag_set(d, MP_ENOMEM, "out of memory");
        goto out;
    }
    struct load_ctx c = {.s = s,
                         .last = {-1, -1, -1, -1},
                         .keep_args = opts && opts->keep_args,
                         .keep_args_for = opts ? opts->keep_args_for : NULL,
                         .user = opts ? opts->user : NULL,
                         .d = d};
    mp_buf_init(&c.scratch, 0);
    struct mp_trace_parse_opts po = {
        .on_event = on_event,
        .on_meta = on_meta,
        .on_progress = opts ? opts->on_progress : NULL,
        .user = &c,
        .progress_user = opts ? opts->user : NULL,
        .serial = opts && opts->serial,
    };
    rc = mp_trace_parse_file(path, &po, NULL, d);
    mp_buf_fini(&c.scratch);
out:
    if (rc) {
        mp_trace_store_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void mp_trace_store_free(struct mp_trace_store *s)
{
    if (!s)
        return;
    free(s->ph);
    free(s->flags);
    free(s->name);
    free(s->cat);
    free(s->pid);
    free(s->tid);
    free(s->ts);
    free(s->dur);
    free(s->id);
    free(s->external_id);
    free(s->correlation);
    free(s->stream);
    free(s->args);
    free(s->args_len);
    mp_intern_free(s->strings);
    mp_intern_free(s->op_args);
    mp_arena_free(s->arena);
    free(s->path);
    free(s);
}

void mp_trace_store_drop_links(struct mp_trace_store *s)
{
    free(s->id);
    free(s->external_id);
    free(s->correlation);
    s->id = s->external_id = s->correlation = NULL;
}

size_t mp_trace_store_bytes(const struct mp_trace_store *s)
{
    size_t per = sizeof(char) + sizeof(uint32_t) * 5 + sizeof(double) * 2 +
                 sizeof(int64_t) * (s->id ? 4 : 1) + sizeof(char *) + sizeof(uint32_t);
    return s->cap * per + mp_intern_bytes(s->strings) + mp_intern_bytes(s->op_args) +
           mp_arena_bytes(s->arena);
}
