/* Unit tests for the kernel language table (src/config/klang.c): the five
 * built-in rows say what the code said before the table (names, aliases,
 * error lists, discovery bits, dispatch, back-end words, the auto
 * profiler), and stand-in languages registered through the table alone
 * (mp_kernel_lang_register, no other code) are picked up by config parsing,
 * discovery (src/kernel/find_kernels.c) and dispatch (mp_kernel_spec_runs, the
 * job's back-end word), and analyze runs the C-like stand-in end to end on
 * the harness's OpenCL device (PoCL) by its row alone, and Python ones in
 * the runner (CPU torch) as KernelBench or through their row's
 * runner_entry. */
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/config.h>
#include <magpie/kernel.h>
#include <magpie/kernel_discover.h>

static char g_tmp[256];
static char g_run[] = "./run", g_prof[] = "./prof";

/* ---- the built-in rows ---- */

static void test_builtin_names(void **state)
{
    (void)state;

    static const struct {
        const char *word;
        enum mp_kernel_type t;
    } words[] = {{"hip", MP_KERNEL_HIP},         {"CUDA", MP_KERNEL_CUDA},
                 {"pytorch", MP_KERNEL_PYTORCH}, {"Torch", MP_KERNEL_PYTORCH},
                 {"py", MP_KERNEL_PYTORCH},      {"triton", MP_KERNEL_TRITON},
                 {"opencl", MP_KERNEL_OPENCL},   {"cl", MP_KERNEL_OPENCL}};

    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        enum mp_kernel_type t = MP_KERNEL_N_BUILTIN;
        assert_int_equal(mp_kernel_type_parse(words[i].word, &t), 0);
        assert_int_equal(t, words[i].t);
    }
    enum mp_kernel_type t = MP_KERNEL_HIP;
    assert_int_equal(mp_kernel_type_parse("helion", &t), MP_EINVAL);
    assert_int_equal(mp_kernel_type_parse("cu", &t), MP_EINVAL);
    static const char *const enums[] = {"HIP", "CUDA", "PYTORCH", "TRITON", "OPENCL"};
    for (int i = 0; i < MP_KERNEL_N_BUILTIN; i++) {
        assert_string_equal(mp_kernel_type_name((enum mp_kernel_type)i), enums[i]);
        assert_int_equal(mp_kernel_lang_get((enum mp_kernel_type)i)->type, i);
    }
    assert_string_equal(mp_kernel_type_name((enum mp_kernel_type)MP_KERNEL_TYPE_MAX), "UNKNOWN");
    assert_null(mp_kernel_lang_get((enum mp_kernel_type)MP_KERNEL_TYPE_MAX));
    /* the lists the error messages had written out */
    char buf[256];
    mp_kernel_lang_list(buf, sizeof(buf), false, NULL);
    assert_string_equal(buf, "hip, cuda, pytorch, triton or opencl");
    mp_kernel_lang_list(buf, sizeof(buf), true, "all");
    assert_string_equal(buf, "hip, cuda, triton, opencl or all");
    /* discovery's words and bits */
    assert_int_equal(mp_disc_type_mask("hip"), MP_DISC_HIP);
    assert_int_equal(mp_disc_type_mask("cuda"), MP_DISC_CUDA);
    assert_int_equal(mp_disc_type_mask("triton"), MP_DISC_TRITON);
    assert_int_equal(mp_disc_type_mask("opencl"), MP_DISC_OPENCL);
    assert_int_equal(mp_disc_type_mask("all"), MP_DISC_ALL);
    assert_int_equal(mp_disc_type_mask("pytorch"), 0);
    assert_int_equal(mp_disc_type_mask("cl"), 0);
    assert_int_equal(mp_disc_type_mask(NULL), 0);
    assert_ptr_equal(mp_kernel_lang_by_ext("hip"), mp_kernel_lang_get(MP_KERNEL_HIP));
    assert_ptr_equal(mp_kernel_lang_by_ext("cuh"), mp_kernel_lang_get(MP_KERNEL_CUDA));
    assert_ptr_equal(mp_kernel_lang_by_ext("cpp"), mp_kernel_lang_get(MP_KERNEL_CUDA));
    assert_ptr_equal(mp_kernel_lang_by_ext("py"), mp_kernel_lang_get(MP_KERNEL_TRITON));
    assert_ptr_equal(mp_kernel_lang_by_ext("cl"), mp_kernel_lang_get(MP_KERNEL_OPENCL));
    assert_null(mp_kernel_lang_by_ext("yaml"));
}

/* The dispatch the pipeline had written out: the harness for OpenCL, and
 * for CUDA without testcase and prof commands; the runner for PyTorch and
 * Triton without a testcase; the job's back-end word. */
static void test_builtin_dispatch(void **state)
{
    (void)state;
    char *tc[] = {g_run, NULL}, *pc[] = {g_prof, NULL};
    char **argv_tc[] = {tc}, **argv_pc[] = {pc};
    for (int t = 0; t < MP_KERNEL_N_BUILTIN; t++) {
        for (int mask = 0; mask < 4; mask++) {
            struct mp_kernel_spec k;
            memset(&k, 0, sizeof(k));
            k.type = (enum mp_kernel_type)t;
            k.testcase = (struct mp_cmds){mask & 1, (mask & 1) ? argv_tc : NULL};
            k.prof = (struct mp_cmds){mask & 2 ? 1 : 0, (mask & 2) ? argv_pc : NULL};
            bool tcn = k.testcase.n == 0, pcn = k.prof.n == 0;
            bool harness = t == MP_KERNEL_OPENCL || (t == MP_KERNEL_CUDA && tcn && pcn);
            bool runner = (t == MP_KERNEL_PYTORCH || t == MP_KERNEL_TRITON) && tcn;
            enum mp_klang_run how = mp_kernel_spec_runs(&k);
            assert_int_equal(how == MP_KLANG_RUN_HARNESS, harness);
            assert_int_equal(how == MP_KLANG_RUN_RUNNER, runner);
        }
    }
    assert_string_equal(mp_kernel_lang_get(MP_KERNEL_CUDA)->backend, "cuda");
    assert_string_equal(mp_kernel_lang_get(MP_KERNEL_OPENCL)->backend, "opencl");
    assert_string_equal(mp_kernel_lang_get(MP_KERNEL_PYTORCH)->backend, "pytorch");
    assert_string_equal(mp_kernel_lang_get(MP_KERNEL_TRITON)->backend, "triton");
}

/* kernel/profile.c's rule before the table, for the profiler field */
static const char *old_profiler(enum mp_kernel_type t, const char *be, bool runner)
{
    bool nvidia_kernel = t == MP_KERNEL_CUDA || t == MP_KERNEL_TRITON || runner;
    if (!be[0] || !strcmp(be, "auto"))
        be = t == MP_KERNEL_HIP ? "rocprof_compute" : nvidia_kernel ? "ncu" : "none";
    if (!strcmp(be, "none") || t == MP_KERNEL_OPENCL || (t == MP_KERNEL_PYTORCH && !runner))
        return NULL;
    return be;
}

static void test_builtin_profiler(void **state)
{
    (void)state;
    static const char *const cfgd[] = {"", "auto", "none", "ncu", "rocprofv3", "metrix"};
    for (int t = 0; t < MP_KERNEL_N_BUILTIN; t++)
        for (size_t c = 0; c < sizeof(cfgd) / sizeof(cfgd[0]); c++)
            for (int own = 0; own < 2; own++) {
                /* the runner runs only PyTorch and Triton kernels */
                bool runner = own && (t == MP_KERNEL_PYTORCH || t == MP_KERNEL_TRITON);
                const char *want = old_profiler((enum mp_kernel_type)t, cfgd[c], runner);
                const char *got = mp_kernel_lang_profiler(
                    mp_kernel_lang_get((enum mp_kernel_type)t), cfgd[c], runner);
                if (!want)
                    assert_null(got);
                else
                    assert_string_equal(got, want);
            }
}

/* ---- stand-in languages, registered through the table alone ---- */

/* A Python DSL in the runner (kernels under @tilestub.kernel) and a C-like
 * language on the harness's OpenCL device (kernels after __stub_kernel in
 * .stc files), with tolerances and profilers of their own. */
static const struct mp_kernel_lang STUB_PY = {
    .name = "tilestub",
    .enum_name = "TILESTUB",
    .aliases = (const char *const[]){"ts", NULL},
    .disc_bit = 1u << 8,
    .exts = (const char *const[]){"py", NULL},
    .scan = MP_KLANG_SCAN_PY,
    .py_module = "tilestub",
    .py_decorator = "kernel",
    .compile = MP_KLANG_COMPILE_JIT,
    .run = MP_KLANG_RUN_RUNNER,
    .run_unless = MP_KLANG_UNLESS_TESTCASE,
    .backend = "tilestub",
    .atol = 0.02,
    .rtol = 0.01,
    .profiler = "ncu",
};

static const struct mp_kernel_lang STUB_C = {
    .name = "cstub",
    .enum_name = "CSTUB",
    .disc_bit = 1u << 9,
    .exts = (const char *const[]){"stc", NULL},
    .scan = MP_KLANG_SCAN_C,
    .keywords = (const char *const[]){"__stub_kernel", NULL},
    .compile = MP_KLANG_COMPILE_HARNESS,
    .run = MP_KLANG_RUN_HARNESS,
    .backend = "opencl",
    .atol = -1,
    .rtol = 1e-3,
};

static enum mp_kernel_type g_py, g_c;

static void test_register(void **state)
{
    (void)state;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_kernel_lang_register(&STUB_PY, &g_py, &d), 0);
    assert_int_equal(mp_kernel_lang_register(&STUB_C, &g_c, &d), 0);
    assert_int_equal(g_py, MP_KERNEL_N_BUILTIN);
    assert_int_equal(g_c, MP_KERNEL_N_BUILTIN + 1);
    assert_int_equal(mp_kernel_lang_count(), MP_KERNEL_N_BUILTIN + 2);
    assert_string_equal(mp_kernel_type_name(g_py), "TILESTUB");
    enum mp_kernel_type t = MP_KERNEL_HIP;
    assert_int_equal(mp_kernel_type_parse("TS", &t), 0);
    assert_int_equal(t, g_py);
    /* taken names, aliases and bits; rows without names */
    struct mp_kernel_lang dup = STUB_C;
    dup.name = "cl"; /* OpenCL's alias */
    assert_int_equal(mp_kernel_lang_register(&dup, NULL, &d), MP_EINVAL);
    dup.name = "cstub2";
    dup.aliases = (const char *const[]){"tilestub", NULL};
    assert_int_equal(mp_kernel_lang_register(&dup, NULL, NULL), MP_EINVAL);
    dup.aliases = NULL;
    dup.disc_bit = MP_DISC_CUDA;
    assert_int_equal(mp_kernel_lang_register(&dup, NULL, NULL), MP_EINVAL);
    dup.disc_bit = 0;
    dup.name = NULL;
    assert_int_equal(mp_kernel_lang_register(&dup, NULL, NULL), MP_EINVAL);
    assert_int_equal(mp_kernel_lang_count(), MP_KERNEL_N_BUILTIN + 2);
    char buf[256];
    mp_kernel_lang_list(buf, sizeof(buf), true, "all");
    assert_string_equal(buf, "hip, cuda, triton, opencl, tilestub, cstub or all");
}

static void test_standin_config(void **state)
{
    (void)state;
    const char *y = "kernels:\n"
                    "  - id: a\n    type: tilestub\n    source_files: [a.py]\n"
                    "  - id: b\n    type: ts\n    atol: 0.5\n"
                    "  - id: c\n    type: CStub\n    source_files: [c.stc]\n";
    struct mp_kernel_config c;
    mp_kernel_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_kernel_string(&c, y, "k.yaml", &d), 0);
    assert_int_equal(c.nkernels, 3);
    assert_int_equal(c.kernels[0].type, g_py);
    assert_true(c.kernels[0].atol == 0.02 && c.kernels[0].rtol == 0.01); /* the row's */
    assert_int_equal(c.kernels[1].type, g_py);
    assert_true(c.kernels[1].atol == 0.5 && c.kernels[1].rtol == 0.01); /* the entry's first */
    assert_int_equal(c.kernels[2].type, g_c);
    assert_true(c.kernels[2].atol < 0 && c.kernels[2].rtol == 1e-3);
    /* an entry made in code (analyze's command line) gets them too */
    struct mp_kernel_spec k;
    mp_kernel_spec_init(&k);
    k.type = g_py;
    assert_int_equal(mp_kernel_config_add(&c, &k), 0);
    assert_true(c.kernels[3].atol == 0.02 && c.kernels[3].rtol == 0.01);
    mp_kernel_config_fini(&c);
    /* an unknown type lists the registered ones */
    mp_kernel_config_init(&c);
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_kernel_string(&c, "kernel:\n  type: gluon\n", "b.yaml", &d),
                     MP_EINVAL);
    assert_non_null(
        strstr(d.msg, "expected hip, cuda, pytorch, triton, opencl, tilestub or cstub"));
    mp_kernel_config_fini(&c);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[1400];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const struct mp_disc_entry *entry(const struct mp_disc_result *r, const char *rel)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->e[i].rel, rel))
            return &r->e[i];
    return NULL;
}

static void test_standin_discover(void **state)
{
    (void)state;
    char root[400];
    snprintf(root, sizeof(root), "%s/proj", g_tmp);
    assert_int_equal(mkdir(root, 0700), 0);
    write_file(root, "add.py",
               "import tilestub\n\n@tilestub.autotune(configs=[])\n@tilestub.kernel\n"
               "def add_kernel(x, y):\n    return x + y\n\n"
               "def helper():\n    pass\n\nif __name__ == \"__main__\":\n    add_kernel(1, 2)\n");
    write_file(root, "bare.py", "from tilestub import kernel\n\n@kernel\ndef mul(x):\n    pass\n");
    write_file(root, "tri.py", "import triton\n\n@triton.jit\ndef tk(x):\n    pass\n");
    write_file(root, "scale.stc",
               "/* __stub_kernel void not_this(void) {} */\n"
               "__stub_kernel void scale(float *x) { x[0] *= 2; }\n"
               "__stub_kernel void decl(float *x);\n");
    write_file(root, "test_add.py", "import add\n");
    struct mp_disc_opts o = {.types = mp_disc_type_mask("all"), .include_tests = true};
    assert_int_equal(o.types, MP_DISC_ALL | STUB_PY.disc_bit | STUB_C.disc_bit);
    struct mp_disc_result r;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    assert_int_equal(r.n, 4);
    const struct mp_disc_entry *e = entry(&r, "add.py");
    assert_non_null(e);
    assert_string_equal(e->type, "tilestub");
    assert_int_equal(e->n_kernels, 1);
    assert_string_equal(e->kernels[0].name, "add_kernel");
    assert_int_equal(e->kernels[0].line, 5);
    assert_true(e->has_main);
    assert_int_equal(e->n_binaries, 1); /* a test script, run by python3 */
    assert_non_null(strstr(e->testcase_command, "python3 "));
    assert_non_null(strstr(e->testcase_command, "test_add.py"));
    e = entry(&r, "bare.py");
    assert_non_null(e);
    assert_string_equal(e->kernels[0].name, "mul");
    e = entry(&r, "tri.py"); /* Triton's row still comes first */
    assert_non_null(e);
    assert_string_equal(e->type, "triton");
    e = entry(&r, "scale.stc");
    assert_non_null(e);
    assert_string_equal(e->type, "cstub");
    assert_int_equal(e->n_kernels, 1);
    assert_string_equal(e->kernels[0].name, "scale");
    assert_string_equal(e->compile_command, ""); /* no compiler in its row */
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_disc_json(&r, &b), 0);
    assert_non_null(strstr(mp_buf_cstr(&b), "\"kernel_type\": \"cstub\""));
    mp_buf_fini(&b);
    mp_disc_result_fini(&r);
    /* the type filter: the stand-in alone */
    o.types = mp_disc_type_mask("tilestub");
    assert_int_equal(o.types, STUB_PY.disc_bit);
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), 0);
    assert_int_equal(r.n, 2);
    assert_non_null(entry(&r, "add.py"));
    assert_non_null(entry(&r, "bare.py"));
    mp_disc_result_fini(&r);
    o.types = 0;
    mp_diag_clear(&d);
    assert_int_equal(mp_discover_kernels(root, &o, &r, &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "hip, cuda, triton, opencl, tilestub, cstub or all"));
}

static void test_standin_dispatch(void **state)
{
    (void)state;
    char *tc[] = {g_run, NULL};
    char **argv_tc[] = {tc};
    struct mp_kernel_spec k;
    memset(&k, 0, sizeof(k));
    k.type = g_py;
    assert_int_equal(mp_kernel_spec_runs(&k), MP_KLANG_RUN_RUNNER);
    assert_string_equal(mp_kernel_lang_get(k.type)->backend, "tilestub");
    k.testcase = (struct mp_cmds){1, argv_tc};
    assert_int_equal(mp_kernel_spec_runs(&k), MP_KLANG_RUN_TESTCASE);
    k.type = g_c; /* the harness even with a testcase, on its OpenCL device */
    assert_int_equal(mp_kernel_spec_runs(&k), MP_KLANG_RUN_HARNESS);
    const struct mp_kernel_lang *l = mp_kernel_lang_get(g_c);
    assert_string_equal(l->backend, "opencl");
    assert_int_equal(l->compile, MP_KLANG_COMPILE_HARNESS);
    assert_null(mp_kernel_lang_profiler(l, "auto", true)); /* no profiler */
    assert_string_equal(mp_kernel_lang_profiler(mp_kernel_lang_get(g_py), "", false), "ncu");
}

/* The magpie built beside this test (build/<preset>/magpie), for the
 * harness child; false when it is not there. */
static bool magpie_exe(char *out, size_t len)
{
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return false;
    self[n] = 0;
    char *sl = strrchr(self, '/');
    if (!sl)
        return false;
    *sl = 0;
    snprintf(out, len, "%s/../magpie", self);
    return access(out, X_OK) == 0;
}

/* analyze of a kernel of the C-like stand-in: its row sends it to the
 * harness's build job and then its OpenCL device, reference mode */
static void test_standin_analyze(void **state)
{
    (void)state;
    char exe[1200];
    if (access("/etc/OpenCL/vendors", R_OK) != 0 || !magpie_exe(exe, sizeof(exe))) {
        fprintf(stderr, "SKIP: no OpenCL ICD or no magpie beside the test\n");
        return;
    }
    char dir[400], y[2000];
    snprintf(dir, sizeof(dir), "%s/run", g_tmp);
    assert_int_equal(mkdir(dir, 0700), 0);
    const char *k = "__kernel void twice(__global const float *a, __global float *c, int n)"
                    " { int i = get_global_id(0); if (i < n) c[i] = %s; }\n";
    char src[300];
    snprintf(src, sizeof(src), k, "2.0f * a[i]");
    write_file(dir, "twice.stc", src);
    snprintf(src, sizeof(src), k, "a[i] + a[i]");
    write_file(dir, "twice_ref.stc", src);
    /* (its keyword is discovery's alone: the device compiles OpenCL C) */
    snprintf(y, sizeof(y),
             "kernel:\n  id: twice\n  type: cstub\n  source_files: [%s/twice.stc]\n"
             "  reference: %s/twice_ref.stc\n  size: 4096\n  seeds: 1\n",
             dir, dir);
    struct mp_kernel_config c;
    mp_kernel_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_kernel_string(&c, y, "k.yaml", &d), 0);
    char ws[500];
    snprintf(ws, sizeof(ws), "%s/results", dir);
    struct mp_kernel_opts o = {
        .output_dir = ws, .no_perf = true, .no_latency = true, .self_exe = exe};
    struct mp_kernel_run run;
    mp_kernel_run_init(&run);
    int rc = mp_kernel_analyze(&c, &o, &run, &d);
    assert_int_equal(rc, 0);
    assert_int_equal(run.n, 1);
    const struct mp_kernel_result *r = &run.results[0];
    for (int i = 0; i < r->nerrors; i++)
        fprintf(stderr, "error: %s\n", r->errors[i]);
    assert_int_equal(r->type, g_c);
    assert_int_equal(r->compiling, MP_STAGE_SUCCESS); /* the harness's build job */
    assert_int_equal(r->correctness, MP_STAGE_SUCCESS);
    mp_kernel_run_fini(&run);
    mp_kernel_config_fini(&c);
}

/* A Python interpreter with torch for the runner: $MAGPIE_PYTHON, else the
 * CPU venv of ~/.cache/magpie; NULL: none. */
static const char *torch_python(void)
{
    static char py[600];
    const char *e = getenv("MAGPIE_PYTHON"), *home = getenv("HOME");
    if (e && *e)
        snprintf(py, sizeof(py), "%s", e);
    else
        snprintf(py, sizeof(py), "%s/.cache/magpie/torch-venv/bin/python", home ? home : "");
    if (access(py, X_OK) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        dup2(dn, 1);
        dup2(dn, 2);
        execl(py, py, "-c", "import torch", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? py
                                                                                           : NULL;
}

/* analyze of one runner kernel of type `type` (reference ref.py); the
 * correctness stage, the first error into err */
static enum mp_stage_state runner_analyze(const char *dir, const char *type, const char *file,
                                          char *err, size_t errlen)
{
    char y[2000], ws[500], rt[500];
    snprintf(y, sizeof(y),
             "kernel:\n  id: k\n  type: %s\n  source_files: [%s/%s]\n"
             "  reference: %s/ref.py\n  seeds: 1\n",
             type, dir, file, dir);
    snprintf(ws, sizeof(ws), "%s/results", dir);
    snprintf(rt, sizeof(rt), "%s/runtime", getenv("MP_SRC") ? getenv("MP_SRC") : ".");
    struct mp_kernel_config c;
    mp_kernel_config_init(&c);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_config_load_kernel_string(&c, y, "k.yaml", &d), 0);
    struct mp_kernel_opts o = {
        .output_dir = ws, .no_perf = true, .no_latency = true, .runtime_dir = rt};
    struct mp_kernel_run run;
    mp_kernel_run_init(&run);
    assert_int_equal(mp_kernel_analyze(&c, &o, &run, &d), 0);
    assert_int_equal(run.n, 1);
    const struct mp_kernel_result *r = &run.results[0];
    snprintf(err, errlen, "%s", r->nerrors ? r->errors[0] : "");
    enum mp_stage_state st = r->correctness;
    mp_kernel_run_fini(&run);
    mp_kernel_config_fini(&c);
    return st;
}

/* A Python language in the runner is its row: without runner_entry its
 * files run as KernelBench; with one, the runner loads them through the
 * entry the table names (here a module on PYTHONPATH that wraps a bare
 * function into a ModelNew); an entry the runner does not know fails the
 * kernel with a message naming it. Needs torch (the CPU venv). */
static void test_standin_runner_entry(void **state)
{
    (void)state;
    const char *py = torch_python();
    if (!py) {
        fprintf(stderr, "SKIP: no Python with torch for the runner\n");
        return;
    }
    setenv("MAGPIE_PYTHON", py, 1);
    char dir[400], err[2000];
    snprintf(dir, sizeof(dir), "%s/py", g_tmp);
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file(dir, "ref.py",
               "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
               "    def forward(self, a):\n        return a * 2\n\n\n"
               "def get_inputs():\n    return [torch.randn(4096)]\n\n\n"
               "def get_init_inputs():\n    return []\n");
    write_file(dir, "kb.py",
               "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
               "    def forward(self, a):\n        return a + a\n");
    write_file(dir, "bare.py", "def twice(a):\n    return a + a\n");
    write_file(dir, "tilestub_entry.py",
               "import importlib.util\nimport torch.nn as nn\n\n\n"
               "def load(e, name):\n"
               "    spec = importlib.util.spec_from_file_location(name, e['source'])\n"
               "    mod = importlib.util.module_from_spec(spec)\n"
               "    spec.loader.exec_module(mod)\n\n"
               "    class ModelNew(nn.Module):\n"
               "        def forward(self, a):\n            return mod.twice(a)\n"
               "    mod.ModelNew = ModelNew\n    return mod\n");
    setenv("PYTHONPATH", dir, 1);
    assert_int_equal(runner_analyze(dir, "tilestub", "kb.py", err, sizeof(err)), MP_STAGE_SUCCESS);
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_kernel_lang row = STUB_PY;
    row.name = "tileentry";
    row.enum_name = "TILEENTRY";
    row.aliases = NULL;
    row.disc_bit = 0;
    row.runner_entry = "tilestub_entry:load";
    assert_int_equal(mp_kernel_lang_register(&row, NULL, &d), 0);
    assert_int_equal(runner_analyze(dir, "tileentry", "bare.py", err, sizeof(err)),
                     MP_STAGE_SUCCESS);
    /* as KernelBench, the same file has no ModelNew */
    assert_int_equal(runner_analyze(dir, "tilestub", "bare.py", err, sizeof(err)), MP_STAGE_FAILED);
    assert_non_null(strstr(err, "ModelNew"));
    row.name = "tilenone";
    row.enum_name = "TILENONE";
    row.runner_entry = "nosuch";
    assert_int_equal(mp_kernel_lang_register(&row, NULL, &d), 0);
    assert_int_equal(runner_analyze(dir, "tilenone", "kb.py", err, sizeof(err)), MP_STAGE_FAILED);
    assert_non_null(strstr(err, "unknown runner entry 'nosuch'"));
    unsetenv("PYTHONPATH");
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/mp_klang_XXXXXX");
    return mkdtemp(g_tmp) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(g_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
    /* in order: the built-in rows are checked before any is registered */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_names),        cmocka_unit_test(test_builtin_dispatch),
        cmocka_unit_test(test_builtin_profiler),     cmocka_unit_test(test_register),
        cmocka_unit_test(test_standin_config),       cmocka_unit_test(test_standin_discover),
        cmocka_unit_test(test_standin_dispatch),     cmocka_unit_test(test_standin_analyze),
        cmocka_unit_test(test_standin_runner_entry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
