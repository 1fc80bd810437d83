/* mp_roofline_model: one CPU op through its TraceLens perf model class.
 *
 * TraceLens (TreePerf/tree_perf.py compute_perf_metrics) constructs the
 * class (parameter parsing), then calls flops(), bytes() with no arguments,
 * and reads the compute spec and param_details; the backward tables call
 * flops_bwd() and bytes_bwd() on a second instance. A NotImplementedError
 * anywhere drops the row silently, any other exception counts it as failed.
 * The model functions follow the same order through roof_begin phases, so the
 * first "exception" of each phase decides its status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline_int.h"

/* Stores the results of the phase that just ended into the result. */
static void close_phase(struct roof_ctx *c)
{
    struct mp_roofline_result *r = c->out;
    if (c->phase == ROOF_FWD && c->st[ROOF_FWD] == MP_ROOFLINE_OK) {
        r->gflops = c->flops / 1e9;
        r->has_bytes = c->has_bytes;
        r->bytes = c->has_bytes ? c->bytes : 0;
    } else if (c->phase == ROOF_BWD && c->st[ROOF_BWD] == MP_ROOFLINE_OK) {
        r->gflops_bwd = c->flops / 1e9;
        r->has_bytes_bwd = c->has_bytes;
        r->bytes_bwd = c->has_bytes ? c->bytes : 0;
    }
}

bool roof_begin(struct roof_ctx *c, enum roof_phase p)
{
    close_phase(c);
    c->phase = p;
    c->flops = 0;
    c->has_bytes = false;
    c->bytes = 0;
    if (c->st[ROOF_INIT] != MP_ROOFLINE_OK) {
        c->st[p] = c->st[ROOF_INIT];
        return false;
    }
    c->st[p] = MP_ROOFLINE_OK;
    return true;
}

void roof_no_bwd(struct roof_ctx *c, int kind)
{
    if (roof_begin(c, ROOF_BWD))
        roof_raise(c, kind, "backward pass is not defined for this op");
}

int mp_roofline_model(const struct mp_roofline_op *op, struct mp_roofline_result *out)
{
    if (!out)
        return MP_EINVAL;
    memset(out, 0, sizeof(*out));
    out->category = "other";
    out->compute_spec = "";
    if (!op || !op->name)
        return MP_EINVAL;

    const char *first_kernel = op->n_kernels > 0 && op->kernel_names ? op->kernel_names[0] : NULL;
    const struct roof_entry *e = roof_lookup(op->name);
    out->category = e ? e->category : mp_roofline_category(op->name, first_kernel);
    const struct roof_class *cls = e ? e->cls : roof_prefix_class(op->name);
    if (!cls) {
        out->status = MP_ROOFLINE_NONE;
        out->status_bwd = MP_ROOFLINE_NONE;
        return 0;
    }
    out->sheet = cls->sheet;
    out->category_bwd = cls->category_bwd;
    if (!cls->fn) {
        out->status = MP_ROOFLINE_FAILED;
        out->status_bwd = MP_ROOFLINE_FAILED;
        snprintf(out->error, sizeof(out->error), "TraceLens model %s is not implemented in magpie",
                 cls->cls);
        return 0;
    }

    struct roof_ctx c;
    memset(&c, 0, sizeof(c));
    c.op = op;
    c.cls = cls;
    c.out = out;
    c.phase = ROOF_INIT;
    c.st[ROOF_INIT] = c.st[ROOF_FWD] = MP_ROOFLINE_OK;
    /* a class whose code never reaches a backward phase has no flops_bwd */
    c.st[ROOF_BWD] = MP_ROOFLINE_FAILED;
    /* not zeroed: roof_pv_parse sets what it uses */
    struct roof_pv_doc doc;
    doc.nodes = NULL;
    doc.text = NULL;
    if (op->args && op->args_len > 0) {
        int rc = roof_pv_parse(op->args, op->args_len, &doc);
        if (rc == MP_ENOMEM) {
            c.oom = true;
            roof_fail(&c, "args too large");
        } else if (rc) {
            roof_fail(&c, "args are not valid JSON");
        } else if (!roof_pv_is_object(roof_pv_root(&doc))) {
            roof_fail(&c, "args is not a JSON object");
        } else {
            c.args = roof_pv_root(&doc);
        }
    }
    if (roof_ok(&c))
        cls->fn(&c);
    if (c.phase == ROOF_INIT) /* the model failed before computing anything */
        roof_begin(&c, ROOF_FWD);
    close_phase(&c);
    roof_pv_free(&doc);

    out->status = c.st[ROOF_INIT] != MP_ROOFLINE_OK ? c.st[ROOF_INIT] : c.st[ROOF_FWD];
    out->status_bwd = c.st[ROOF_INIT] != MP_ROOFLINE_OK ? c.st[ROOF_INIT] : c.st[ROOF_BWD];
    /* "<maf>_<precision>", e.g. matrix_bf16, kept with the param texts */
    size_t spec_off = 0;
    bool has_spec = c.st[ROOF_INIT] == MP_ROOFLINE_OK && c.maf && c.precision;
    if (has_spec) {
        size_t n = strlen(c.maf) + strlen(c.precision) + 2;
        char *p = realloc(c.pbuf, c.plen + n);
        if (!p) {
            c.oom = true;
        } else {
            c.pbuf = p;
            c.pcap = c.plen + n;
            spec_off = c.plen;
            snprintf(p + c.plen, n, "%s_%s", c.maf, c.precision);
            c.plen += n;
        }
    }
    if (c.oom) {
        free(c.pbuf);
        memset(out->params, 0, sizeof(out->params));
        out->n_params = 0;
        return MP_ENOMEM;
    }
    out->buf_ = c.pbuf;
    if (has_spec)
        out->compute_spec = c.pbuf + spec_off;
    for (int i = 0; i < out->n_params; i++)
        out->params[i].text = c.pbuf ? c.pbuf + c.poff[i] : NULL;
    return 0;
}

void mp_roofline_result_fini(struct mp_roofline_result *r)
{
    if (!r)
        return;
    free(r->buf_);
    r->buf_ = NULL;
    r->n_params = 0;
}
