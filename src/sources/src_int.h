/* Private structures shared by the source index (index.c, scan.c) and the
 * resolver (resolve.c). */
#ifndef MP_SOURCES_INT_H
#define MP_SOURCES_INT_H
#include <stdint.h>

#include <magpie/base.h>
#include <magpie/sources.h>

enum src_def_kind {
    SRC_FUNC = 'f',   /* C/C++ function definition */
    SRC_STRUCT = 's', /* struct/class definition */
    SRC_TRITON = 't', /* Python def under @triton.jit / autotune / heuristics */
    SRC_ASM = 'a',    /* assembly kernel symbol */
    SRC_MACRO = 'm',  /* macro pasting a kernel name: name is a glob ("pre_*_post") */
};

enum src_def_flags {
    SRC_F_GLOBAL = 1,   /* __global__ / __kernel / extern "C" asm kernel */
    SRC_F_TEMPLATE = 2, /* declared under template<...> */
    SRC_F_DEVICE = 4,   /* __device__ function */
};

/* Bits 3-7 of a definition's flags: its template arity (number of template
 * parameters of a template definition, 0 unknown), SRC_ARITY_VARIADIC when
 * it has a parameter pack. */
#define SRC_ARITY_SHIFT 3
#define SRC_ARITY_VARIADIC 31u
#define SRC_ARITY(flags) ((unsigned)(flags) >> SRC_ARITY_SHIFT)

struct src_def {
    int32_t name;  /* intern id of the unqualified name */
    int32_t ns;    /* intern id of the enclosing namespaces/classes "a::b" ("" none) */
    int32_t file;  /* index into ix->files */
    int32_t next;  /* next def with the same name, -1 ends */
    uint32_t line; /* 1-based */
    char kind;     /* enum src_def_kind */
    uint8_t flags; /* enum src_def_flags */
};

struct src_file {
    int32_t path; /* intern id of the repo-relative path */
    int32_t repo; /* index into ix->repos */
};

/* Test files' text, read on first use and kept for the index's life
 * (refs.c); per file index, NULL while not read. */
struct src_texts {
    char **text;
    size_t *len;
    size_t n;
};

struct mp_src_index {
    struct mp_intern *strs;
    struct src_def *defs;
    size_t n_defs, cap_defs;
    struct src_file *files;
    size_t n_files, cap_files;
    int32_t *heads; /* per intern id: first def with that name, -1 none */
    size_t n_heads;
    int32_t *macros; /* defs of kind SRC_MACRO (scanned linearly) */
    size_t n_macros, cap_macros;
    struct mp_src_repo_info *repos;
    char **repo_strs; /* owned strings of repos[] (3 per repo) */
    size_t n_repos, cap_repos;
    struct src_texts *texts; /* lazily filled by refs.c, freed with the index */
};

/* Adds a definition (index.c). */
int src_add_def(struct mp_src_index *ix, int32_t file, const char *name, size_t name_len,
                const char *ns, size_t ns_len, uint32_t line, char kind, uint8_t flags);
/* Parses one file's text by its extension and adds its definitions (scan.c). */
int src_scan_file(struct mp_src_index *ix, int32_t file, const char *path, const char *text,
                  size_t len);
/* Fills r's test, baseline and Triton reference columns of a resolved
 * row from the indexed trees (refs.c); 0 or MP_ENOMEM. */
int src_find_refs(const struct mp_src_index *ix, struct mp_src_result *r);
/* Whether a file name has an extension the scanner reads (scan.c). */
bool src_scan_wants(const char *name);

#endif
