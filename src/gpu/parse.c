/* Parsers for what the vendor tools print: nvidia-smi's CSV query, amd-smi's
 * JSON, rocm-smi's product table and rocminfo's agent list.
 *
 * They are tolerant of columns and keys they do not know (tool versions add
 * them) and strict about the ones they need: a missing "name" column is an
 * error naming the line, not a silently empty device list. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include <magpie/gpu.h>

#include "gpu_int.h"

void gpu_device_init(struct mp_gpu_device *g, int index)
{
    memset(g, 0, sizeof(*g));
    g->index = index;
    g->cc_major = g->cc_minor = -1;
    g->memory_total_mib = g->memory_used_mib = -1;
    g->utilization_pct = g->temperature_c = g->power_draw_w = g->power_limit_w = -1;
    g->sm_clock_mhz = g->sm_clock_max_mhz = g->mem_clock_mhz = -1;
}

struct mp_gpu_device *gpu_add_device(struct mp_gpu_info *info, int index)
{
    if (info->count >= MP_GPU_MAX_DEVICES)
        return NULL;
    struct mp_gpu_device *n = mp_reallocarray(info->gpus, (size_t)info->count + 1, sizeof(*n));
    if (!n)
        return NULL;
    info->gpus = n;
    struct mp_gpu_device *g = &info->gpus[info->count++];
    gpu_device_init(g, index);
    return g;
}

void gpu_copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* nvidia-smi, amd-smi and rocm-smi spell "no value" in several ways. */
static bool is_na(const char *s)
{
    return !*s || strcasecmp(s, "N/A") == 0 || strcasecmp(s, "[N/A]") == 0 ||
           strcasecmp(s, "[Not Supported]") == 0 || strcasecmp(s, "Not Supported") == 0 ||
           strcasecmp(s, "[Unknown Error]") == 0;
}

/* Leading number of "143771 MiB", "109.02 W"; -1 when there is none. */
static double num(const char *s)
{
    if (is_na(s))
        return -1;
    char *end;
    double v = strtod(s, &end);
    return end == s ? -1 : v;
}

/* A size in MiB as an integer; -1 for a negative, NaN or out-of-range
 * reading (converting those to an integer would be undefined). */
static long long mib(double v)
{
    return v >= 0 && v < 9.0e18 ? (long long)v : -1;
}

void gpu_set_nvidia_arch(struct mp_gpu_device *g)
{
    if (g->cc_major < 0 && mp_gpu_nvidia_cc_from_name(g->name, &g->cc_major, &g->cc_minor))
        g->arch_from_name = true;
    if (g->cc_major < 0)
        return;
    mp_gpu_nvidia_arch(g->cc_major, g->cc_minor, g->arch, sizeof(g->arch));
    gpu_copy(g->family, sizeof(g->family), mp_gpu_nvidia_family(g->cc_major, g->cc_minor),
             strlen(mp_gpu_nvidia_family(g->cc_major, g->cc_minor)));
}

static void set_amd_arch(struct mp_gpu_device *g, const char *gfx)
{
    size_t n = 0;
    /* "gfx90a:sramecc+:xnack-" -> "gfx90a": features are not the arch. */
    while (gfx[n] && (isalnum((unsigned char)gfx[n])))
        n++;
    gpu_copy(g->arch, sizeof(g->arch), gfx, n);
    const char *fam = mp_gpu_amd_family(g->arch);
    gpu_copy(g->family, sizeof(g->family), fam, strlen(fam));
}

/* ---- nvidia-smi --format=csv ---- */

enum nv_col {
    NV_INDEX,
    NV_UUID,
    NV_NAME,
    NV_BUS,
    NV_MEM_TOTAL,
    NV_MEM_USED,
    NV_UTIL,
    NV_TEMP,
    NV_POWER,
    NV_POWER_LIMIT,
    NV_SM_CLOCK,
    NV_SM_CLOCK_MAX,
    NV_MEM_CLOCK,
    NV_DRIVER,
    NV_CC,
    NV_NCOLS
};

/* Header names as nvidia-smi prints them (it prints the long form of an
 * alias: the query's clocks.sm comes back as clocks.current.sm). */
static const char *const nv_names[NV_NCOLS][2] = {
    [NV_INDEX] = {"index", NULL},
    [NV_UUID] = {"uuid", NULL},
    [NV_NAME] = {"name", NULL},
    [NV_BUS] = {"pci.bus_id", NULL},
    [NV_MEM_TOTAL] = {"memory.total", NULL},
    [NV_MEM_USED] = {"memory.used", NULL},
    [NV_UTIL] = {"utilization.gpu", NULL},
    [NV_TEMP] = {"temperature.gpu", NULL},
    [NV_POWER] = {"power.draw", NULL},
    [NV_POWER_LIMIT] = {"power.limit", NULL},
    [NV_SM_CLOCK] = {"clocks.current.sm", "clocks.sm"},
    [NV_SM_CLOCK_MAX] = {"clocks.max.sm", "clocks.max.sm_clock"},
    [NV_MEM_CLOCK] = {"clocks.current.memory", "clocks.mem"},
    [NV_DRIVER] = {"driver_version", NULL},
    [NV_CC] = {"compute_cap", NULL},
};

#define NV_MAX_FIELDS 64

/* Splits one CSV line of nvidia-smi (", "-separated, no quoting: none of the
 * fields we ask for can contain a comma) in place. */
static int split_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (n < max)
            f[n++] = p;
        if (!c)
            break;
        p = c + 1;
    }
    return n;
}

int mp_gpu_parse_nvidia_smi_csv(const char *text, size_t len, struct mp_gpu_info *info,
                                struct mp_diag *d)
{
    int rc = 0;
    int col[NV_NCOLS];
    char *copy = mp_strndup(text, len);
    if (!copy)
        return MP_ENOMEM;
    for (int i = 0; i < NV_NCOLS; i++)
        col[i] = -1;

    long lineno = 0;
    bool header = false;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *f[NV_MAX_FIELDS];
        int nf = split_fields(line, f, NV_MAX_FIELDS);
        if (nf == 1 && !*f[0])
            continue;
        if (!header) {
            for (int k = 0; k < nf; k++) {
                char *u = strstr(f[k], " [");
                if (u)
                    *u = '\0'; /* "memory.total [MiB]" -> "memory.total" */
                for (int c = 0; c < NV_NCOLS; c++)
                    for (int a = 0; a < 2; a++)
                        if (nv_names[c][a] && strcmp(f[k], nv_names[c][a]) == 0)
                            col[c] = k;
            }
            if (col[NV_INDEX] < 0 || col[NV_NAME] < 0) {
                mp_diag_set_pos(d, -1, lineno, 1);
                rc = mp_diag_set(d, MP_EPARSE,
                                 "nvidia-smi CSV: the header line has no 'index' and 'name' "
                                 "columns (expected --format=csv with a header)");
                goto out;
            }
            header = true;
            continue;
        }
        int need = col[NV_INDEX] > col[NV_NAME] ? col[NV_INDEX] : col[NV_NAME];
        if (nf <= need) {
            mp_diag_set_pos(d, -1, lineno, 1);
            rc = mp_diag_set(d, MP_EPARSE, "nvidia-smi CSV: %d fields, expected at least %d", nf,
                             need + 1);
            goto out;
        }
#define FIELD(c) (col[c] >= 0 && col[c] < nf ? f[col[c]] : "")
        char *end;
        long idx = strtol(FIELD(NV_INDEX), &end, 10);
        if (end == FIELD(NV_INDEX) || idx < 0) {
            mp_diag_set_pos(d, -1, lineno, (long)col[NV_INDEX] + 1);
            mp_diag_set_field(d, "index");
            rc = mp_diag_set(d, MP_EPARSE, "nvidia-smi CSV: index '%s' is not a number",
                             FIELD(NV_INDEX));
            goto out;
        }
        struct mp_gpu_device *g = gpu_add_device(info, (int)idx);
        if (!g) {
            rc = mp_diag_set(d, MP_ENOMEM, "too many GPUs (more than %d)", MP_GPU_MAX_DEVICES);
            goto out;
        }
        gpu_copy(g->name, sizeof(g->name), FIELD(NV_NAME), strlen(FIELD(NV_NAME)));
        if (!is_na(FIELD(NV_UUID)))
            gpu_copy(g->uuid, sizeof(g->uuid), FIELD(NV_UUID), strlen(FIELD(NV_UUID)));
        if (!is_na(FIELD(NV_BUS)))
            gpu_copy(g->pci_bus_id, sizeof(g->pci_bus_id), FIELD(NV_BUS), strlen(FIELD(NV_BUS)));
        if (!is_na(FIELD(NV_DRIVER)))
            gpu_copy(g->driver, sizeof(g->driver), FIELD(NV_DRIVER), strlen(FIELD(NV_DRIVER)));
        g->memory_total_mib = mib(num(FIELD(NV_MEM_TOTAL)));
        g->memory_used_mib = mib(num(FIELD(NV_MEM_USED)));
        g->utilization_pct = num(FIELD(NV_UTIL));
        g->temperature_c = num(FIELD(NV_TEMP));
        g->power_draw_w = num(FIELD(NV_POWER));
        g->power_limit_w = num(FIELD(NV_POWER_LIMIT));
        g->sm_clock_mhz = num(FIELD(NV_SM_CLOCK));
        g->sm_clock_max_mhz = num(FIELD(NV_SM_CLOCK_MAX));
        g->mem_clock_mhz = num(FIELD(NV_MEM_CLOCK));
        int maj, mnr;
        if (sscanf(FIELD(NV_CC), "%d.%d", &maj, &mnr) == 2 && maj > 0 && mnr >= 0) {
            g->cc_major = maj;
            g->cc_minor = mnr;
        }
#undef FIELD
        gpu_set_nvidia_arch(g);
    }
    if (!header)
        rc = mp_diag_set(d, MP_EPARSE, "nvidia-smi CSV: empty output");
out:
    free(copy);
    return rc;
}

/* ---- amd-smi static --json ---- */

static const char *jstr(json_t *obj, const char *key)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* VRAM size as amd-smi versions print it: {"value": N, "unit": "MB"},
 * "N MB", or a bare number of MB. */
static long long vram_mib(json_t *v)
{
    double val = -1;
    const char *unit = "MB";
    if (json_is_object(v)) {
        json_t *x = json_object_get(v, "value");
        if (json_is_number(x))
            val = json_number_value(x);
        else if (json_is_string(x))
            val = num(json_string_value(x));
        if (jstr(v, "unit"))
            unit = jstr(v, "unit");
    } else if (json_is_number(v)) {
        val = json_number_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        val = num(s);
        const char *sp = strchr(s, ' ');
        if (sp)
            unit = sp + 1;
    }
    if (!(val >= 0))
        return -1;
    if (strcasecmp(unit, "GB") == 0)
        val *= 1024;
    else if (strcasecmp(unit, "B") == 0)
        val /= 1048576.0;
    return mib(val);
}

int mp_gpu_parse_amd_smi_json(const char *text, size_t len, struct mp_gpu_info *info,
                              struct mp_diag *d)
{
    int rc = 0;
    json_error_t err;
    json_t *root = json_loadb(text, len, 0, &err);
    if (!root) {
        mp_diag_set_pos(d, (long long)err.position, err.line, err.column);
        return mp_diag_set(d, MP_EPARSE, "amd-smi JSON: %s", err.text);
    }
    json_t *list = root;
    if (json_is_object(root))
        list = json_object_get(root, "gpu_data");
    if (!json_is_array(list)) {
        rc = mp_diag_set(d, MP_EPARSE,
                         "amd-smi JSON: expected a list of GPUs or {\"gpu_data\": "
                         "[...]}");
        goto out;
    }
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!json_is_object(e))
            continue;
        json_t *gi = json_object_get(e, "gpu");
        int idx = json_is_integer(gi) ? (int)json_integer_value(gi) : (int)i;
        struct mp_gpu_device *g = gpu_add_device(info, idx);
        if (!g) {
            rc = mp_diag_set(d, MP_ENOMEM, "too many GPUs");
            goto out;
        }
        json_t *asic = json_object_get(e, "asic");
        const char *s = jstr(asic, "market_name");
        if (s && !is_na(s))
            gpu_copy(g->name, sizeof(g->name), s, strlen(s));
        s = jstr(asic, "target_graphics_version");
        if (s && strncmp(s, "gfx", 3) == 0)
            set_amd_arch(g, s);
        json_t *vram = json_object_get(e, "vram");
        if (json_is_object(vram)) {
            json_t *size = json_object_get(vram, "size");
            if (!size)
                size = json_object_get(vram, "vram_size");
            if (!size)
                size = json_object_get(vram, "vram_size_mb");
            g->memory_total_mib = vram_mib(size);
        }
        json_t *drv = json_object_get(e, "driver");
        s = jstr(drv, "version");
        if (!s)
            s = jstr(drv, "driver_version");
        if (s && !is_na(s))
            gpu_copy(g->driver, sizeof(g->driver), s, strlen(s));
        json_t *bus = json_object_get(e, "bus");
        s = jstr(bus, "bdf");
        if (!s)
            s = jstr(e, "bdf");
        if (s && !is_na(s))
            gpu_copy(g->pci_bus_id, sizeof(g->pci_bus_id), s, strlen(s));
        s = jstr(e, "uuid");
        if (s && !is_na(s))
            gpu_copy(g->uuid, sizeof(g->uuid), s, strlen(s));
    }
out:
    json_decref(root);
    return rc;
}

/* ---- rocm-smi --showproductname ---- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static struct mp_gpu_device *find_index(struct mp_gpu_info *info, int idx)
{
    for (int i = 0; i < info->count; i++)
        if (info->gpus[i].index == idx)
            return &info->gpus[i];
    return NULL;
}

int mp_gpu_parse_rocm_smi_product(const char *text, size_t len, struct mp_gpu_info *info,
                                  struct mp_diag *d)
{
    int rc = 0;
    char *copy = mp_strndup(text, len);
    if (!copy)
        return MP_ENOMEM;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int idx, off = 0;
        if (sscanf(line, "GPU[%d]%n", &idx, &off) != 1 || off == 0 || idx < 0)
            continue;
        char *p = strchr(line + off, ':');
        if (!p)
            continue;
        char *key = p + 1;
        char *c = strchr(key, ':');
        if (!c)
            continue;
        *c = '\0';
        key = trim(key);
        char *val = trim(c + 1);
        struct mp_gpu_device *g = find_index(info, idx);
        if (!g && !(g = gpu_add_device(info, idx))) {
            rc = mp_diag_set(d, MP_ENOMEM, "too many GPUs");
            goto out;
        }
        if (is_na(val))
            continue;
        if (strcasecmp(key, "Card Series") == 0 || strcasecmp(key, "Device Name") == 0 ||
            strcasecmp(key, "Marketing Name") == 0) {
            if (!g->name[0])
                gpu_copy(g->name, sizeof(g->name), val, strlen(val));
        } else if (strcasecmp(key, "GFX Version") == 0 && strncmp(val, "gfx", 3) == 0) {
            set_amd_arch(g, val);
        }
    }
out:
    free(copy);
    return rc;
}

/* ---- rocminfo ---- */

struct agent {
    char name[64];
    char marketing[128];
    char uuid[96];
    bool is_gpu;
    bool seen_name, seen_marketing, seen_uuid;
};

static int finish_agent(struct agent *a, int *gpu_no, int base_count, struct mp_gpu_info *info,
                        struct mp_diag *d)
{
    if (!a->is_gpu || strncmp(a->name, "gfx", 3) != 0)
        return 0;
    int k = (*gpu_no)++;
    struct mp_gpu_device *g;
    if (base_count > 0) {
        /* Devices came from rocm-smi: fill in, in the same order. */
        if (k >= base_count)
            return 0;
        g = &info->gpus[k];
        if (g->arch[0] && strcmp(g->arch, a->name) != 0)
            return 0;
    } else {
        g = gpu_add_device(info, k);
        if (!g)
            return mp_diag_set(d, MP_ENOMEM, "too many GPUs");
    }
    if (!g->arch[0])
        set_amd_arch(g, a->name);
    if (!g->name[0] && a->marketing[0])
        gpu_copy(g->name, sizeof(g->name), a->marketing, strlen(a->marketing));
    if (!g->uuid[0] && a->uuid[0])
        gpu_copy(g->uuid, sizeof(g->uuid), a->uuid, strlen(a->uuid));
    return 0;
}

int mp_gpu_parse_rocminfo(const char *text, size_t len, struct mp_gpu_info *info, struct mp_diag *d)
{
    int rc = 0;
    int base_count = info->count, gpu_no = 0;
    bool in_agent = false;
    struct agent a;
    memset(&a, 0, sizeof(a));
    char *copy = mp_strndup(text, len);
    if (!copy)
        return MP_ENOMEM;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *t = trim(line);
        int no;
        char extra;
        if (sscanf(t, "Agent %d%c", &no, &extra) == 1) {
            if (in_agent && (rc = finish_agent(&a, &gpu_no, base_count, info, d)) != 0)
                goto out;
            memset(&a, 0, sizeof(a));
            in_agent = true;
            continue;
        }
        if (!in_agent)
            continue;
        char *c = strchr(t, ':');
        if (!c)
            continue;
        *c = '\0';
        char *key = trim(t), *val = trim(c + 1);
        /* The first of each key in an agent is the agent's own; later ones
         * belong to its pools and ISAs. */
        if (strcmp(key, "Name") == 0 && !a.seen_name) {
            a.seen_name = true;
            gpu_copy(a.name, sizeof(a.name), val, strlen(val));
        } else if (strcmp(key, "Marketing Name") == 0 && !a.seen_marketing) {
            a.seen_marketing = true;
            gpu_copy(a.marketing, sizeof(a.marketing), val, strlen(val));
        } else if (strcmp(key, "Uuid") == 0 && !a.seen_uuid) {
            a.seen_uuid = true;
            gpu_copy(a.uuid, sizeof(a.uuid), val, strlen(val));
        } else if (strcmp(key, "Device Type") == 0) {
            a.is_gpu = strcmp(val, "GPU") == 0;
        }
    }
    if (in_agent)
        rc = finish_agent(&a, &gpu_no, base_count, info, d);
out:
    free(copy);
    return rc;
}
