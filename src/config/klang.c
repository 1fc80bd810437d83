/* The kernel language table: one row per kernel language magpie evaluates
 * (HIP, CUDA, PyTorch, Triton, OpenCL), with what every step needs to know
 * of it: its names, how discovery finds its kernels, its compile step, how
 * magpie runs it (the C harness's device or the Python runner), its
 * default tolerance and profiler. Config parsing, discovery, the pipeline
 * and the harness read the rows; none of them names a language. Rows can
 * be added at run time (mp_kernel_lang_register), before other threads use
 * the table. docs/ARCHITECTURE.md, "Adding a kernel language". */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <magpie/config.h>

static const char *const c_exts[] = {"cu", "cuh", "cpp", "cc",  "cxx", "c",
                                     "h",  "hpp", "hh",  "inl", NULL};
static const char *const global_kw[] = {"__global__", NULL};

/* In enum mp_kernel_type order. */
static const struct mp_kernel_lang BUILTIN[MP_KERNEL_N_BUILTIN] = {
    {
        .type = MP_KERNEL_HIP,
        .name = "hip",
        .enum_name = "HIP",
        .disc_bit = 1,
        .exts = (const char *const[]){"hip", NULL},
        .scan = MP_KLANG_SCAN_C,
        .keywords = global_kw,
        .compile = MP_KLANG_COMPILE_TOOL,
        .compiler = "hipcc",
        .compiler_pkg = "ROCm HIP compiler",
        .arch_flag = "--offload-arch=",
        .arch_prefix = "gfx",
        .arch_default = "gfx942",
        .run = MP_KLANG_RUN_TESTCASE,
        .atol = -1,
        .rtol = -1,
        .profiler = "rocprof_compute",
    },
    {
        .type = MP_KERNEL_CUDA,
        .name = "cuda",
        .enum_name = "CUDA",
        .disc_bit = 2,
        .exts = c_exts,
        .scan = MP_KLANG_SCAN_C,
        .keywords = global_kw,
        .compile = MP_KLANG_COMPILE_TOOL,
        .compiler = "nvcc",
        .compiler_pkg = "CUDA toolkit",
        .arch_flag = "-arch=",
        .arch_prefix = "sm_",
        .arch_default = "sm_90",
        .run = MP_KLANG_RUN_HARNESS,
        .run_unless = MP_KLANG_UNLESS_TESTCASE | MP_KLANG_UNLESS_PROF,
        .backend = "cuda",
        .harness_module = true,
        .atol = -1,
        .rtol = -1,
        .profiler = "ncu",
    },
    {
        .type = MP_KERNEL_PYTORCH,
        .name = "pytorch",
        .enum_name = "PYTORCH",
        .aliases = (const char *const[]){"torch", "py", NULL},
        .compile = MP_KLANG_COMPILE_JIT,
        .run = MP_KLANG_RUN_RUNNER,
        .run_unless = MP_KLANG_UNLESS_TESTCASE,
        .backend = "pytorch",
        .atol = -1,
        .rtol = -1,
        .profiler = "ncu",
        .profile_own_only = true,
    },
    {
        .type = MP_KERNEL_TRITON,
        .name = "triton",
        .enum_name = "TRITON",
        .disc_bit = 4,
        .exts = (const char *const[]){"py", NULL},
        .scan = MP_KLANG_SCAN_PY,
        .py_module = "triton",
        .py_decorator = "jit",
        .compile = MP_KLANG_COMPILE_JIT,
        .run = MP_KLANG_RUN_RUNNER,
        .run_unless = MP_KLANG_UNLESS_TESTCASE,
        .backend = "triton",
        .atol = -1,
        .rtol = -1,
        .profiler = "ncu",
    },
    {
        .type = MP_KERNEL_OPENCL,
        .name = "opencl",
        .enum_name = "OPENCL",
        .aliases = (const char *const[]){"cl", NULL},
        .disc_bit = 8,
        .exts = (const char *const[]){"cl", NULL},
        .scan = MP_KLANG_SCAN_C,
        .keywords = (const char *const[]){"__kernel", "kernel", NULL},
        .compile = MP_KLANG_COMPILE_HARNESS,
        .run = MP_KLANG_RUN_HARNESS,
        .backend = "opencl",
        .atol = -1,
        .rtol = -1,
    },
};

#define KLANG_CAP (MP_KERNEL_TYPE_MAX + 1)

/* Registered rows follow the built-in ones. */
static struct mp_kernel_lang g_added[KLANG_CAP - MP_KERNEL_N_BUILTIN];
static int g_nadded;

int mp_kernel_lang_count(void)
{
    return MP_KERNEL_N_BUILTIN + g_nadded;
}

const struct mp_kernel_lang *mp_kernel_lang_get(enum mp_kernel_type t)
{
    int i = (int)t;
    if (i < 0 || i >= mp_kernel_lang_count())
        return NULL;
    return i < MP_KERNEL_N_BUILTIN ? &BUILTIN[i] : &g_added[i - MP_KERNEL_N_BUILTIN];
}

static bool in_list(const char *s, const char *const *list)
{
    for (; list && *list; list++)
        if (strcasecmp(s, *list) == 0)
            return true;
    return false;
}

const struct mp_kernel_lang *mp_kernel_lang_find(const char *s)
{
    for (int i = 0; s && i < mp_kernel_lang_count(); i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        if (strcasecmp(s, l->name) == 0 || in_list(s, l->aliases))
            return l;
    }
    return NULL;
}

const struct mp_kernel_lang *mp_kernel_lang_by_ext(const char *ext)
{
    for (int i = 0; ext && i < mp_kernel_lang_count(); i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        for (const char *const *e = l->exts; l->scan != MP_KLANG_SCAN_NONE && e && *e; e++)
            if (strcmp(ext, *e) == 0)
                return l;
    }
    return NULL;
}

static bool name_taken(const struct mp_kernel_lang *l, unsigned *bits)
{
    *bits = 0;
    for (int i = 0; i < mp_kernel_lang_count(); i++)
        *bits |= mp_kernel_lang_get((enum mp_kernel_type)i)->disc_bit;
    if (mp_kernel_lang_find(l->name))
        return true;
    for (const char *const *a = l->aliases; a && *a; a++)
        if (mp_kernel_lang_find(*a))
            return true;
    return false;
}

int mp_kernel_lang_register(const struct mp_kernel_lang *l, enum mp_kernel_type *out,
                            struct mp_diag *d)
{
    unsigned bits = 0;
    if (!l->name || !l->name[0] || !l->enum_name)
        return mp_diag_set(d, MP_EINVAL, "a kernel language needs a name and an enum name");
    if (name_taken(l, &bits))
        return mp_diag_set(d, MP_EINVAL, "kernel language '%s': a name or alias is taken", l->name);
    if (l->disc_bit & bits)
        return mp_diag_set(d, MP_EINVAL, "kernel language '%s': discovery bit 0x%x is taken",
                           l->name, l->disc_bit);
    if (mp_kernel_lang_count() >= KLANG_CAP)
        return mp_diag_set(d, MP_ENOMEM, "kernel language table full (%d rows)", KLANG_CAP);
    struct mp_kernel_lang *row = &g_added[g_nadded];
    *row = *l;
    row->type = (enum mp_kernel_type)mp_kernel_lang_count();
    g_nadded++;
    if (out)
        *out = row->type;
    return 0;
}

void mp_kernel_lang_list(char *buf, size_t len, bool disc, const char *tail)
{
    const char *names[KLANG_CAP + 1];
    int n = 0;
    for (int i = 0; i < mp_kernel_lang_count(); i++) {
        const struct mp_kernel_lang *l = mp_kernel_lang_get((enum mp_kernel_type)i);
        if (!disc || l->disc_bit)
            names[n++] = l->name;
    }
    if (tail)
        names[n++] = tail;
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < n && at < len; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = snprintf(buf + at, len - at, "%s%s", sep, names[i]);
        at += w > 0 ? (size_t)w : 0;
    }
}

const char *mp_kernel_lang_profiler(const struct mp_kernel_lang *l, const char *configured,
                                    bool own)
{
    if (!l || !l->profiler || (l->profile_own_only && !own))
        return NULL;
    const char *be =
        !configured || !configured[0] || !strcmp(configured, "auto") ? l->profiler : configured;
    return strcmp(be, "none") != 0 ? be : NULL;
}

const char *mp_kernel_type_name(enum mp_kernel_type t)
{
    const struct mp_kernel_lang *l = mp_kernel_lang_get(t);
    return l ? l->enum_name : "UNKNOWN";
}

int mp_kernel_type_parse(const char *s, enum mp_kernel_type *out)
{
    const struct mp_kernel_lang *l = mp_kernel_lang_find(s);
    if (!l)
        return MP_EINVAL;
    *out = l->type;
    return 0;
}

enum mp_klang_run mp_kernel_spec_runs(const struct mp_kernel_spec *k)
{
    const struct mp_kernel_lang *l = mp_kernel_lang_get(k->type);
    if (!l)
        return MP_KLANG_RUN_TESTCASE;
    unsigned has =
        (k->testcase.n ? MP_KLANG_UNLESS_TESTCASE : 0u) | (k->prof.n ? MP_KLANG_UNLESS_PROF : 0u);
    return (l->run_unless & has) ? MP_KLANG_RUN_TESTCASE : l->run;
}
