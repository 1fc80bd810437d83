/* `magpie discover PATH [--kernel-type T] [--no-tests] [--no-examples]
 * [--json]`: the GPU kernels of a project tree with the executables or
 * scripts that may run them and a suggested analyze configuration (the
 * library's mp_discover_kernels, also the MCP tool discover_kernels). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <magpie/config.h>
#include <magpie/kernel_discover.h>

#include "cli.h"
#include "opts.h"

enum { D_TYPE = 't', D_JSON = 1000, D_NO_TESTS, D_NO_EXAMPLES };

static const struct cli_opt discover_opts[] = {
    {"kernel-type", 't', CLI_ARG, D_TYPE, "T",
     "hip|cuda|triton|opencl|all: which kernels (default all; Magpie's MCP default is hip)", 0},
    {"no-tests", 0, CLI_NOARG, D_NO_TESTS, NULL, "skip test/tests/testing directories", 0},
    {"no-examples", 0, CLI_NOARG, D_NO_EXAMPLES, NULL,
     "skip example(s)/sample(s)/demo(s) directories", 0},
    {"json", 0, CLI_NOARG, D_JSON, NULL, "Magpie's discover_kernels list (JSON)", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_discover = {
    .name = "discover",
    .args = "PATH",
    .summary = "find GPU kernels in a project tree (HIP, CUDA, Triton, OpenCL)",
    .intro = "Finds GPU kernels under PATH: CUDA/HIP __global__ functions, OpenCL __kernel\n"
             "functions, Triton @triton.jit functions. For each source file: its kernels,\n"
             "possible executables or test scripts (best match first), a sibling *_ref\n"
             "reference, YAML configs that already name it, and a suggested analyze\n"
             "configuration.\n",
    .opts = discover_opts,
};

static void discover_usage(FILE *f)
{
    cli_help(f, &cli_cmd_discover);
}

int cmd_discover(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    const char *path = NULL, *type = "all";
    bool json = false;
    struct mp_disc_opts o = {.include_tests = true, .include_examples = true};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct cli_opt *opt = cli_find(&cli_cmd_discover, a);
        int id = opt ? opt->id : 0;
        if (id == 'h') {
            discover_usage(stdout);
            return EXIT_OK;
        } else if (id == D_JSON) {
            json = true;
        } else if (id == D_NO_TESTS) {
            o.include_tests = false;
        } else if (id == D_NO_EXAMPLES) {
            o.include_examples = false;
        } else if (id == D_TYPE && i + 1 < argc) {
            type = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "magpie: error: discover: unknown option '%s'\n", a);
            discover_usage(stderr);
            return EXIT_USAGE;
        } else if (!path) {
            path = a;
        } else {
            fprintf(stderr, "magpie: error: discover: one PATH only ('%s')\n", a);
            return EXIT_USAGE;
        }
    }
    if (!path) {
        discover_usage(stderr);
        return EXIT_USAGE;
    }
    o.types = mp_disc_type_mask(type);
    if (!o.types) {
        char names[512]; /* the kernel language table's discovered rows */
        mp_kernel_lang_list(names, sizeof(names), true, "all");
        fprintf(stderr, "magpie: error: discover: --kernel-type must be %s (got '%s')\n", names,
                type);
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_disc_result r;
    int rc = mp_discover_kernels(path, &o, &r, &d);
    if (rc)
        return cli_report_error(&d, rc);
    struct mp_buf b;
    mp_buf_init(&b, 0);
    if (json) {
        rc = mp_disc_json(&r, &b);
        rc = rc ? rc : mp_buf_puts(&b, "\n");
    } else {
        for (size_t i = 0; i < r.n && !rc; i++) {
            const struct mp_disc_entry *e = &r.e[i];
            rc = mp_buf_printf(&b, "%s (%s): ", e->rel, e->type);
            for (size_t j = 0; j < e->n_kernels && !rc; j++)
                rc = mp_buf_printf(&b, "%s%s:%ld", j ? ", " : "", e->kernels[j].name,
                                   e->kernels[j].line);
            rc = rc ? rc : mp_buf_puts(&b, "\n");
            for (size_t j = 0; j < e->n_binaries && !rc; j++)
                rc = mp_buf_printf(&b, "    run:  %s\n", e->binaries[j]);
            if (!rc && e->reference)
                rc = mp_buf_printf(&b, "    ref:  %s\n", e->reference);
            for (size_t j = 0; j < e->n_configs && !rc; j++)
                rc = mp_buf_printf(&b, "    yaml: %s\n", e->configs[j]);
            if (!rc && e->compile_command[0])
                rc = mp_buf_printf(&b, "    compile: %s\n", e->compile_command);
            if (!rc && e->testcase_command[0])
                rc = mp_buf_printf(&b, "    testcase: %s\n", e->testcase_command);
        }
        rc = rc ? rc
                : mp_buf_printf(&b, "%zu kernel source file(s), %zu file(s) scanned%s\n", r.n,
                                r.files_scanned, r.truncated ? " (stopped at the file limit)" : "");
    }
    if (!rc)
        fwrite(b.data ? b.data : "", 1, b.len, stdout);
    mp_buf_fini(&b);
    mp_disc_result_fini(&r);
    if (rc) {
        mp_diag_set(&d, rc, "out of memory");
        return cli_report_error(&d, rc);
    }
    return EXIT_OK;
}
