/* MCP tool find_kernel_sources: maps kernel names (given, or every kernel
 * of a torch-profiler trace with its Python-stack evidence) to the source
 * file and line that define them, with a calibrated confidence and up to 3
 * candidates (src/sources, as `magpie trace sources --json`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/sources.h>

#include "../mcp_int.h"

static int names_from_args(json_t *a, struct mp_src_trace_kernels *ks)
{
    size_t n = json_array_size(a), i;
    json_t *v;
    ks->k = calloc(n ? n : 1, sizeof(*ks->k));
    if (!ks->k)
        return MP_ENOMEM;
    json_array_foreach(a, i, v)
    {
        ks->k[ks->n].name = mp_strdup(json_string_value(v));
        if (!ks->k[ks->n].name)
            return MP_ENOMEM;
        ks->n++;
    }
    return 0;
}

/* Each kernel's replay command: the op behind it rebuilt by `magpie trace
 * replay` (docs/replay.md). */
static int add_replay_commands(json_t *j, const char *trace)
{
    json_t *ks = json_object_get(j, "kernels"), *k;
    size_t i;
    int rc = 0;
    char *cap = mp_src_capture_dir(trace);
    json_array_foreach(ks, i, k)
    {
        const char *name = json_string_value(json_object_get(k, "name"));
        struct mp_buf cmd;
        mp_buf_init(&cmd, 0);
        rc = rc ? rc : mp_src_replay_command(&cmd, trace, cap, name ? name : "", i + 1);
        if (!rc && json_object_set_new(k, "replay_command", json_string(mp_buf_cstr(&cmd))))
            rc = MP_ENOMEM;
        mp_buf_fini(&cmd);
    }
    free(cap);
    return rc;
}

static int run(struct mcp_wctx *w, json_t *args, json_t **result)
{
    (void)w;
    json_t *names = json_object_get(args, "kernel_names");
    const char *trace = mcp_str(args, "trace_path");
    if (!json_array_size(names) && !trace)
        return mcp_fail(result, "give kernel_names (a list of kernel names) or trace_path");
    if (json_array_size(names) && trace)
        return mcp_fail(result, "give kernel_names or trace_path, not both");
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_src_trace_kernels ks = {0};
    int rc = trace ? mp_src_trace_kernels(trace, &ks, &d) : names_from_args(names, &ks);
    if (rc) {
        mp_src_trace_kernels_fini(&ks);
        if (!trace)
            return mcp_fail(result, "out of memory");
        return mcp_fail_diag(result, "cannot read the trace's kernels", &d);
    }
    json_t *rl = json_object_get(args, "kernel_source_repos");
    size_t nrepos = json_array_size(rl), i;
    const char **repos = calloc(nrepos ? nrepos : 1, sizeof(char *));
    json_t *v;
    if (!repos) {
        mp_src_trace_kernels_fini(&ks);
        return mcp_fail(result, "out of memory");
    }
    json_array_foreach(rl, i, v) repos[i] = json_string_value(v);
    struct mp_src_index *ix = NULL;
    struct mp_src_index_opts o = {.cache_dir = mcp_str(args, "cache_dir"),
                                  .no_cache = mcp_bool(args, "no_cache")};
    rc = mp_src_index_open(repos, nrepos, &o, &ix, &d);
    free(repos);
    if (rc) {
        mp_src_trace_kernels_fini(&ks);
        return mcp_fail_diag(result, "cannot index kernel_source_repos", &d);
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    rc = mp_buf_puts(&b, "{\"repos\": ");
    rc = rc ? rc : mp_src_repos_json(&b, ix);
    rc = rc ? rc : mp_buf_puts(&b, ", \"kernels\": [");
    size_t n_resolved = 0, n_closed = 0;
    /* the trace's loaded packages and platform decide among same-named copies
     * when a kernel has no stack of its own (docs/sources.md) */
    struct mp_src_context ctx = mp_src_trace_context(&ks);
    for (size_t k = 0; k < ks.n && !rc; k++) {
        struct mp_src_evidence ev = {(const char *const *)ks.k[k].frames, ks.k[k].n_frames};
        struct mp_src_result r;
        rc = mp_src_resolve_ctx(ix, ks.k[k].name, &ev, &ctx, &r);
        if (rc)
            break;
        n_resolved += strcmp(r.resolution, "resolved") == 0;
        n_closed += strcmp(r.resolution, "closed") == 0;
        if (k)
            rc = mp_buf_puts(&b, ", ");
        rc = rc ? rc : mp_src_kernel_json(&b, &ks.k[k], &r);
        mp_src_result_fini(&r);
    }
    rc = rc ? rc
            : mp_buf_printf(&b, "], \"total\": %zu, \"resolved\": %zu, \"closed\": %zu}", ks.n,
                            n_resolved, n_closed);
    mp_src_index_free(ix);
    mp_src_trace_kernels_fini(&ks);
    json_t *j = rc ? NULL : mcp_parse_buf(&b);
    mp_buf_fini(&b);
    if (j && trace && add_replay_commands(j, trace)) {
        json_decref(j);
        j = NULL;
    }
    if (!j)
        return mcp_fail(result, "find_kernel_sources: cannot format the result");
    *result = j;
    return 0;
}

static const struct mcp_param params[] = {
    {"kernel_names", MT_STRLIST, false, NULL, NULL, 0, 0,
     "kernel names as the profiler prints them (mangled or demangled)"},
    {"trace_path", MT_STR, false, NULL, NULL, 0, 0,
     "instead of kernel_names: a torch-profiler trace (.json/.json.gz); its kernels and their "
     "Python-stack evidence are used"},
    {"kernel_source_repos", MT_STRLIST, false, NULL, NULL, 0, 0,
     "source trees to index (vLLM, PyTorch, aiter, an inductor cache dir, ...); none = "
     "classification only"},
    {"cache_dir", MT_STR, false, NULL, NULL, 0, 0,
     "index cache directory; null = $XDG_CACHE_HOME/magpie/sources"},
    {"no_cache", MT_BOOL, false, "false", NULL, 0, 0, "neither read nor write the index cache"},
    {NULL, 0, false, NULL, NULL, 0, 0, NULL},
};

const struct mcp_tool mcp_tool_find_kernel_sources = {
    .name = "find_kernel_sources",
    .title = "Kernel-to-source mapping",
    .desc = "Maps GPU kernel names (or every kernel of a torch-profiler trace) to the file and "
            "line that define them in the given source trees, with a calibrated confidence "
            "(0..1), up to 3 candidates for ambiguous names, and closed-library kernels "
            "(cuBLAS, cuDNN, hipBLASLt, ...) reported as such.",
    .params = params,
    .run = run,
    .flags = MCP_LONG | MCP_EXTRA, /* writes the index cache */
    .result_desc =
        "`{repos[{root, commit, files, definitions, from_cache, seconds}], "
        "kernels[{name, demangled, kind, category, source_resolution, source_repo, "
        "source_root, source_file, source_line, source_confidence, source_symbol, "
        "source_error, library, notes, upstream_url, source_candidates[{repo, file, "
        "symbol, line, score}], calls, python_frames, replay_command (with trace_path: the "
        "`magpie trace replay` of the op behind it)}], total, resolved, closed}`.",
};
