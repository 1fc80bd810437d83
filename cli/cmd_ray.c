/* `magpie ray ...`: tasks on a Ray cluster (status, result, cancel, list,
 * logs, delete, wait, submit, batch), and the Ray paths of `magpie
 * benchmark` (run_mode: ray) and of analyze / compare (-e ray), which
 * submit the same command as a Ray job that runs magpie on a worker and
 * wait for its result. The work is in the library (src/ray). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/config.h>
#include <magpie/ray.h>
#include <magpie/serve.h>

#include "cli.h"
#include "opts.h"

enum { O_CPUS = 1000, O_GPUS, O_MAGPIE, O_TIMEOUT, O_WAIT, O_JSON, O_PAR };

static const struct cli_opt ray_opts[] = {
    {"address", 'a', CLI_ARG, 'a', "ADDR",
     "http://host:8265, host:6379, ray://host:10001 or auto (default: RAY_ADDRESS, then "
     "http://127.0.0.1:8265)",
     0},
    {"shared-storage", 's', CLI_ARG, 's', "DIR",
     "results root seen by driver and workers (default: MAGPIE_RAY_SHARED_STORAGE, "
     "then " MP_RAY_DEFAULT_SHARED ")",
     0},
    {"benchmark-config", 'b', CLI_ARG, 'b', "YAML", "submit: the benchmark config", 0},
    {"num-cpus", 0, CLI_ARG, O_CPUS, "N", "entrypoint CPUs (submit/batch)", 0},
    {"num-gpus", 0, CLI_ARG, O_GPUS, "N", "entrypoint GPUs (submit/batch)", 0},
    {"magpie", 0, CLI_ARG, O_MAGPIE, "PATH", "magpie on the workers (default: magpie on PATH)", 0},
    {"timeout", 0, CLI_ARG, O_TIMEOUT, "S", "wait/batch: give up waiting after S seconds", 0},
    {"wait", 0, CLI_NOARG, O_WAIT, NULL, "submit: wait for the task and print its result", 0},
    {"parallel", 0, CLI_NOARG, O_PAR, NULL, "batch: run the configs in parallel", 0},
    {"json", 0, CLI_NOARG, O_JSON, NULL, "machine-readable output", 0},
    {"help", 'h', CLI_NOARG, 'h', NULL, "this help", 0},
    {0},
};

const struct cli_cmd cli_cmd_ray = {
    .name = "ray",
    .args = "<command>",
    .summary = "tasks on a Ray cluster: status, result, cancel, list, logs, submit, batch",
    .intro = "Magpie tasks on a Ray cluster, through the Ray dashboard's Jobs API.\n\n"
             "commands:\n"
             "  status ID        RUNNING | SUCCEEDED | FAILED | UNKNOWN (JSON with --json)\n"
             "  result ID        the task's result document (JSON); exit 1 unless SUCCEEDED\n"
             "  cancel ID        stop the Ray job (its processes get SIGTERM, then SIGKILL)\n"
             "  list             magpie tasks known to the cluster\n"
             "  logs ID          the job's log\n"
             "  delete ID        forget a finished Ray job (the result directory stays)\n"
             "  wait ID          wait until the task ends; exit 0 when it SUCCEEDED\n"
             "  submit -b YAML   submit a benchmark and return its task id at once\n"
             "  submit -- ARGS   run `magpie ARGS` as a task (input files staged)\n"
             "  batch [--parallel] YAML...  benchmark_batch over benchmark configs\n",
    .opts = ray_opts,
    .outro = "exit status: 0 ok, 1 the task failed or is not finished, 2 usage error or Ray\n"
             "head unreachable\n\n"
             "examples:\n"
             "  magpie ray submit -a http://head:8265 -s /nfs/magpie -b bench.yaml\n"
             "  magpie ray status 1a2b3c4d -s /nfs/magpie\n"
             "  magpie -e ray analyze -k examples/kernels/opencl/analyze.yaml\n",
    .words = "status result cancel list logs delete wait submit batch",
};

static void usage(FILE *f)
{
    cli_help(f, &cli_cmd_ray);
}

/* Ray errors: an unreachable head is an input problem (exit 2). */
static int ray_error(const struct mp_diag *d, int rc)
{
    int ec = cli_report_error(d, rc);
    if (rc == MP_EIO && strstr(d->msg, "not reachable"))
        return EXIT_USAGE;
    return ec;
}

static volatile int g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    g_stop = 1;
}

struct ray_opts {
    const char *address, *shared, *magpie, *bench_yaml;
    double num_cpus, num_gpus, timeout;
    bool json, wait, parallel;
};

/* Ray config for a command: a YAML's ray_config (may be NULL), then the
 * environment, then the options. */
static int load_rc(struct mp_ray_config *rc, const char *yaml, const struct ray_opts *o,
                   struct mp_diag *d)
{
    mp_ray_config_init(rc);
    int r = yaml ? mp_ray_config_load_file(rc, yaml, d) : 0;
    if (r)
        return r;
    mp_ray_config_from_env(rc);
    if (o) {
        if (o->address)
            rc->cluster_address = mp_ray_config_strdup(rc, o->address);
        if (o->shared)
            rc->shared_storage_path = mp_ray_config_strdup(rc, o->shared);
        if (o->magpie)
            rc->magpie_path = mp_ray_config_strdup(rc, o->magpie);
        if (o->num_cpus >= 0)
            rc->entrypoint_num_cpus = o->num_cpus;
        if (o->num_gpus >= 0)
            rc->entrypoint_num_gpus = o->num_gpus;
    }
    char url[600];
    return mp_ray_address_resolve(rc->cluster_address, url, sizeof(url), d);
}

static void print_submitted(const struct mp_ray_task *t)
{
    fprintf(stderr,
            "magpie: submitted task %s (Ray job %s at %s); results in %s\n"
            "magpie: follow it with `magpie ray status %s`, stop it with `magpie ray cancel %s`\n",
            t->task_id, t->submission_id, t->address, t->dir, t->task_id, t->task_id);
}

/* Waits for t, then prints its result: the report JSON (json) or the
 * workspace summary / the worker's output. Exit code of the task. */
static int wait_and_print(const struct mp_ray_task *t, double timeout_s, bool json)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    char st[16];
    g_stop = 0;
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    int rc = mp_ray_task_wait(t, timeout_s, &g_stop, st, &d);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (rc == MP_ECANCEL || rc == MP_ETIMEOUT) {
        fprintf(stderr,
                "magpie: %s; the Ray job keeps running: `magpie ray status %s`, "
                "`magpie ray result %s`, `magpie ray cancel %s`\n",
                d.msg, t->task_id, t->task_id, t->task_id);
        return EXIT_FAIL;
    }
    if (rc)
        return ray_error(&d, rc);
    char *res = NULL;
    mp_diag_clear(&d);
    rc = mp_ray_task_result(t->task_id, t->address, t->shared, &res, &d);
    if (rc)
        return ray_error(&d, rc);
    int ec = strcmp(st, "SUCCEEDED") == 0 ? EXIT_OK : EXIT_FAIL;
    json_t *j = json_loads(res, 0, NULL);
    const char *file = json_string_value(json_object_get(j, "_result_file"));
    if (json) {
        printf("%s\n", res);
    } else if (ec == EXIT_OK && file) {
        /* the workspace's summary.txt beside a benchmark report, else the output */
        char sum[4200];
        snprintf(sum, sizeof(sum), "%s", file);
        char *slash = strrchr(sum, '/');
        if (slash)
            snprintf(slash + 1, sizeof(sum) - (size_t)(slash + 1 - sum), "summary.txt");
        char out[sizeof(t->dir) + 16];
        snprintf(out, sizeof(out), "%s/output.txt", t->dir);
        FILE *f = fopen(sum, "r");
        if (!f)
            f = fopen(out, "r");
        char buf[65536];
        size_t n;
        while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
            fwrite(buf, 1, n, stdout);
        if (f)
            fclose(f);
    } else if (ec == EXIT_OK) {
        const char *o = json_string_value(json_object_get(j, "output"));
        fputs(o ? o : res, stdout);
    } else {
        const char *tail = json_string_value(json_object_get(j, "error_tail"));
        fprintf(stderr, "magpie: task %s %s%s%s\n", t->task_id, st,
                tail ? "; last lines of its log:\n" : "", tail ? tail : "");
    }
    if (json_is_false(json_object_get(j, "success")))
        ec = EXIT_FAIL;
    json_decref(j);
    free(res);
    return ec;
}

int cli_ray_benchmark(const struct mp_serve_config *cfg, const char *yaml, bool json)
{
    struct mp_ray_config rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    int r = load_rc(&rc, yaml, NULL, &d);
    struct mp_ray_task t;
    if (!r) {
        struct mp_serve_config local = *cfg;
        local.run_mode = MP_SERVE_LOCAL; /* what the worker runs */
        r = mp_serve_config_validate(&local, &d);
    }
    if (!r)
        r = mp_ray_submit_benchmark(&rc, cfg, yaml, &t, &d);
    if (r) {
        mp_ray_config_fini(&rc);
        return ray_error(&d, r);
    }
    print_submitted(&t);
    double lim = rc.submit_timeout_s > 0 ? rc.submit_timeout_s : cfg->timeout_s + 600;
    mp_ray_config_fini(&rc);
    return wait_and_print(&t, lim, json);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Builds the worker's argv from a local one: -o/--output-dir dropped,
 * existing files staged (as words or as --opt=FILE values). */
static int stage_args(const struct mp_ray_task *t, int argc, char **argv, char **out, int *nout,
                      struct mp_diag *d)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output-dir") == 0) {
            i++;
            continue;
        }
        if (strncmp(a, "--output-dir=", 13) == 0)
            continue;
        char *staged = NULL;
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (!eq && is_file(a)) {
            int r = mp_ray_task_stage(t, a, &staged, d);
            if (r)
                return r;
            out[(*nout)++] = staged;
        } else if (eq && is_file(eq + 1)) {
            int r = mp_ray_task_stage(t, eq + 1, &staged, d);
            if (r)
                return r;
            size_t kl = (size_t)(eq + 1 - a);
            char *s = mp_malloc(kl + strlen(staged) + 1);
            memcpy(s, a, kl);
            strcpy(s + kl, staged);
            free(staged);
            out[(*nout)++] = s;
        } else {
            out[(*nout)++] = mp_strdup(a);
        }
    }
    return 0;
}

int cli_ray_kernel(int argc, char **argv, const struct cli_global *g, bool compare,
                   const struct mp_kernel_config *cfg, const char *kernel_yaml, bool json)
{
    struct mp_ray_config rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    int r = load_rc(&rc, kernel_yaml ? kernel_yaml : g->config_path, NULL, &d);
    struct mp_ray_task t;
    char **wargv = NULL;
    int wn = 0;
    if (!r)
        r = mp_ray_check_head(&rc, &d);
    if (!r)
        r = mp_ray_task_prepare(&rc, compare ? "compare" : "analyze",
                                kernel_yaml ? kernel_yaml : (argc > 1 ? argv[argc - 1] : ""), &t,
                                &d);
    if (r)
        goto fail;
    /* the kernels' files, at the relative paths the config names */
    for (int k = 0; k < cfg->nkernels; k++) {
        const struct mp_kernel_spec *s = &cfg->kernels[k];
        for (int i = 0; i < s->nsources && !r; i++)
            if (s->sources[i][0] != '/' && is_file(s->sources[i]))
                r = mp_ray_task_stage(&t, s->sources[i], NULL, &d);
        if (!r && s->reference && s->reference[0] != '/' && is_file(s->reference))
            r = mp_ray_task_stage(&t, s->reference, NULL, &d);
    }
    wargv = mp_calloc((size_t)argc + 16, sizeof(*wargv));
    wargv[wn++] = mp_strdup("-e");
    wargv[wn++] = mp_strdup("local");
    if (!r && g->config_path && is_file(g->config_path)) {
        char *staged = NULL;
        r = mp_ray_task_stage(&t, g->config_path, &staged, &d);
        wargv[wn++] = mp_strdup("-c");
        wargv[wn++] = staged ? staged : mp_strdup(g->config_path);
    }
    wargv[wn++] = mp_strdup(compare ? "compare" : "analyze");
    if (!r)
        r = stage_args(&t, argc - 1, argv + 1, wargv, &wn, &d);
    if (r)
        goto fail;
    wargv[wn++] = mp_strdup("-o");
    wargv[wn++] = mp_strdup(t.dir);
    wargv[wn++] = mp_strdup("-q");
    wargv[wn] = NULL;
    r = mp_ray_task_submit(&rc, &t, (const char *const *)wargv, false, &d);
    if (r)
        goto fail;
    for (int i = 0; i < wn; i++)
        free(wargv[i]);
    free(wargv);
    print_submitted(&t);
    double lim = rc.submit_timeout_s;
    mp_ray_config_fini(&rc);
    return wait_and_print(&t, lim, json);
fail:
    for (int i = 0; wargv && i < wn; i++)
        free(wargv[i]);
    free(wargv);
    mp_ray_config_fini(&rc);
    return ray_error(&d, r);
}

static int print_json_or(const char *json, bool as_json, const char *key)
{
    if (as_json || !key) {
        printf("%s\n", json);
        return EXIT_OK;
    }
    json_t *j = json_loads(json, 0, NULL);
    const char *v = json_string_value(json_object_get(j, key));
    printf("%s\n", v ? v : json);
    json_decref(j);
    return EXIT_OK;
}

static int cmd_submit(int argc, char **argv, const struct ray_opts *o)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_ray_config rc;
    struct mp_ray_task t;
    int r;
    if (o->bench_yaml) {
        struct mp_serve_config cfg;
        mp_serve_config_init(&cfg);
        r = mp_serve_config_load(&cfg, o->bench_yaml, &d);
        if (!r)
            r = load_rc(&rc, o->bench_yaml, o, &d);
        if (!r) {
            enum mp_serve_mode m = cfg.run_mode;
            cfg.run_mode = MP_SERVE_LOCAL;
            r = mp_serve_config_validate(&cfg, &d);
            cfg.run_mode = m;
        }
        if (!r)
            r = mp_ray_submit_benchmark(&rc, &cfg, o->bench_yaml, &t, &d);
        double lim = cfg.timeout_s + 600;
        mp_serve_config_fini(&cfg);
        mp_ray_config_fini(&rc);
        if (r)
            return ray_error(&d, r);
        print_submitted(&t);
        if (o->wait)
            return wait_and_print(&t, o->timeout > 0 ? o->timeout : lim, o->json);
        printf("%s\n", t.task_id);
        return EXIT_OK;
    }
    if (argc < 1) {
        fprintf(stderr, "magpie: error: ray submit needs -b YAML or -- MAGPIE-ARGS\n");
        return EXIT_USAGE;
    }
    char label[256];
    snprintf(label, sizeof(label), "%s%s%s", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
    if ((r = load_rc(&rc, NULL, o, &d)) || (r = mp_ray_check_head(&rc, &d)) ||
        (r = mp_ray_task_prepare(&rc, "run", label, &t, &d))) {
        mp_ray_config_fini(&rc);
        return ray_error(&d, r);
    }
    char **wargv = mp_calloc((size_t)argc + 2, sizeof(*wargv));
    int wn = 0;
    /* -o stays for these: the output goes below the task's inputs/ */
    for (int i = 0; i < argc && !r; i++) {
        char *staged = NULL;
        if (is_file(argv[i]) && !(r = mp_ray_task_stage(&t, argv[i], &staged, &d)))
            wargv[wn++] = staged;
        else if (!r)
            wargv[wn++] = mp_strdup(argv[i]);
    }
    if (!r)
        r = mp_ray_task_submit(&rc, &t, (const char *const *)wargv, false, &d);
    for (int i = 0; i < wn; i++)
        free(wargv[i]);
    free(wargv);
    mp_ray_config_fini(&rc);
    if (r)
        return ray_error(&d, r);
    print_submitted(&t);
    if (o->wait)
        return wait_and_print(&t, o->timeout, o->json);
    printf("%s\n", t.task_id);
    return EXIT_OK;
}

static int cmd_batch(int argc, char **argv, const struct ray_opts *o)
{
    if (argc < 1) {
        fprintf(stderr, "magpie: error: ray batch needs one or more benchmark YAML files\n");
        return EXIT_USAGE;
    }
    struct mp_diag d;
    mp_diag_clear(&d);
    struct mp_ray_config rc;
    int r = load_rc(&rc, argv[0], o, &d);
    if (r) {
        mp_ray_config_fini(&rc);
        return ray_error(&d, r);
    }
    json_t *a = json_array();
    for (int i = 0; i < argc; i++) {
        char *abs = realpath(argv[i], NULL);
        json_array_append_new(a, json_string(abs ? abs : argv[i]));
        free(abs);
    }
    char *text = json_dumps(a, JSON_COMPACT), *out = NULL;
    json_decref(a);
    r = mp_ray_benchmark_batch(&rc, text, o->parallel, o->timeout, &out, &d);
    free(text);
    mp_ray_config_fini(&rc);
    if (r)
        return ray_error(&d, r);
    printf("%s\n", out);
    json_t *j = json_loads(out, 0, NULL);
    int failed = (int)json_integer_value(json_object_get(j, "failed"));
    json_decref(j);
    free(out);
    return failed ? EXIT_FAIL : EXIT_OK;
}

int cmd_ray(int argc, char **argv, const struct cli_global *g)
{
    (void)g;
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    const char *sub = argv[1];

    struct ray_opts o = {.num_cpus = -1, .num_gpus = -1};
    int c;
    struct cli_parser op;
    cli_parser_init(&op, &cli_cmd_ray);
    while ((c = cli_next(&op, argc - 1, argv + 1)) != -1) {
        double *num = NULL;
        switch (c) {
        case 'a':
            o.address = optarg;
            break;
        case 's':
            o.shared = optarg;
            break;
        case 'b':
            o.bench_yaml = optarg;
            break;
        case O_CPUS:
            num = &o.num_cpus;
            break;
        case O_GPUS:
            num = &o.num_gpus;
            break;
        case O_TIMEOUT:
            num = &o.timeout;
            break;
        case O_MAGPIE:
            o.magpie = optarg;
            break;
        case O_WAIT:
            o.wait = true;
            break;
        case O_JSON:
            o.json = true;
            break;
        case O_PAR:
            o.parallel = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "magpie: error: unknown or incomplete option '%s' for ray %s\n",
                    argv[optind], sub);
            return EXIT_USAGE;
        }
        if (num && (cli_parse_double(argv[optind], optarg, num) || *num < 0))
            return EXIT_USAGE;
    }
    int rest = argc - 1 - optind;
    char **rv = argv + 1 + optind;
    if (strcmp(sub, "submit") == 0)
        return cmd_submit(rest, rv, &o);
    if (strcmp(sub, "batch") == 0)
        return cmd_batch(rest, rv, &o);
    struct mp_diag d;
    mp_diag_clear(&d);
    char *out = NULL;
    int r;
    if (strcmp(sub, "list") == 0) {
        if (!(r = mp_ray_task_list(o.address, o.shared, &out, &d))) {
            if (o.json) {
                printf("%s\n", out);
            } else {
                json_t *j = json_loads(out, 0, NULL), *x;
                size_t i;
                printf("%-10s %-10s %-10s %s\n", "TASK", "STATUS", "MODE", "LABEL");
                json_array_foreach(json_object_get(j, "tasks"), i, x) printf(
                    "%-10s %-10s %-10s %s\n", json_string_value(json_object_get(x, "task_id")),
                    json_string_value(json_object_get(x, "status")),
                    json_string_value(json_object_get(x, "mode_type"))
                        ? json_string_value(json_object_get(x, "mode_type"))
                        : "",
                    json_string_value(json_object_get(x, "label"))
                        ? json_string_value(json_object_get(x, "label"))
                        : "");
                json_decref(j);
            }
        }
        free(out);
        return r ? ray_error(&d, r) : EXIT_OK;
    }
    if (rest != 1) {
        fprintf(stderr, "magpie: error: ray %s needs exactly one task id\n", sub);
        return EXIT_USAGE;
    }
    const char *id = rv[0];
    int ec = EXIT_OK;
    if (strcmp(sub, "status") == 0) {
        if (!(r = mp_ray_task_status(id, o.address, o.shared, &out, &d)))
            ec = print_json_or(out, o.json, "status");
    } else if (strcmp(sub, "result") == 0) {
        if (!(r = mp_ray_task_result(id, o.address, o.shared, &out, &d))) {
            printf("%s\n", out);
            json_t *j = json_loads(out, 0, NULL);
            ec = json_object_get(j, "_task_id") ? EXIT_OK : EXIT_FAIL;
            json_decref(j);
        }
    } else if (strcmp(sub, "cancel") == 0) {
        if (!(r = mp_ray_task_cancel(id, o.address, o.shared, &out, &d))) {
            printf("%s\n", out);
            json_t *j = json_loads(out, 0, NULL);
            ec = json_is_true(json_object_get(j, "cancelled")) ? EXIT_OK : EXIT_FAIL;
            json_decref(j);
        }
    } else if (strcmp(sub, "delete") == 0) {
        if (!(r = mp_ray_task_delete(id, o.address, o.shared, &out, &d)))
            ec = print_json_or(out, true, NULL);
    } else if (strcmp(sub, "logs") == 0) {
        if (!(r = mp_ray_task_logs(id, o.address, o.shared, &out, &d)))
            fputs(out, stdout);
    } else if (strcmp(sub, "wait") == 0) {
        struct mp_ray_task t;
        if (!(r = mp_ray_task_find(id, o.address, o.shared, &t, &d)))
            return wait_and_print(&t, o.timeout, o.json);
    } else {
        fprintf(stderr, "magpie: error: unknown ray command '%s'\n", sub);
        usage(stderr);
        return EXIT_USAGE;
    }
    free(out);
    return r ? ray_error(&d, r) : ec;
}
