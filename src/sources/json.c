/* JSON form of the source-mapping rows and of the indexed repos, shared by
 * `magpie trace sources --json` and the MCP tool find_kernel_sources. */
#include <stdio.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/sources.h>

static int js(struct mp_buf *b, const char *key, const char *val)
{
    int rc = mp_buf_printf(b, ", \"%s\": ", key);
    return rc ? rc : val ? mp_json_str(b, val, strlen(val)) : mp_buf_puts(b, "null");
}

int mp_src_kernel_json(struct mp_buf *b, const struct mp_src_trace_kernel *k,
                       const struct mp_src_result *r)
{
    int rc = mp_buf_puts(b, "{\"name\": ");
    rc = rc ? rc : mp_json_str(b, k->name, strlen(k->name));
    rc = rc ? rc : js(b, "demangled", r->demangled);
    rc = rc ? rc : js(b, "kind", r->kind);
    rc = rc ? rc : js(b, "category", r->category);
    rc = rc ? rc : js(b, "source_resolution", r->resolution);
    rc = rc ? rc : js(b, "source_repo", r->source_repo);
    rc = rc ? rc : js(b, "source_root", r->source_root);
    rc = rc ? rc : js(b, "source_file", r->source_file);
    rc = rc ? rc
            : mp_buf_printf(b, ", \"source_line\": %ld, \"source_confidence\": %.3f",
                            r->source_line, r->confidence);
    rc = rc ? rc : js(b, "source_symbol", r->source_symbol);
    rc = rc ? rc : js(b, "source_error", r->error);
    rc = rc ? rc : js(b, "library", r->library);
    rc = rc ? rc : js(b, "notes", r->notes);
    rc = rc ? rc : js(b, "upstream_url", r->upstream_url);
    rc = rc ? rc : js(b, "test_file", r->test_file);
    rc = rc ? rc : js(b, "test_cmd", r->test_cmd);
    rc = rc ? rc : js(b, "baseline_ref_file", r->baseline_ref_file);
    rc = rc ? rc : js(b, "baseline_ref_symbol", r->baseline_ref_symbol);
    rc = rc ? rc : js(b, "baseline_ref_kind", r->baseline_ref_kind);
    rc = rc ? rc : js(b, "triton_ref_file", r->triton_ref_file);
    rc = rc ? rc : js(b, "triton_ref_symbol", r->triton_ref_symbol);
    rc = rc ? rc : mp_buf_puts(b, ", \"source_candidates\": [");
    for (int i = 0; i < r->n_cand && !rc; i++) {
        rc = mp_buf_puts(b, i ? ", {\"repo\": " : "{\"repo\": ");
        rc = rc ? rc : mp_json_str(b, r->cand[i].repo, strlen(r->cand[i].repo));
        rc = rc ? rc : js(b, "file", r->cand[i].file);
        rc = rc ? rc : js(b, "symbol", r->cand[i].symbol);
        rc = rc ? rc
                : mp_buf_printf(b, ", \"line\": %ld, \"score\": %.3f}", r->cand[i].line,
                                r->cand[i].score);
    }
    rc = rc ? rc : mp_buf_printf(b, "], \"calls\": %llu, \"python_frames\": [", k->calls);
    for (size_t i = 0; i < k->n_frames && !rc; i++) {
        if (i)
            rc = mp_buf_puts(b, ", ");
        rc = rc ? rc : mp_json_str(b, k->frames[i], strlen(k->frames[i]));
    }
    return rc ? rc : mp_buf_puts(b, "]}");
}

int mp_src_repos_json(struct mp_buf *b, const struct mp_src_index *ix)
{
    int rc = mp_buf_puts(b, "[");
    for (size_t i = 0; i < mp_src_index_repos(ix) && !rc; i++) {
        const struct mp_src_repo_info *ri = mp_src_index_repo(ix, i);
        rc = mp_buf_puts(b, i ? ", {\"root\": " : "{\"root\": ");
        rc = rc ? rc : mp_json_str(b, ri->root, strlen(ri->root));
        rc = rc ? rc : mp_buf_puts(b, ", \"commit\": ");
        rc = rc ? rc : mp_json_str(b, ri->commit, strlen(ri->commit));
        rc = rc ? rc
                : mp_buf_printf(b,
                                ", \"files\": %zu, \"definitions\": %zu, \"from_cache\": %s, "
                                "\"seconds\": %.3f}",
                                ri->n_files, ri->n_defs, ri->from_cache ? "true" : "false",
                                ri->seconds);
    }
    return rc ? rc : mp_buf_puts(b, "]");
}
