/* `magpie trace sources [TRACE] --kernel-source-repos PATH...`: maps kernel
 * names (from a trace, with its Python-stack evidence, or one per line on
 * stdin) to the files that define them, with a calibrated confidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/fmt.h>
#include <magpie/sources.h>

#include "cli.h"
#include "opts.h"

enum { S_REPOS = 1000, S_JSON, S_CACHE_DIR, S_NO_CACHE };

static const struct cli_opt sources_opts[] = {
    {"kernel-source-repos", 0, CLI_ARG, S_REPOS, "PATH...",
     "source trees to index (vLLM, PyTorch, aiter, an inductor cache dir, ...); indexed once, "
     "cached on disk",
     0},
    {"json", 0, CLI_NOARG, S_JSON, NULL, "JSON: repos[] and kernels[] with every column", 0},
    {"cache-dir", 0, CLI_ARG, S_CACHE_DIR, "D",
     "index cache directory (default $XDG_CACHE_HOME/magpie/sources)", 0},
    {"no-cache", 0, CLI_NOARG, S_NO_CACHE, NULL, "neither read nor write the index cache", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_trace_sources = {
    .name = "trace sources",
    .args = "[TRACE]",
    .summary = "map kernel names (from TRACE or stdin) to the source files that define them, "
               "with a calibrated confidence",
    .intro = "Maps each kernel name to the source file and line that define it. Names come\n"
             "from TRACE (events with cat \"kernel\"; the Python frames of with_stack traces\n"
             "are used as evidence) or, without TRACE, one per line from stdin.\n",
    .opts = sources_opts,
    .outro = "Each row has source_resolution (resolved | unresolved | closed | unsupported),\n"
             "source_confidence (0..1, the calibrated probability that source_file is the\n"
             "definition; 0 for closed libraries) and up to 3 source_candidates.\n\n"
             "examples:\n"
             "  magpie trace sources trace.json.gz --kernel-source-repos ~/src/vllm ~/src/pytorch\n"
             "  echo 'void vllm::rms_norm_kernel<float>(...)' | magpie trace sources \\\n"
             "      --kernel-source-repos ~/src/vllm --json\n",
};

static void sources_usage(FILE *f)
{
    cli_help(f, &cli_cmd_trace_sources);
}

static int read_stdin_names(struct mp_src_trace_kernels *l)
{
    char *line = NULL;
    size_t cap = 0, capk = 0;
    ssize_t got;
    int rc = 0;
    while (!rc && (got = getline(&line, &cap, stdin)) > 0) {
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
            line[--got] = 0;
        if (got == 0)
            continue;
        if (MP_GROW(l->k, capk, l->n + 1, 64)) {
            rc = MP_ENOMEM;
            break;
        }
        memset(&l->k[l->n], 0, sizeof(l->k[0]));
        l->k[l->n].name = mp_strdup(line);
        if (!l->k[l->n].name)
            rc = MP_ENOMEM;
        else
            l->n++;
    }
    free(line);
    return rc;
}

/* One row: TSV (resolution, confidence, kind, source, name[, replay]) or a
 * JSON object (with "replay_command" when there is a TRACE). */
static int emit_row(struct mp_buf *b, bool json, const char *trace, const char *capture, size_t i,
                    const struct mp_src_trace_kernel *k, const struct mp_src_result *r)
{
    int rc = 0;
    if (json) {
        rc = i ? mp_buf_puts(b, ", ") : 0;
        size_t at = b->len;
        rc = rc ? rc : mp_src_kernel_json(b, k, r);
        if (rc || !trace || b->len <= at || b->data[b->len - 1] != '}')
            return rc;
        b->len--; /* reopen the object for one key more */
        struct mp_buf cmd;
        mp_buf_init(&cmd, 0);
        rc = mp_src_replay_command(&cmd, trace, capture, k->name, i + 1);
        rc = rc ? rc : mp_buf_puts(b, ", \"replay_command\": ");
        rc = rc ? rc : mp_json_str(b, mp_buf_cstr(&cmd), cmd.len);
        mp_buf_fini(&cmd);
        return rc ? rc : mp_buf_putc(b, '}');
    }
    char src[1024];
    if (r->source_file)
        snprintf(src, sizeof(src), "%s/%s:%ld", r->source_repo, r->source_file, r->source_line);
    else
        snprintf(src, sizeof(src), "-- %s", r->error ? r->error : "");
    rc = mp_buf_printf(b, "%s\t%.3f\t%s\t%s\t%.120s", r->resolution, r->confidence, r->kind, src,
                       k->name);
    if (!rc && trace) {
        rc = mp_buf_putc(b, '\t');
        rc = rc ? rc : mp_src_replay_command(b, trace, capture, k->name, i + 1);
    }
    return rc ? rc : mp_buf_putc(b, '\n');
}

int cli_trace_sources(int argc, char **argv)
{
    const char *trace = NULL, *cache_dir = NULL;
    bool json = false, no_cache = false;
    const char **repos = calloc((size_t)argc + 1, sizeof(char *));
    size_t nrepos = 0;
    if (!repos)
        return EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_opt *opt = cli_find(&cli_cmd_trace_sources, a);
        int id = opt ? opt->id : 0;
        if (id == 'h') {
            sources_usage(stdout);
            free(repos);
            return EXIT_OK;
        } else if (id == S_JSON) {
            json = true;
        } else if (id == S_NO_CACHE) {
            no_cache = true;
        } else if (id == S_CACHE_DIR && i + 1 < argc) {
            cache_dir = argv[++i];
        } else if (id == S_REPOS) {
            while (i + 1 < argc && argv[i + 1][0] != '-')
                repos[nrepos++] = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "magpie: error: trace sources: unknown option '%s'\n", a);
            sources_usage(stderr);
            free(repos);
            return EXIT_USAGE;
        } else if (!trace) {
            trace = a;
        } else {
            fprintf(stderr, "magpie: error: trace sources: one TRACE at most ('%s')\n", a);
            free(repos);
            return EXIT_USAGE;
        }
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_src_trace_kernels ks = {0};
    int rc = trace ? mp_src_trace_kernels(trace, &ks, &d) : read_stdin_names(&ks);
    if (rc) {
        free(repos);
        mp_src_trace_kernels_fini(&ks);
        return cli_report_error(&d, rc);
    }
    struct mp_src_index *ix = NULL;
    struct mp_src_index_opts o = {.cache_dir = cache_dir, .no_cache = no_cache};
    rc = mp_src_index_open(repos, nrepos, &o, &ix, &d);
    free(repos);
    if (rc) {
        mp_src_trace_kernels_fini(&ks);
        return cli_report_error(&d, rc);
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (json) {
        rc = mp_buf_puts(&b, "{\"repos\": ");
        rc = rc ? rc : mp_src_repos_json(&b, ix);
        rc = rc ? rc : mp_buf_puts(&b, ", \"kernels\": [");
    } else {
        for (size_t i = 0; i < mp_src_index_repos(ix); i++) {
            const struct mp_src_repo_info *ri = mp_src_index_repo(ix, i);
            fprintf(stderr, "magpie: indexed %s: %zu files, %zu definitions, %.2f s%s\n", ri->root,
                    ri->n_files, ri->n_defs, ri->seconds, ri->from_cache ? " (cache)" : "");
        }
        rc = mp_buf_puts(&b, trace ? "resolution\tconfidence\tkind\tsource\tname\treplay\n"
                                   : "resolution\tconfidence\tkind\tsource\tname\n");
    }
    char *capture = trace ? mp_src_capture_dir(trace) : NULL;
    for (size_t i = 0; i < ks.n && !rc; i++) {
        const struct mp_src_trace_kernel *k = &ks.k[i];
        struct mp_src_evidence ev = {(const char *const *)k->frames, k->n_frames};
        struct mp_src_context ctx = {(const char *const *)ks.packages, ks.n_packages, ks.platform};
        struct mp_src_result r;
        rc = mp_src_resolve_ctx(ix, k->name, &ev, &ctx, &r);
        if (rc)
            break;
        rc = emit_row(&b, json, trace, capture, i, k, &r);
        mp_src_result_fini(&r);
    }
    if (json && !rc)
        rc = mp_buf_puts(&b, "]}\n");
    if (!rc)
        fwrite(b.data ? b.data : "", 1, b.len, stdout);
    free(capture);
    mp_buf_fini(&b);
    mp_src_index_free(ix);
    mp_src_trace_kernels_fini(&ks);
    if (rc) {
        mp_diag_set(&d, rc, "out of memory");
        return cli_report_error(&d, rc);
    }
    return EXIT_OK;
}
