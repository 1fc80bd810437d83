/* magpie kernel discovery: finds the GPU kernels of a project tree (HIP,
 * CUDA, Triton, OpenCL), the executables and test scripts that may run
 * them, and a suggested analyze configuration for each source file
 * (Magpie's discover_kernels, `magpie discover`). */
#ifndef MAGPIE_KERNEL_DISCOVER_H
#define MAGPIE_KERNEL_DISCOVER_H
#include <stdbool.h>
#include <stddef.h>

#include <magpie/base.h>

enum {
    MP_DISC_HIP = 1,
    MP_DISC_CUDA = 2,
    MP_DISC_TRITON = 4,
    MP_DISC_OPENCL = 8,
    MP_DISC_ALL = 15,
};

/* "hip", "cuda", "triton", "opencl" or "all" -> MP_DISC_* mask; 0 unknown. */
unsigned mp_disc_type_mask(const char *name);

struct mp_disc_opts {
    unsigned types;        /* MP_DISC_* mask */
    bool include_tests;    /* descend into test/tests/testing directories */
    bool include_examples; /* descend into example(s)/sample(s)/demo(s) directories */
    size_t max_files;      /* files looked at before stopping; 0 = 200000 */
};

struct mp_disc_fn {
    char *name;
    long line; /* 1-based */
};

struct mp_disc_entry {
    char *source_file; /* root joined with the relative path */
    char *rel;         /* path relative to root */
    const char *type;  /* "hip" | "cuda" | "triton" | "opencl" */
    struct mp_disc_fn *kernels;
    size_t n_kernels;
    bool has_main;   /* defines main() / a __main__ block: runs by itself */
    char **binaries; /* possible executables / test scripts, best first */
    size_t n_binaries;
    char *reference; /* a sibling <stem>_ref file, or NULL */
    char **configs;  /* YAML files under root that name this source */
    size_t n_configs;
    char *testcase_command; /* "" when nothing suggests one */
    char *compile_command;  /* "" when none is needed or known */
    char *working_dir;
};

struct mp_disc_result {
    struct mp_disc_entry *e;
    size_t n;
    size_t files_scanned;
    bool truncated; /* max_files was reached */
};

/* Walks root (a directory, or one source file). Errors: MP_ENOTFOUND when
 * root does not exist, MP_EINVAL for an empty type mask, MP_ENOMEM. */
int mp_discover_kernels(const char *root, const struct mp_disc_opts *o, struct mp_disc_result *out,
                        struct mp_diag *d);
void mp_disc_result_fini(struct mp_disc_result *r);

/* Magpie's result: a JSON list of {source_file, possible_binaries[],
 * suggested_config{kernel_path, kernel_type, testcase_command, working_dir,
 * compile_command, [kernel_name], [reference]}} plus magpie's kernel_type,
 * kernels[{name, line}] and configs[]. */
int mp_disc_json(const struct mp_disc_result *r, struct mp_buf *b);

#endif
