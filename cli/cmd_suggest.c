/* `magpie suggest RESULT.json | --ncu-csv FILE [--json]`: optimisation
 * suggestions from a kernel's profiler metrics (the library's
 * mp_suggest_json / mp_suggest_ncu_file, also the MCP tool
 * suggest_optimizations). RESULT.json is an analyze() result or a magpie
 * analyze/compare report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/suggest.h>

#include "cli.h"
#include "opts.h"

enum { G_JSON = 1000, G_NCU, G_KID };

static const struct cli_opt suggest_opts[] = {
    {"ncu-csv", 0, CLI_ARG, G_NCU, "FILE", "`ncu --csv` output instead of RESULT.json", 0},
    {"kernel-id", 0, CLI_ARG, G_KID, "ID", "kernel_id to report with --ncu-csv", 0},
    {"json", 0, CLI_NOARG, G_JSON, NULL, "the suggest_optimizations JSON", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_suggest = {
    .name = "suggest",
    .args = "RESULT.json",
    .usage = "       magpie suggest --ncu-csv FILE [--kernel-id ID] [--json]\n",
    .summary = "optimisation suggestions from profiler metrics (ncu, rocprof-compute)",
    .intro = "Optimisation suggestions from profiler metrics: Magpie's rules for\n"
             "rocprof-compute metrics, speed-of-light / occupancy / tensor-pipe rules for\n"
             "Nsight Compute metrics, and launch overhead of many short kernels. Each\n"
             "bottleneck and suggestion names the metric and value that triggered it.\n\n"
             "RESULT.json is an analyze() result, or a magpie analyze/compare report.\n",
    .opts = suggest_opts,
};

static void suggest_usage(FILE *f)
{
    cli_help(f, &cli_cmd_suggest);
}

static void print_one(json_t *o)
{
    printf("%s: %zu bottleneck(s), %zu suggestion(s)\n",
           json_string_value(json_object_get(o, "kernel_id")),
           json_array_size(json_object_get(o, "bottlenecks")),
           json_array_size(json_object_get(o, "suggestions")));
    size_t i;
    json_t *b;
    json_array_foreach(json_object_get(o, "bottlenecks"), i, b)
    {
        printf("  [%s] %s: %s (%s = %g, rule %s)\n",
               json_string_value(json_object_get(b, "severity")),
               json_string_value(json_object_get(b, "type")),
               json_string_value(json_object_get(b, "value")),
               json_string_value(json_object_get(b, "metric")),
               json_number_value(json_object_get(b, "metric_value")),
               json_string_value(json_object_get(b, "threshold")));
    }
    json_array_foreach(json_object_get(o, "suggestions"), i, b)
    {
        printf("  - (%s, %s) %s\n    %s\n", json_string_value(json_object_get(b, "impact")),
               json_string_value(json_object_get(b, "category")),
               json_string_value(json_object_get(b, "suggestion")),
               json_string_value(json_object_get(b, "details")));
    }
    json_t *note = json_object_get(o, "note");
    if (note)
        printf("  note: %s\n", json_string_value(note));
    json_t *err = json_object_get(o, "error");
    if (err)
        printf("  error: %s\n", json_string_value(err));
}

int cmd_suggest(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    const char *file = NULL, *ncu = NULL, *kid = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_opt *opt = cli_find(&cli_cmd_suggest, a);
        int id = opt ? opt->id : 0;
        if (id == 'h') {
            suggest_usage(stdout);
            return EXIT_OK;
        } else if (id == G_JSON) {
            json = true;
        } else if (id == G_NCU && i + 1 < argc) {
            ncu = argv[++i];
        } else if (id == G_KID && i + 1 < argc) {
            kid = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "magpie: error: suggest: unknown option '%s'\n", a);
            suggest_usage(stderr);
            return EXIT_USAGE;
        } else if (!file) {
            file = a;
        } else {
            fprintf(stderr, "magpie: error: suggest: one RESULT.json only ('%s')\n", a);
            return EXIT_USAGE;
        }
    }
    if (!file == !ncu) {
        fprintf(stderr, "magpie: error: suggest: give RESULT.json or --ncu-csv FILE\n");
        suggest_usage(stderr);
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    json_t *out = NULL;
    int rc;
    if (ncu) {
        rc = mp_suggest_ncu_file(ncu, kid, &out, &d);
    } else {
        json_error_t je;
        json_t *in = json_load_file(file, 0, &je);
        if (!in) {
            mp_diag_set(&d, MP_EPARSE, "invalid JSON: %s", je.text);
            mp_diag_set_file(&d, file);
            mp_diag_set_pos(&d, -1, je.line, je.column);
            return cli_report_error(&d, MP_EPARSE);
        }
        rc = mp_suggest_json(in, &out, &d);
        json_decref(in);
    }
    if (rc)
        return cli_report_error(&d, rc);
    if (json) {
        char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s)
            puts(s);
        free(s);
    } else if (json_object_get(out, "kernels")) {
        size_t i;
        json_t *k;
        json_array_foreach(json_object_get(out, "kernels"), i, k) print_one(k);
    } else {
        print_one(out);
    }
    json_decref(out);
    return EXIT_OK;
}
