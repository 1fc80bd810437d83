/* bench_gen_synth: grow a real Kineto trace into a synthetic one of a target size.
 *
 *   bench_gen_synth --in REAL.json[.gz] --out BIG.json[.gz] (--target-mb M | --replicas N)
 *
 * The real trace's traceEvents are written N times inside one
 * {..., "traceEvents": [...], ...} document. Replica r is the original event
 * text byte for byte except for a few numbers:
 *   - top-level "ts" += r * ts_shift (integer microseconds, the trace's span
 *     rounded up plus 1 ms; the fraction digits are kept verbatim), so replicas
 *     follow each other in time like consecutive profiler windows;
 *   - integer ids += r * (max_id + 1): top-level "id" (flow events) and args
 *     "External id", "correlation", "Ev Idx", "Python id", "Python parent id",
 *     all by the same offset, so launch->kernel links, flows and the
 *     cpu_op->kernel shape lookup stay consistent inside each replica and never
 *     collide across replicas.
 * Metadata events (ph "M") are written only once (replica 0), and the top-level
 * members around traceEvents (schemaVersion, deviceProperties, traceName, ...)
 * once, so `--replicas 1` reproduces the input byte for byte.
 *
 * Memory: the input is held decompressed (the real trace, tens of MB) plus one
 * offset pair per event; the output is streamed, so a 1 GB output needs no
 * more memory than a 26 MB one. Output whose name ends in .gz is gzip
 * (zlib level 6, mtime 0); anything else is plain JSON. The result is a pure
 * function of the input and the options (deterministic); it is written to
 * OUT.tmp and renamed into place. A one-line JSON summary goes to stdout.
 *
 * MB here is 10^6 bytes of output JSON (uncompressed), the unit MB/s figures use.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define GEN_MAX_INPUT ((size_t)4 << 30) /* hard cap on the decompressed input */
#define GEN_MAX_EVENTS ((size_t)200 << 20)

struct span {
    size_t off;
    size_t len;
};

struct patch {
    size_t off; /* value offset inside the whole input */
    size_t len; /* value length */
    int kind;   /* PATCH_TS or PATCH_ID */
};

enum { PATCH_TS = 1, PATCH_ID = 2 };

struct input {
    char *buf;
    size_t len;
    size_t arr_open;  /* offset of '[' of traceEvents (SIZE_MAX for a bare list) */
    size_t arr_close; /* offset of the matching ']' */
    struct span *ev;
    size_t n_ev;
    bool bare_list;
};

struct out {
    FILE *f;
    gzFile gz;
    uint64_t bytes; /* uncompressed bytes written */
};

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "bench_gen_synth: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static void out_write(struct out *o, const void *p, size_t n)
{
    if (n == 0) {
        return;
    }
    if (o->gz) {
        const char *c = p;
        while (n > 0) {
            unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
            if (gzwrite(o->gz, c, chunk) != (int)chunk) {
                die("gzip write failed%s%s", "", "");
            }
            c += chunk;
            n -= chunk;
            o->bytes += chunk;
        }
        return;
    }
    if (fwrite(p, 1, n, o->f) != n) {
        die("write failed: %s%s", strerror(errno), "");
    }
    o->bytes += n;
}

static void read_input(const char *path, struct input *in)
{
    gzFile g = gzopen(path, "rb"); /* reads plain files transparently */
    if (!g) {
        die("cannot open %s: %s", path, strerror(errno));
    }
    gzbuffer(g, 1 << 20);
    size_t cap = 64u << 20;
    size_t len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        die("out of memory%s%s", "", "");
    }
    for (;;) {
        if (cap - len < (1u << 20)) {
            if (cap >= GEN_MAX_INPUT) {
                die("%s: input larger than the %s limit", path, "4 GiB");
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                die("out of memory%s%s", "", "");
            }
            buf = nb;
        }
        unsigned want = (unsigned)(cap - len > (1u << 30) ? (1u << 30) : cap - len);
        int got = gzread(g, buf + len, want);
        if (got < 0) {
            int e = 0;
            die("%s: %s", path, gzerror(g, &e));
        }
        if (got == 0) {
            break;
        }
        len += (size_t)got;
    }
    gzclose(g);
    buf[len] = '\0'; /* strtod never runs off the end */
    in->buf = buf;
    in->len = len;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static size_t skip_ws(const char *b, size_t p, size_t end)
{
    while (p < end && is_ws(b[p])) {
        p++;
    }
    return p;
}

/* p at the opening quote; returns the offset just past the closing quote. */
static size_t skip_string(const char *b, size_t p, size_t end)
{
    for (p++; p < end; p++) {
        if (b[p] == '\\') {
            p++;
        } else if (b[p] == '"') {
            return p + 1;
        }
    }
    die("unterminated string%s%s", "", "");
    return end;
}

/* p at the first byte of a value; returns the offset just past it. Objects and
 * arrays are matched with a string-aware depth counter. */
static size_t skip_value(const char *b, size_t p, size_t end)
{
    if (p >= end) {
        die("unexpected end of input%s%s", "", "");
    }
    char c = b[p];
    if (c == '"') {
        return skip_string(b, p, end);
    }
    if (c == '{' || c == '[') {
        size_t depth = 0;
        for (; p < end; p++) {
            char d = b[p];
            if (d == '"') {
                p = skip_string(b, p, end) - 1;
            } else if (d == '{' || d == '[') {
                depth++;
            } else if (d == '}' || d == ']') {
                if (--depth == 0) {
                    return p + 1;
                }
            }
        }
        die("unbalanced braces in input%s%s", "", "");
    }
    while (p < end && !is_ws(b[p]) && b[p] != ',' && b[p] != '}' && b[p] != ']') {
        p++;
    }
    return p;
}

static bool key_is(const char *b, size_t koff, size_t klen, const char *lit)
{
    size_t n = strlen(lit);
    return klen == n && memcmp(b + koff, lit, n) == 0;
}

/* Splits the elements of the array whose '[' is at `open`; returns ']' offset. */
static size_t split_array(struct input *in, size_t open)
{
    const char *b = in->buf;
    size_t end = in->len;
    size_t cap = 1 << 16;
    in->ev = malloc(cap * sizeof *in->ev);
    if (!in->ev) {
        die("out of memory%s%s", "", "");
    }
    size_t p = skip_ws(b, open + 1, end);
    if (p < end && b[p] == ']') {
        return p;
    }
    for (;;) {
        p = skip_ws(b, p, end);
        if (p >= end || b[p] != '{') {
            die("traceEvents: expected an event object%s%s", "", "");
        }
        size_t q = skip_value(b, p, end);
        if (in->n_ev == cap) {
            if (cap >= GEN_MAX_EVENTS) {
                die("too many events%s%s", "", "");
            }
            cap *= 2;
            struct span *ne = realloc(in->ev, cap * sizeof *in->ev);
            if (!ne) {
                die("out of memory%s%s", "", "");
            }
            in->ev = ne;
        }
        in->ev[in->n_ev].off = p;
        in->ev[in->n_ev].len = q - p;
        in->n_ev++;
        p = skip_ws(b, q, end);
        if (p < end && b[p] == ',') {
            p++;
            continue;
        }
        if (p < end && b[p] == ']') {
            return p;
        }
        die("traceEvents: expected ',' or ']'%s%s", "", "");
    }
}

static void locate_events(struct input *in)
{
    const char *b = in->buf;
    size_t end = in->len;
    size_t p = skip_ws(b, 0, end);
    if (p < end && b[p] == '[') {
        in->bare_list = true;
        in->arr_open = p;
        in->arr_close = split_array(in, p);
        return;
    }
    if (p >= end || b[p] != '{') {
        die("input is neither a JSON object nor a list%s%s", "", "");
    }
    p++;
    for (;;) {
        p = skip_ws(b, p, end);
        if (p < end && b[p] == '}') {
            break;
        }
        if (p >= end || b[p] != '"') {
            die("top level: expected a key%s%s", "", "");
        }
        size_t k = p + 1;
        p = skip_string(b, p, end);
        size_t klen = p - 1 - k;
        p = skip_ws(b, p, end);
        if (p >= end || b[p] != ':') {
            die("top level: expected ':'%s%s", "", "");
        }
        p = skip_ws(b, p + 1, end);
        if (key_is(b, k, klen, "traceEvents")) {
            if (b[p] != '[') {
                die("traceEvents is not an array%s%s", "", "");
            }
            in->arr_open = p;
            in->arr_close = split_array(in, p);
            return;
        }
        p = skip_ws(b, skip_value(b, p, end), end);
        if (p < end && b[p] == ',') {
            p++;
        }
    }
    die("no traceEvents array in the input%s%s", "", "");
}

/* Walks one event object, collecting number patches (in offset order) and
 * reading ts, dur, ph and the id fields. Returns the patch count. */
struct ev_info {
    double ts, dur;
    bool has_ts, is_meta;
    int64_t max_id;
};

static bool id_key(const char *b, size_t k, size_t kl, bool in_args)
{
    if (!in_args) {
        return key_is(b, k, kl, "id");
    }
    return key_is(b, k, kl, "External id") || key_is(b, k, kl, "correlation") ||
           key_is(b, k, kl, "Ev Idx") || key_is(b, k, kl, "Python id") ||
           key_is(b, k, kl, "Python parent id");
}

static bool is_int(const char *b, size_t off, size_t len)
{
    if (len == 0 || len > 18) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (b[off + i] < '0' || b[off + i] > '9') {
            return false; /* negative ids (sentinels) are left alone */
        }
    }
    return true;
}

static int64_t parse_int(const char *b, size_t off, size_t len)
{
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        v = v * 10 + (b[off + i] - '0');
    }
    return v;
}

/* ts must be [-]digits[.digits]; anything else is left unshifted. */
static bool ts_ok(const char *b, size_t off, size_t len)
{
    size_t i = 0;
    size_t digits = 0;
    if (i < len && b[off] == '-') {
        return false;
    }
    while (i < len && b[off + i] >= '0' && b[off + i] <= '9') {
        i++;
        digits++;
    }
    if (digits == 0 || digits > 17) {
        return false;
    }
    if (i < len && b[off + i] == '.') {
        i++;
        while (i < len && b[off + i] >= '0' && b[off + i] <= '9') {
            i++;
        }
    }
    return i == len;
}

static size_t walk_object(const char *b, size_t p, size_t end, bool in_args, struct ev_info *info,
                          struct patch *pt, size_t n_pt, size_t max_pt)
{
    p = skip_ws(b, p + 1, end); /* past '{' */
    while (p < end && b[p] != '}') {
        if (b[p] != '"') {
            die("event: expected a key%s%s", "", "");
        }
        size_t k = p + 1;
        p = skip_string(b, p, end);
        size_t kl = p - 1 - k;
        p = skip_ws(b, p, end);
        p = skip_ws(b, p + 1, end); /* past ':' */
        size_t v = p;
        size_t ve = skip_value(b, v, end);
        if (!in_args && key_is(b, k, kl, "args") && b[v] == '{') {
            n_pt = walk_object(b, v, ve, true, info, pt, n_pt, max_pt);
        } else if (!in_args && key_is(b, k, kl, "ts")) {
            info->has_ts = true;
            info->ts = strtod(b + v, NULL);
            if (ts_ok(b, v, ve - v) && n_pt < max_pt) {
                pt[n_pt++] = (struct patch){v, ve - v, PATCH_TS};
            }
        } else if (!in_args && key_is(b, k, kl, "dur")) {
            info->dur = strtod(b + v, NULL);
        } else if (!in_args && key_is(b, k, kl, "ph")) {
            info->is_meta = ve - v == 3 && b[v + 1] == 'M';
        } else if (id_key(b, k, kl, in_args) && is_int(b, v, ve - v)) {
            int64_t id = parse_int(b, v, ve - v);
            if (id > info->max_id) {
                info->max_id = id;
            }
            if (n_pt < max_pt) {
                pt[n_pt++] = (struct patch){v, ve - v, PATCH_ID};
            }
        }
        p = skip_ws(b, ve, end);
        if (p < end && b[p] == ',') {
            p = skip_ws(b, p + 1, end);
        }
    }
    return n_pt;
}

#define GEN_MAX_PATCH 16

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_gen_synth --in REAL.json[.gz] --out OUT.json[.gz]\n"
               "                       (--target-mb M | --replicas N)\n"
               "Replicates the real trace's events (ts shifted by the trace span, ids by\n"
               "max_id+1 per replica) until the uncompressed output is >= M * 10^6 bytes.\n"
               "OUT ending in .gz is written gzip-compressed; otherwise plain JSON.\n");
}

int main(int argc, char **argv)
{
    const char *in_path = NULL;
    const char *out_path = NULL;
    double target_mb = 0;
    long replicas = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--in") == 0 && i + 1 < argc) {
            in_path = argv[++i];
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "--target-mb") == 0 && i + 1 < argc) {
            target_mb = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--replicas") == 0 && i + 1 < argc) {
            replicas = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!in_path || !out_path || (target_mb <= 0 && replicas <= 0)) {
        usage(stderr);
        return 2;
    }

    struct input in;
    memset(&in, 0, sizeof in);
    read_input(in_path, &in);
    locate_events(&in);
    if (in.n_ev == 0) {
        die("%s: traceEvents is empty%s", in_path, "");
    }
    const char *b = in.buf;

    /* Pass 1: span of the trace and the largest id. */
    double t_min = INFINITY;
    double t_max = -INFINITY;
    int64_t max_id = 0;
    size_t n_meta = 0;
    struct patch pt[GEN_MAX_PATCH];
    for (size_t e = 0; e < in.n_ev; e++) {
        struct ev_info info = {0};
        size_t s = in.ev[e].off;
        walk_object(b, s, s + in.ev[e].len, false, &info, pt, 0, GEN_MAX_PATCH);
        if (info.has_ts) {
            if (info.ts < t_min) {
                t_min = info.ts;
            }
            if (info.ts + info.dur > t_max) {
                t_max = info.ts + info.dur;
            }
        }
        if (info.max_id > max_id) {
            max_id = info.max_id;
        }
        n_meta += info.is_meta;
    }
    int64_t ts_shift = isfinite(t_min) ? (int64_t)ceil(t_max - t_min) + 1000 : 0;
    int64_t id_shift = max_id + 1;

    /* Separator between events: the original's, so replica 0 is the input. */
    const char *sep = ",\n  ";
    size_t sep_len = strlen(sep);
    if (in.n_ev > 1) {
        sep = b + in.ev[0].off + in.ev[0].len;
        sep_len = in.ev[1].off - (in.ev[0].off + in.ev[0].len);
    }

    size_t olen = strlen(out_path);
    bool gz = olen > 3 && strcmp(out_path + olen - 3, ".gz") == 0;
    char *tmp = malloc(olen + 5);
    if (!tmp) {
        die("out of memory%s%s", "", "");
    }
    memcpy(tmp, out_path, olen);
    memcpy(tmp + olen, ".tmp", 5);
    struct out o = {0};
    if (gz) {
        o.gz = gzopen(tmp, "wb6");
        if (o.gz) {
            gzbuffer(o.gz, 1 << 20);
        }
    } else {
        o.f = fopen(tmp, "wb");
        if (o.f) {
            setvbuf(o.f, NULL, _IOFBF, 1 << 20);
        }
    }
    if (!o.gz && !o.f) {
        die("cannot create %s: %s", tmp, strerror(errno));
    }

    /* Head: everything up to and including the events' first byte offset. */
    if (in.bare_list) {
        static const char head[] = "{\"traceEvents\": ";
        out_write(&o, head, sizeof head - 1);
    }
    out_write(&o, b, in.ev[0].off);
    const char *tail = b + in.ev[in.n_ev - 1].off + in.ev[in.n_ev - 1].len;
    size_t tail_len = in.len - (size_t)(tail - b);
    uint64_t target = (uint64_t)(target_mb * 1e6);

    uint64_t n_out = 0;
    long r = 0;
    char num[64];
    bool first = true;
    for (;; r++) {
        if (replicas > 0 ? r >= replicas
                         : (r > 0 && o.bytes + tail_len + (in.bare_list ? 1 : 0) >= target)) {
            break;
        }
        int64_t dts = (int64_t)r * ts_shift;
        int64_t did = (int64_t)r * id_shift;
        for (size_t e = 0; e < in.n_ev; e++) {
            size_t s = in.ev[e].off;
            size_t end = s + in.ev[e].len;
            struct ev_info info = {0};
            size_t np = walk_object(b, s, end, false, &info, pt, 0, GEN_MAX_PATCH);
            if (r > 0 && info.is_meta) {
                continue;
            }
            if (!first) {
                out_write(&o, sep, sep_len);
            }
            first = false;
            if (r == 0) {
                out_write(&o, b + s, end - s);
                n_out++;
                continue;
            }
            size_t cur = s;
            for (size_t i = 0; i < np; i++) {
                out_write(&o, b + cur, pt[i].off - cur);
                const char *v = b + pt[i].off;
                int n;
                if (pt[i].kind == PATCH_ID) {
                    n = snprintf(num, sizeof num, "%" PRId64,
                                 parse_int(b, pt[i].off, pt[i].len) + did);
                    out_write(&o, num, (size_t)n);
                } else {
                    size_t il = 0;
                    while (il < pt[i].len && v[il] != '.') {
                        il++;
                    }
                    n = snprintf(num, sizeof num, "%" PRId64, parse_int(b, pt[i].off, il) + dts);
                    out_write(&o, num, (size_t)n);
                    out_write(&o, v + il, pt[i].len - il); /* ".fraction" verbatim */
                }
                cur = pt[i].off + pt[i].len;
            }
            out_write(&o, b + cur, end - cur);
            n_out++;
        }
    }
    out_write(&o, tail, tail_len);
    if (in.bare_list) {
        out_write(&o, "}", 1);
    }

    if (o.gz) {
        if (gzclose(o.gz) != Z_OK) {
            die("gzip close failed for %s%s", tmp, "");
        }
    } else if (fclose(o.f) != 0) {
        die("write failed for %s: %s", tmp, strerror(errno));
    }
    if (rename(tmp, out_path) != 0) {
        die("cannot rename to %s: %s", out_path, strerror(errno));
    }
    printf("{\"out\": \"%s\", \"bytes\": %" PRIu64 ", \"events\": %" PRIu64
           ", \"replicas\": %ld, \"input_events\": %zu, \"input_meta_events\": %zu"
           ", \"ts_shift_us\": %" PRId64 ", \"id_shift\": %" PRId64 ", \"gzip\": %s}\n",
           out_path, o.bytes, n_out, r, in.n_ev, n_meta, ts_shift, id_shift, gz ? "true" : "false");
    free(tmp);
    free(in.ev);
    free(in.buf);
    return 0;
}
