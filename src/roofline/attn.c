/* Inference attention (category and sheet "InferenceAttention"): vLLM's
 * unified_attention_with_output, aiter's varlen / paged / batch-prefill /
 * MLA kernels and SGLang's paged attention, modelled from the step
 * annotation that encloses the op.
 *
 * A whole engine step runs one attention op per layer over every request,
 * so the per-request shapes are not in the op's args. Serving engines that
 * record "detailed" step annotations give the sums TraceLens needs: for the
 * context (prefill) requests c_sq = sum(sq), c_sk = sum(sk), c_sqsq =
 * sum(sq^2), c_sqsk = sum(sq*sk), and the same g_* for generation requests.
 * flops = H_Q*(2*c_sqsk - c_sqsq)*(d_qk + d_v) + H_Q*2*g_sqsk*(d_qk + d_v)
 * (the causal square of each prefill chunk counted half); bytes = Q, O and the
 * new K/V in Q's dtype plus the cached K/V (sk - sq) in the KV-cache dtype.
 * Without a detailed annotation the row fails, as in TraceLens; with no
 * context nor generation tokens it is skipped. */
#include <ctype.h>
#include <string.h>

#include "roofline_int.h"

struct chunk_stats {
    int64_t c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk;
};

/* ---- annotation formats (TraceUtils/annotation_utils.py) ---- */

static bool lit(const char **p, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(*p, s, n) != 0)
        return false;
    *p += n;
    return true;
}

static bool digits(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t x = 0;
    if (!isdigit((unsigned char)*s))
        return false;
    while (isdigit((unsigned char)*s)) {
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *s - '0', &x))
            x = 0; /* _safe_int would give a huge Python int; 0 is our bound */
        s++;
    }
    *p = s;
    if (v)
        *v = x;
    return true;
}

/* (sq<d>sk<d>sqsq<d>sqsk<d>) */
static bool sq_group(const char **p, int64_t *sq, int64_t *sk, int64_t *sqsq, int64_t *sqsk)
{
    return lit(p, "(sq") && digits(p, sq) && lit(p, "sk") && digits(p, sk) && lit(p, "sqsq") &&
           digits(p, sqsq) && lit(p, "sqsk") && digits(p, sqsk) && lit(p, ")");
}

/* execute_<n>_context_<n>(sq..sk..sqsq..sqsk..)_generation_<n>(...) */
static bool vllm_detailed(const char *a, struct chunk_stats *s)
{
    const char *p = a;
    return lit(&p, "execute_") && digits(&p, NULL) && lit(&p, "_context_") && digits(&p, NULL) &&
           sq_group(&p, &s->c_sq, &s->c_sk, &s->c_sqsq, &s->c_sqsk) && lit(&p, "_generation_") &&
           digits(&p, NULL) && sq_group(&p, &s->g_sq, &s->g_sk, &s->g_sqsq, &s->g_sqsk);
}

/* execute_context_<n>(<n>)_generation_<n>(<n>) */
static bool vllm_native(const char *a)
{
    const char *p = a;
    return lit(&p, "execute_context_") && digits(&p, NULL) && lit(&p, "(") && digits(&p, NULL) &&
           lit(&p, ")_generation_") && digits(&p, NULL) && lit(&p, "(") && digits(&p, NULL) &&
           lit(&p, ")");
}

static bool is_word(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* re.findall(r"(\w+)=(\d+)", body) into a dict (later keys win) */
static int64_t kv_digits(const char *b, const char *e, const char *key, bool *found)
{
    int64_t val = 0;
    *found = false;
    size_t kl = strlen(key);
    const char *p = b;
    while (p < e) {
        const char *w = p;
        while (w < e && is_word(*w))
            w++;
        if (w > p && w < e && *w == '=' && w + 1 < e && isdigit((unsigned char)w[1])) {
            const char *d = w + 1;
            int64_t v = 0;
            while (d < e && isdigit((unsigned char)*d)) {
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *d - '0', &v))
                    v = 0;
                d++;
            }
            if ((size_t)(w - p) == kl && !strncmp(p, key, kl)) {
                val = v;
                *found = true;
            }
            p = d;
            continue;
        }
        p++;
    }
    return val;
}

/* step[EXTEND|DECODE|MIXED ... sqsq=<n> ...] */
static int sglang(const char *a, struct chunk_stats *s)
{
    const char *p = a;
    if (!lit(&p, "step["))
        return 0;
    if (!lit(&p, "EXTEND") && !lit(&p, "DECODE") && !lit(&p, "MIXED"))
        return 0;
    if (is_word(*p))
        return 0; /* \b */
    const char *close = strchr(p, ']');
    if (!close)
        return 0;
    /* detailed: "sqsq=<digit>" before the first ']' */
    bool detailed = false;
    for (const char *q = strstr(p, "sqsq="); q && q < close; q = strstr(q + 1, "sqsq="))
        if (isdigit((unsigned char)q[5]) && q + 5 < close)
            detailed = true;
    if (!detailed)
        return 1; /* native: matched, no sq/sk */
    const char *b = strchr(a, '[') + 1, *e = strrchr(a, ']');
    bool f;
    s->c_sq = kv_digits(b, e, "c_sq", &f);
    s->c_sk = kv_digits(b, e, "c_sk", &f);
    s->c_sqsq = kv_digits(b, e, "c_sqsq", &f);
    s->c_sqsk = kv_digits(b, e, "c_sqsk", &f);
    s->g_sq = kv_digits(b, e, "g_sq", &f);
    s->g_sk = kv_digits(b, e, "g_sk", &f);
    s->g_sqsq = kv_digits(b, e, "g_sqsq", &f);
    s->g_sqsk = kv_digits(b, e, "g_sqsk", &f);
    return 2;
}

/* ATOM: prefill[...] / decode[...] with tok=, sk=, sqsq=, sqsk= (values are
 * \S+ or a [...] list; _safe_int maps non-integers to 0) */
static int64_t atom_value(const char *b, const char *e, const char *key, bool *found)
{
    size_t kl = strlen(key);
    int64_t val = 0;
    *found = false;
    const char *p = b;
    while (p < e) {
        const char *w = p;
        while (w < e && is_word(*w))
            w++;
        if (w > p && w < e && *w == '=' && w + 1 < e) {
            const char *v = w + 1, *ve;
            if (*v == '[' && memchr(v, ']', (size_t)(e - v))) {
                ve = (const char *)memchr(v, ']', (size_t)(e - v)) + 1;
                if (ve + 4 <= e && !strncmp(ve, "...+", 4) && isdigit((unsigned char)ve[4])) {
                    ve += 4;
                    while (ve < e && isdigit((unsigned char)*ve))
                        ve++;
                }
            } else {
                ve = v;
                while (ve < e && !isspace((unsigned char)*ve))
                    ve++;
                if (ve == v) {
                    p++;
                    continue;
                }
            }
            if ((size_t)(w - p) == kl && !strncmp(p, key, kl)) {
                char t[64];
                size_t n = (size_t)(ve - v) < sizeof(t) - 1 ? (size_t)(ve - v) : sizeof(t) - 1;
                memcpy(t, v, n);
                t[n] = '\0';
                if (!roof_parse_pyint(t, &val))
                    val = 0;
                *found = true;
            }
            p = ve;
            continue;
        }
        p++;
    }
    return val;
}

static int atom(const char *a, struct chunk_stats *s)
{
    bool prefill;
    const char *p = a;
    if (lit(&p, "prefill["))
        prefill = true;
    else if (lit(&p, "decode["))
        prefill = false;
    else
        return 0;
    const char *e = strrchr(p, ']');
    if (!e || strchr(p, '\n'))
        return 0;
    bool fq, fk;
    int64_t tok = atom_value(p, e, "tok", &fq);
    int64_t sk = atom_value(p, e, "sk", &fq);
    int64_t sqsq = atom_value(p, e, "sqsq", &fq);
    int64_t sqsk = atom_value(p, e, "sqsk", &fk);
    if (!fq || !fk)
        return 1;
    if (prefill) {
        s->c_sq = tok;
        s->c_sk = sk;
        s->c_sqsq = sqsq;
        s->c_sqsk = sqsk;
    } else {
        s->g_sq = tok;
        s->g_sk = sk;
        s->g_sqsq = sqsq;
        s->g_sqsk = sqsk;
    }
    return 2;
}

/* IterationAnnotation(annotation).chunk_stats(): false when the annotation
 * carries no sq/sk aggregates (TraceLens raises NotImplementedError). */
static bool chunk_stats(const char *a, struct chunk_stats *s)
{
    memset(s, 0, sizeof(*s));
    if (!a)
        return false; /* "NA" */
    if (vllm_detailed(a, s))
        return true;
    memset(s, 0, sizeof(*s));
    if (vllm_native(a))
        return false;
    int r = sglang(a, s);
    if (r)
        return r == 2;
    r = atom(a, s);
    return r == 2;
}

/* ---- models ---- */

struct iattn {
    int64_t NQ, HQ, NKV, HKV, dqk, dv;
    struct chunk_stats st;
    const char *dtype_q, *dtype_kv;
    bool has_kv;    /* dtype_KV is a parameter */
    int64_t window; /* sliding_window parameter; has_window */
    bool has_window;
};

static void p_common(struct roof_ctx *c, const struct iattn *m)
{
    roof_p_int(c, "B", 1);
    roof_p_int(c, "N_Q", m->NQ);
    roof_p_int(c, "H_Q", m->HQ);
    roof_p_int(c, "H_V", m->HKV);
    roof_p_int(c, "H_K", m->HKV);
    roof_p_int(c, "N_KV", m->NKV);
    roof_p_int(c, "H_KV", m->HKV);
    roof_p_int(c, "d_h_qk", m->dqk);
    roof_p_int(c, "d_h_v", m->dv);
    roof_p_float(c, "dropout", 0.0);
    roof_p_bool(c, "causal", false);
    roof_p_bool(c, "flash_impl", true);
    roof_p_int(c, "c_sq", m->st.c_sq);
    roof_p_int(c, "c_sk", m->st.c_sk);
    roof_p_int(c, "c_sqsq", m->st.c_sqsq);
    roof_p_int(c, "c_sqsk", m->st.c_sqsk);
    roof_p_int(c, "g_sq", m->st.g_sq);
    roof_p_int(c, "g_sk", m->st.g_sk);
    roof_p_int(c, "g_sqsq", m->st.g_sqsq);
    roof_p_int(c, "g_sqsk", m->st.g_sqsk);
    roof_p_str(c, "dtype_Q", m->dtype_q);
    if (m->has_kv)
        roof_p_str(c, "dtype_KV", m->dtype_kv);
    if (m->has_window)
        roof_p_int(c, "sliding_window", m->window);
}

/* generation KV capped at g_sq * W for sliding-window layers */
static int64_t cap_gen(const struct iattn *m, int64_t v)
{
    if (m->has_window && m->window > 0 && m->st.g_sq) {
        int64_t lim = m->st.g_sq * m->window;
        return v < lim ? v : lim;
    }
    return v;
}

static void iattn_run(struct roof_ctx *c, const struct iattn *m)
{
    if (roof_begin(c, ROOF_FWD)) {
        if (m->st.c_sq == 0 && m->st.g_sq == 0) {
            roof_notimpl(c, "NotImplementedError: attention step without context or generation "
                            "tokens");
        } else {
            double H = (double)m->HQ, dq = (double)m->dqk, dv = (double)m->dv;
            double csk = (double)m->st.c_sqsk, csq = (double)m->st.c_sqsq;
            double gsk = (double)cap_gen(m, m->st.g_sqsk);
            double f = H * (2 * csk * dq) - H * (1 * csq * dq);
            f += H * (2 * csk * dv) - H * (1 * csq * dv);
            f += H * (2 * gsk * dq) + H * (2 * gsk * dv);
            roof_set_flops(c, f);
            int bq = roof_bpe(m->dtype_q);
            if (!bq)
                bq = 2;
            int bkv = m->dtype_kv && m->dtype_kv[0] ? roof_bpe(m->dtype_kv) : 0;
            if (!bkv)
                bkv = bq;
            double Hk = (double)m->HKV;
            double cq = (double)m->st.c_sq, ck = (double)m->st.c_sk;
            double gq = (double)m->st.g_sq, gk = (double)cap_gen(m, m->st.g_sk);
            double per_q = H * dq + H * dv + Hk * dq + Hk * dv;
            double per_kv = Hk * dq + Hk * dv;
            double q_el = cq * per_q + gq * per_q;
            double kv_el = (ck - cq) * per_kv + (gk - gq) * per_kv;
            roof_set_bytes(c, true, q_el * bq + kv_el * bkv);
        }
        roof_set_spec(c, "matrix", m->dtype_q);
    }
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* TraceLens's placeholder params: the constructor succeeds, flops() returns
 * None (and None / 1e9 raises), flops_bwd() is not implemented */
static void no_perf(struct roof_ctx *c)
{
    if (roof_begin(c, ROOF_FWD))
        roof_fail(c, "TypeError: attention without a detailed (sq/sk) step annotation or with "
                     "unexpected inputs has no flops");
    roof_no_bwd(c, MP_ROOFLINE_SKIP);
}

/* q is (N_Q, H_Q, d_qk) */
static void iattn_q(struct iattn *m, const struct roof_shape *q)
{
    m->NQ = q->d[0];
    m->HQ = q->d[1];
    m->dqk = q->d[2];
}

void roof_iattn(struct roof_ctx *c)
{
    enum roof_iattn_kind kind = (enum roof_iattn_kind)c->cls->variant;
    struct iattn m = {0};
    if (!chunk_stats(c->op->annotation, &m.st)) {
        no_perf(c);
        return;
    }
    struct pv *dims = roof_arg_opt(c, "Input Dims");
    struct pv *types = roof_arg_opt(c, "Input type");
    struct roof_shape q, k, v;
    /* any lookup failure here is caught by TraceLens and becomes "no perf" */
    int st0 = c->st[c->phase];
    if (kind == ROOF_IA_RAGGED) {
        roof_shape(c, roof_at(c, dims, 2), &q);
        roof_shape(c, roof_at(c, dims, 3), &k);
        roof_shape(c, roof_at(c, dims, 4), &v);
        if (roof_ok(c) && (q.n != 3 || k.n < 2 || v.n < 1))
            roof_fail(c, "shape");
        if (roof_ok(c)) {
            iattn_q(&m, &q);
            m.HKV = k.d[k.n - 2];
            m.dv = v.d[v.n - 1];
            m.NKV = m.st.c_sk + m.st.g_sk;
            m.dtype_q = roof_str(c, roof_at(c, types, 2));
        }
    } else if (kind == ROOF_IA_GLUON) {
        roof_shape(c, roof_at(c, dims, 0), &q);
        roof_shape(c, roof_at(c, dims, 2), &k);
        if (roof_ok(c) && (q.n < 3 || k.n < 2))
            roof_fail(c, "shape");
        if (roof_ok(c)) {
            iattn_q(&m, &q);
            m.HKV = k.d[1];
            m.dv = m.dqk;
            m.st.c_sq = m.st.c_sk = m.st.c_sqsq = m.st.c_sqsk = 0;
            m.NKV = m.st.g_sk;
            m.dtype_q = roof_str(c, roof_at(c, types, 0));
            size_t nt = roof_len(c, types);
            m.dtype_kv = roof_str(c, roof_at(c, types, nt > 2 ? 2 : 0));
            m.has_kv = true;
            struct pv *conc = roof_arg_opt(c, "Concrete Inputs");
            struct pv *w = roof_pv_is_array(conc) ? roof_pv_array_get(conc, 19) : NULL;
            int64_t wv = 0;
            if (roof_pv_is_string(w) && !roof_parse_pyint(roof_pv_string_value(w), &wv))
                wv = 0;
            else if (roof_pv_is_integer(w))
                wv = (int64_t)roof_pv_integer_value(w);
            m.window = wv;
            m.has_window = true;
        }
    } else {
        roof_shape(c, roof_at(c, dims, 0), &q);
        roof_shape(c, roof_at(c, dims, 1), &k);
        if (roof_ok(c) && (q.n != 3 || k.n < 3))
            roof_fail(c, "shape");
        if (roof_ok(c)) {
            iattn_q(&m, &q);
            m.NKV = k.d[k.n - 3];
            m.HKV = k.d[k.n - 2];
            m.dv = k.d[k.n - 1];
            m.dtype_q = roof_str(c, roof_at(c, types, 0));
            const char *kvd = c->op->kv_cache_dtype;
            if (kvd && kvd[0])
                m.dtype_kv = kvd;
            else
                m.dtype_kv = roof_len(c, types) > 1 ? roof_str(c, roof_at(c, types, 1)) : m.dtype_q;
            m.has_kv = true;
        }
    }
    if (!roof_ok(c)) {
        /* the parse failure is TraceLens's no-perf placeholder */
        c->st[c->phase] = st0;
        c->out->error[0] = '\0';
        no_perf(c);
        return;
    }
    if (kind == ROOF_IA_DV_DIM2) {
        /* args.get("Input Dims") or []; len(dims[2]) >= 1 */
        struct pv *d2 = roof_pv_is_array(dims) ? roof_pv_array_get(dims, 2) : NULL;
        if (roof_pv_is_array(d2) && roof_pv_array_size(d2) >= 1)
            m.dv = roof_int(c, roof_pv_array_get(d2, roof_pv_array_size(d2) - 1));
    } else if (kind == ROOF_IA_TILELANG) {
        m.dv = 512; /* TraceLens reads Concrete Inputs from the event, not its args */
    }
    if (!roof_ok(c))
        return;
    p_common(c, &m);
    iattn_run(c, &m);
}
