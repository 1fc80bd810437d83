/* Reading benchmark workspaces for list_benchmark_results and
 * get_benchmark_result: a workspace is a directory named benchmark_* holding
 * the benchmark_report.json that src/serve wrote; these helpers only pick
 * its keys and list the files beside it. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_ws_int.h"

static bool has_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    size_t sl = strlen(suffix);
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = e->d_name[0] != '.' &&
                (sl == 0 || (n >= sl && strcmp(e->d_name + n - sl, suffix) == 0));
    }
    closedir(d);
    return found;
}

json_t *mcp_ws_files(const char *dir, const char *suffix)
{
    json_t *a = json_array();
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, alphasort);
    size_t sl = strlen(suffix);
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        size_t len = strlen(nm);
        if (nm[0] != '.' && len >= sl && strcmp(nm + len - sl, suffix) == 0) {
            char p[8192];
            snprintf(p, sizeof(p), "%s/%s", dir, nm);
            json_array_append_new(a, mcp_jstr(p));
        }
        free(list[i]);
    }
    free(list);
    return a;
}

json_t *mcp_ws_summary(const char *ws, bool brief, char *err, size_t errlen)
{
    char p[8192];
    snprintf(p, sizeof(p), "%s/benchmark_report.json", ws);
    json_error_t je;
    json_t *rep = json_load_file(p, 0, &je);
    if (!json_is_object(rep)) {
        snprintf(err, errlen, "%s: %s", p, rep ? "not a JSON object" : je.text);
        json_decref(rep);
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "workspace", mcp_jstr(ws));
    const char *base = strrchr(ws, '/');
    base = base ? base + 1 : ws;
    if (brief) {
        json_object_set_new(o, "name", mcp_jstr(base));
        /* benchmark_<framework>_<YYYYMMDD>_<HHMMSS>[_N] */
        const char *ts = strlen(base) > 16 ? strchr(base + 10, '_') : NULL;
        json_object_set_new(o, "timestamp", ts ? json_string(ts + 1) : json_null());
    }
    snprintf(p, sizeof(p), "%s/config.yaml", ws);
    struct stat st;
    json_object_set_new(o, "config", stat(p, &st) == 0 ? mcp_jstr(p) : json_null());
    static const char *const keys[] = {"success",         "framework",  "model",
                                       "execution_time",  "throughput", "latency",
                                       "top_bottlenecks", "errors"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        json_t *v = json_object_get(rep, keys[i]);
        json_object_set(o, keys[i], v ? v : json_null());
    }
    json_t *tb = json_object_get(o, "top_bottlenecks");
    if (brief && json_is_array(tb) && json_array_size(tb) > 5) {
        json_t *cut = json_array();
        for (size_t i = 0; i < 5; i++)
            json_array_append(cut, json_array_get(tb, i));
        json_object_set_new(o, "top_bottlenecks", cut);
    }
    if (brief) {
        snprintf(p, sizeof(p), "%s/torch_trace", ws);
        json_object_set_new(o, "has_torch_trace", json_boolean(has_files(p, "")));
        snprintf(p, sizeof(p), "%s/tracelens", ws);
        bool tl = has_files(p, "");
        snprintf(p, sizeof(p), "%s/tracelens_rank0_csvs", ws);
        tl = tl || has_files(p, ".csv");
        json_object_set_new(o, "has_tracelens", json_boolean(tl));
    }
    json_object_set_new(o, "_report", rep);
    return o;
}
