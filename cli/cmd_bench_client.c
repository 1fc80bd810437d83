/* `magpie benchmark --base-url URL --model M ...`: the native load generator
 * against a running OpenAI-compatible server (Magpie's client-only mode,
 * also entered with BENCHMARK_BASE_URL). Flag names follow `vllm bench
 * serve`; this file only parses them, calls the loadgen library and writes
 * what it returns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <magpie/loadgen.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(
        f, "usage: magpie benchmark --base-url URL [--model M] [options]\n\n"
           "Serving benchmark of a running OpenAI-compatible server (vLLM, SGLang, ATOM, ...)\n"
           "with magpie's native load generator. Metrics are vLLM's (docs/metrics.md); flags\n"
           "follow `vllm bench serve`. BENCHMARK_BASE_URL stands in for --base-url.\n\n"
           "server:\n"
           "  --base-url URL            e.g. http://127.0.0.1:8000 (or --host H --port P)\n"
           "  --endpoint PATH           /v1/completions (default) or /v1/chat/completions\n"
           "  --backend B               openai|vllm (completions), openai-chat|vllm-chat (chat)\n"
           "  --model M                 model name; default: first of GET /v1/models\n"
           "  --served-model-name N     name sent in requests (default: --model)\n"
           "  --tokenizer T             recorded in the result as tokenizer_id\n"
           "  --header KEY=VALUE ...    extra HTTP headers ($OPENAI_API_KEY adds Authorization)\n"
           "  --extra-body JSON         members added to every request body\n"
           "  --ignore-eos              send ignore_eos (forced on for the random dataset)\n"
           "  --temperature/--top-p/--top-k/--min-p/--frequency-penalty/--presence-penalty/\n"
           "  --repetition-penalty X    sampling parameters, as vLLM sends them\n"
           "  --continuous-usage-stats  ask for usage in every chunk: per-event token counts\n"
           "  --insecure                do not verify TLS certificates\n"
           "  --no-kernel-timestamps    stamp events when read, not when the kernel received them\n"
           "workload:\n"
           "  --dataset-name NAME       random (default), sharegpt, jsonl (alias custom)\n"
           "  --dataset-path FILE       for sharegpt / jsonl\n"
           "  --num-prompts N           requests to send (default 1000)\n"
           "  --random-input-len N      (1024)   --random-output-len N (128)\n"
           "  --random-range-ratio R    (0)      --random-prefix-len N (0)\n"
           "  --random-mode vllm|sglang length sampling: vllm [L(1-R), L(1+R)], sglang [L R, L]\n"
           "  --input-len/--output-len  generic aliases of the dataset lengths\n"
           "  --random-vocab-start N, --random-vocab-size N  token-id range (1000, 31000)\n"
           "  --sharegpt-output-len N, --custom-output-len N  fixed output lengths\n"
           "  --disable-shuffle, --no-oversample\n"
           "load:\n"
           "  --request-rate R          req/s, inf (default) = all at once\n"
           "  --burstiness B            gamma shape, 1 = Poisson (default)\n"
           "  --max-concurrency N       in-flight cap (requests beyond it queue)\n"
           "  --num-warmups N           unmeasured requests first (default 0)\n"
           "  --seed S                  (default 0; same arrival schedule as vLLM's seed)\n"
           "  --request-timeout S       per request (default 21600)\n"
           "  --stall-timeout S         fail a request after S seconds without data (off)\n"
           "  --max-failed-requests N|P%%  failed requests the run may have and still pass: a\n"
           "                            count or a percentage of --num-prompts (default 0: any\n"
           "                            failure is exit 1; metrics cover successes only)\n");
    fprintf(
        f,
        "results:\n"
        "  --percentile-metrics L    ttft,tpot,itl (default),e2el,client_queue_time,...\n"
        "  --metric-percentiles L    e.g. 50,90,99 (default 99)\n"
        "  --goodput KEY:MS ...      SLOs for goodput: ttft, tpot, e2el\n"
        "  --save-result             write the vLLM-format result JSON (+ .requests.jsonl,\n"
        "                            .html beside it)\n"
        "  --save-detailed           include per-request arrays in the result JSON\n"
        "  --result-dir DIR, --result-filename NAME, --label L, --metadata KEY=VALUE ...\n"
        "  --save-requests FILE      per-request JSONL with per-event timestamps\n"
        "  --html FILE               HTML report with latency distributions\n"
        "  --request-id-prefix P     x-request-id prefix (default bench-<hex>-)\n"
        "  --json                    print {throughput, latency, ...} JSON, not the summary\n"
        "  --disable-tqdm, -q        no progress display\n\n"
        "exit status: 0 ok, 1 more requests failed than --max-failed-requests allows or the\n"
        "run failed, 2 usage or input error\n\n"
        "examples:\n"
        "  magpie benchmark --base-url http://127.0.0.1:8000 --model meta-llama/Llama-3.1-8B \\\n"
        "      --random-input-len 1024 --random-output-len 128 --max-concurrency 64 \\\n"
        "      --num-prompts 640 --percentile-metrics ttft,tpot,itl,e2el --save-result\n"
        "  magpie benchmark --base-url http://host:8000 --backend openai-chat \\\n"
        "      --endpoint /v1/chat/completions --dataset-name sharegpt \\\n"
        "      --dataset-path ShareGPT_V3.json --request-rate 10 --goodput ttft:500 tpot:50\n");
}

struct opts {
    struct mp_loadgen_config cfg;
    struct mp_loadgen_random_opts rnd;
    struct mp_loadgen_metrics_opts mo;
    struct mp_loadgen_report_info info;
    struct mp_loadgen_fail_limit fail_limit;
    const char *dataset, *dataset_path, *result_dir, *result_filename, *save_requests, *html;
    const char *host, *port, *backend, *served, *extra_body;
    size_t num_prompts;
    int sharegpt_out, custom_out;
    bool save_result, json, quiet, shuffle, oversample, ignore_eos_set;
    double sampling[7];
    bool sampling_set[7];
};

static const char *const SAMPLING[7] = {"top_p",
                                        "top_k",
                                        "min_p",
                                        "temperature",
                                        "frequency_penalty",
                                        "presence_penalty",
                                        "repetition_penalty"};

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "magpie: error: %s expects %s, not '%s'\n", opt, want, val ? val : "");
    return EXIT_USAGE;
}

static int num(const char *opt, const char *v, double *out)
{
    char *end;
    if (!v)
        return bad(opt, v, "a number");
    double x = strtod(v, &end);
    if (end == v || *end)
        return bad(opt, v, "a number");
    *out = x;
    return 0;
}

static int inum(const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end;
    if (!v)
        return bad(opt, v, "an integer");
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi)
        return bad(opt, v, "an integer in range");
    *out = x;
    return 0;
}

/* progress line on stderr (a TTY only): requests done, rate, ETA */
struct prog {
    bool on, drawn;
};

static void on_progress(const struct mp_loadgen_progress *p, void *user)
{
    struct prog *pg = user;
    if (!pg->on)
        return;
    double rate = p->elapsed_s > 0 ? (double)p->done / p->elapsed_s : 0;
    double eta = rate > 0 && p->done < p->total ? (double)(p->total - p->done) / rate : 0;
    fprintf(stderr, "\r\033[K%s %zu/%zu done (%zu failed), %zu in flight, %.1f req/s, ETA %.0fs",
            p->warmup ? "warm-up" : "requests", p->done, p->total, p->failed, p->in_flight, rate,
            eta);
    pg->drawn = true;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int parse(int argc, char **argv, struct opts *o)
{
    int rc;
    long l;
    double x;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *v = NULL, *eq = NULL, keybuf[64];
        if (strncmp(a, "--", 2) == 0 && (eq = strchr(a, '=')) &&
            (size_t)(eq - a) < sizeof(keybuf)) {
            snprintf(keybuf, sizeof(keybuf), "%.*s", (int)(eq - a), a);
            v = eq + 1;
            a = keybuf;
        }
#define VAL() (v ? v : (i + 1 < argc ? argv[++i] : NULL))
#define IS(s) (strcmp(a, s) == 0)
        if (IS("-h") || IS("--help")) {
            usage(stdout);
            return -1;
        } else if (IS("--base-url")) {
            o->cfg.base_url = VAL();
        } else if (IS("--host")) {
            o->host = VAL();
        } else if (IS("--port")) {
            o->port = VAL();
        } else if (IS("--endpoint")) {
            o->cfg.endpoint = VAL();
        } else if (IS("--backend")) {
            o->backend = VAL();
        } else if (IS("--model")) {
            o->cfg.model = VAL();
        } else if (IS("--served-model-name")) {
            o->served = VAL();
        } else if (IS("--tokenizer")) {
            o->info.tokenizer_id = VAL();
        } else if (IS("--label")) {
            o->info.label = VAL();
        } else if (IS("--extra-body")) {
            o->extra_body = VAL();
        } else if (IS("--ignore-eos")) {
            o->cfg.ignore_eos = true;
        } else if (IS("--continuous-usage-stats")) {
            o->cfg.continuous_usage = true;
        } else if (IS("--insecure")) {
            o->cfg.insecure = true;
        } else if (IS("--no-kernel-timestamps")) {
            o->cfg.kernel_timestamps = false;
        } else if (IS("--header") || IS("--metadata") || IS("--goodput")) {
            bool hdr = IS("--header"), meta = IS("--metadata");
            int taken = 0;
            while (v || (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)) {
                char *item = v ? v : argv[++i];
                v = NULL;
                taken++;
                if (hdr) {
                    char *e = strchr(item, '=');
                    if (!e || o->cfg.n_headers >= MP_LOADGEN_MAX_HEADERS - 2)
                        return bad("--header", item, "KEY=VALUE");
                    char *line = malloc(strlen(item) + 3);
                    if (!line)
                        return EXIT_FAIL;
                    sprintf(line, "%.*s: %s", (int)(e - item), item, e + 1);
                    o->cfg.headers[o->cfg.n_headers++] = line;
                } else if (meta) {
                    if (!strchr(item, '=') || o->info.n_metadata >= MP_LOADGEN_MAX_METADATA)
                        return bad("--metadata", item, "KEY=VALUE");
                    o->info.metadata[o->info.n_metadata++] = item;
                } else {
                    struct mp_diag d;
                    mp_diag_clear(&d);
                    if ((rc = mp_loadgen_parse_goodput(item, &o->mo, &d)))
                        return cli_report_error(&d, rc);
                }
            }
            if (!taken && !hdr && !meta)
                return bad("--goodput", "", "KEY:VALUE pairs");
        } else if (IS("--max-failed-requests")) {
            struct mp_diag d;
            mp_diag_clear(&d);
            if ((rc = mp_loadgen_fail_limit_parse(VAL(), &o->fail_limit, &d)))
                return cli_report_error(&d, rc);
        } else if (IS("--dataset-name")) {
            o->dataset = VAL();
        } else if (IS("--dataset-path")) {
            o->dataset_path = VAL();
        } else if (IS("--num-prompts")) {
            if ((rc = inum(a, VAL(), 1, 10 << 20, &l)))
                return rc;
            o->num_prompts = (size_t)l;
        } else if (IS("--random-input-len") || IS("--input-len")) {
            if ((rc = inum(a, VAL(), 0, 1 << 24, &l)))
                return rc;
            o->rnd.input_len = (int)l;
        } else if (IS("--random-output-len") || IS("--output-len")) {
            if ((rc = inum(a, VAL(), 1, 1 << 24, &l)))
                return rc;
            o->rnd.output_len = (int)l;
            if (IS("--output-len"))
                o->sharegpt_out = o->custom_out = (int)l;
        } else if (IS("--random-range-ratio")) {
            if ((rc = num(a, VAL(), &o->rnd.range_ratio)))
                return rc;
        } else if (IS("--random-prefix-len")) {
            if ((rc = inum(a, VAL(), 0, 1 << 24, &l)))
                return rc;
            o->rnd.prefix_len = (int)l;
        } else if (IS("--random-mode") || IS("--range-ratio-mode")) {
            const char *m = VAL();
            if (m && !strcmp(m, "sglang"))
                o->rnd.mode = MP_LOADGEN_RANGE_SGLANG;
            else if (m && !strcmp(m, "vllm"))
                o->rnd.mode = MP_LOADGEN_RANGE_VLLM;
            else
                return bad(a, m, "vllm or sglang");
        } else if (IS("--random-vocab-start")) {
            if ((rc = inum(a, VAL(), 0, INT32_MAX / 2, &l)))
                return rc;
            o->rnd.vocab_first = (int)l;
        } else if (IS("--random-vocab-size")) {
            if ((rc = inum(a, VAL(), 1, INT32_MAX / 2, &l)))
                return rc;
            o->rnd.vocab_size = (int)l;
        } else if (IS("--sharegpt-output-len")) {
            if ((rc = inum(a, VAL(), 1, 1 << 24, &l)))
                return rc;
            o->sharegpt_out = (int)l;
        } else if (IS("--custom-output-len")) {
            if ((rc = inum(a, VAL(), 1, 1 << 24, &l)))
                return rc;
            o->custom_out = (int)l;
        } else if (IS("--disable-shuffle")) {
            o->shuffle = false;
        } else if (IS("--no-oversample")) {
            o->oversample = false;
        } else if (IS("--request-rate")) {
            if ((rc = num(a, VAL(), &o->cfg.request_rate)))
                return rc;
            if (!(o->cfg.request_rate > 0))
                return bad(a, argv[i], "a positive number or inf");
        } else if (IS("--burstiness")) {
            if ((rc = num(a, VAL(), &o->cfg.burstiness)))
                return rc;
            if (!(o->cfg.burstiness > 0))
                return bad(a, argv[i], "a positive number");
        } else if (IS("--max-concurrency")) {
            if ((rc = inum(a, VAL(), 1, 1 << 20, &l)))
                return rc;
            o->cfg.max_concurrency = (int)l;
        } else if (IS("--num-warmups")) {
            if ((rc = inum(a, VAL(), 0, 1 << 20, &l)))
                return rc;
            o->cfg.num_warmups = (int)l;
        } else if (IS("--seed")) {
            if ((rc = inum(a, VAL(), 0, 4294967295L, &l)))
                return rc;
            o->cfg.seed = (uint64_t)l;
            o->rnd.seed = (uint64_t)l;
        } else if (IS("--request-timeout")) {
            if ((rc = num(a, VAL(), &o->cfg.request_timeout_s)))
                return rc;
        } else if (IS("--stall-timeout")) {
            if ((rc = num(a, VAL(), &o->cfg.stall_timeout_s)))
                return rc;
        } else if (IS("--percentile-metrics")) {
            struct mp_diag d;
            mp_diag_clear(&d);
            const char *s = VAL();
            if ((rc = mp_loadgen_parse_metric_list(s ? s : "", &o->mo.selected, &d)))
                return cli_report_error(&d, rc);
        } else if (IS("--metric-percentiles")) {
            struct mp_diag d;
            mp_diag_clear(&d);
            const char *s = VAL();
            if ((rc = mp_loadgen_parse_percentiles(s ? s : "", &o->mo, &d)))
                return cli_report_error(&d, rc);
        } else if (IS("--save-result")) {
            o->save_result = true;
        } else if (IS("--save-detailed")) {
            o->info.save_detailed = true;
        } else if (IS("--result-dir")) {
            o->result_dir = VAL();
        } else if (IS("--result-filename")) {
            o->result_filename = VAL();
        } else if (IS("--save-requests")) {
            o->save_requests = VAL();
        } else if (IS("--html")) {
            o->html = VAL();
        } else if (IS("--request-id-prefix")) {
            o->cfg.request_id_prefix = VAL();
        } else if (IS("--json")) {
            o->json = true;
        } else if (IS("--disable-tqdm") || IS("-q") || IS("--quiet")) {
            o->quiet = true;
        } else {
            int k;
            for (k = 0; k < 7; k++) {
                char name[40];
                snprintf(name, sizeof(name), "--%s", SAMPLING[k]);
                for (char *q = name + 2; *q; q++)
                    if (*q == '_')
                        *q = '-';
                if (IS(name))
                    break;
            }
            if (k == 7) {
                fprintf(stderr,
                        "magpie: error: unknown option '%s' for benchmark --base-url "
                        "(see magpie benchmark --base-url X --help)\n",
                        argv[i]);
                return EXIT_USAGE;
            }
            if ((rc = num(a, VAL(), &x)))
                return rc;
            o->sampling[k] = x;
            o->sampling_set[k] = true;
        }
        if (eq && v && !IS("--header") && !IS("--metadata") && !IS("--goodput")) {
            /* --flag=value consumed v; nothing else to do */
        }
#undef VAL
#undef IS
    }
    return 0;
}

/* Sampling flags as a JSON object, with --extra-body merged over them. */
static int merged_extra(struct opts *o, char **out)
{
    *out = NULL;
    json_t *obj = json_object();
    for (int k = 0; k < 7; k++)
        if (o->sampling_set[k])
            json_object_set_new(obj, SAMPLING[k],
                                k == 1 ? json_integer((json_int_t)o->sampling[k])
                                       : json_real(o->sampling[k]));
    if (o->extra_body) {
        json_error_t je;
        json_t *e = json_loads(o->extra_body, 0, &je);
        if (!json_is_object(e)) {
            json_decref(e);
            json_decref(obj);
            fprintf(stderr, "magpie: error: --extra-body must be a JSON object%s%s\n",
                    e ? "" : ": ", e ? "" : je.text);
            return EXIT_USAGE;
        }
        json_object_update(obj, e);
        json_decref(e);
    }
    if (json_object_size(obj))
        *out = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    return 0;
}

static int write_file(const char *path, const struct mp_buf *b)
{
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_fs_write_atomic(path, b->data ? b->data : "", b->len, &d);
    if (rc)
        return cli_report_error(&d, rc);
    return 0;
}

int cli_bench_client(int argc, char **argv, const struct cli_global *g)
{
    struct opts o;
    memset(&o, 0, sizeof(o));
    mp_loadgen_config_default(&o.cfg);
    mp_loadgen_random_opts_default(&o.rnd);
    mp_loadgen_metrics_opts_default(&o.mo);
    o.dataset = "random";
    o.num_prompts = 1000;
    o.shuffle = o.oversample = true;
    o.backend = "openai";
    char prefix[64], model_buf[512], url_buf[600], date[32], *extra = NULL;
    struct mp_loadgen_dataset *ds = NULL;
    struct mp_loadgen_result *res = NULL;
    struct mp_buf out, aux;
    mp_buf_init(&out, 0);
    mp_buf_init(&aux, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = parse(argc, argv, &o), exit_code = EXIT_OK;
    if (rc) {
        exit_code = rc < 0 ? EXIT_OK : rc;
        goto done;
    }
    raise_nofile();
    if (!o.cfg.base_url) {
        const char *env = getenv("BENCHMARK_BASE_URL");
        if (env && *env) {
            o.cfg.base_url = env;
        } else if (o.host || o.port) {
            snprintf(url_buf, sizeof(url_buf), "http://%s:%s", o.host ? o.host : "127.0.0.1",
                     o.port ? o.port : "8000");
            o.cfg.base_url = url_buf;
        } else {
            fprintf(stderr, "magpie: error: --base-url is required\n");
            exit_code = EXIT_USAGE;
            goto done;
        }
    }
    bool chat = strstr(o.backend, "chat") != NULL;
    if (!chat && strcmp(o.backend, "openai") != 0 && strcmp(o.backend, "vllm") != 0 &&
        strcmp(o.backend, "sglang-oai") != 0 && strcmp(o.backend, "sglang") != 0) {
        exit_code = bad("--backend", o.backend, "openai, vllm, openai-chat or vllm-chat");
        goto done;
    }
    if (o.cfg.endpoint && strstr(o.cfg.endpoint, "chat/completions"))
        chat = true;
    else if (!o.cfg.endpoint || !strcmp(o.cfg.endpoint, "/v1/completions"))
        o.cfg.endpoint = chat ? "/v1/chat/completions" : "/v1/completions";
    o.cfg.api = chat ? MP_LOADGEN_API_CHAT : MP_LOADGEN_API_COMPLETIONS;
    if (!o.cfg.request_id_prefix) {
        /* like vLLM's bench-<8 hex>-: unique per run, no RNG state needed */
        uint64_t seed[2] = {mp_time_ns(), (uint64_t)getpid()};
        uint64_t h = mp_hash_bytes(seed, sizeof(seed));
        snprintf(prefix, sizeof(prefix), "bench-%08x-", (unsigned)(h ^ (h >> 32)));
        o.cfg.request_id_prefix = prefix;
    }
    const char *key = getenv("OPENAI_API_KEY");
    char auth[600];
    if (key && *key && o.cfg.n_headers < MP_LOADGEN_MAX_HEADERS) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", key);
        o.cfg.headers[o.cfg.n_headers++] = auth;
    }
    if (!o.cfg.model) {
        if ((rc = mp_loadgen_first_model(o.cfg.base_url, o.cfg.headers, o.cfg.n_headers,
                                         o.cfg.insecure, model_buf, sizeof(model_buf), &d))) {
            exit_code = cli_report_error(&d, rc);
            goto done;
        }
        o.cfg.model = model_buf;
    }
    const char *model_id = o.cfg.model;
    if (o.served)
        o.cfg.model = o.served;
    if ((exit_code = merged_extra(&o, &extra)))
        goto done;
    o.cfg.extra_body = extra;
    /* datasets */
    if (!strcmp(o.dataset, "random")) {
        o.rnd.text = chat;
        o.cfg.ignore_eos = true; /* vLLM forces it for random on OpenAI backends */
        rc = mp_loadgen_dataset_random(&o.rnd, o.num_prompts, &ds, &d);
    } else if (!strcmp(o.dataset, "sharegpt") || !strcmp(o.dataset, "jsonl") ||
               !strcmp(o.dataset, "custom")) {
        if (!o.dataset_path) {
            fprintf(stderr, "magpie: error: --dataset-name %s needs --dataset-path\n", o.dataset);
            exit_code = EXIT_USAGE;
            goto done;
        }
        bool sg = !strcmp(o.dataset, "sharegpt");
        struct mp_loadgen_file_opts fo = {o.dataset_path, sg ? o.sharegpt_out : o.custom_out,
                                          o.cfg.seed, sg ? o.shuffle : false, o.oversample};
        rc = sg ? mp_loadgen_dataset_sharegpt(&fo, o.num_prompts, &ds, &d)
                : mp_loadgen_dataset_jsonl(&fo, o.num_prompts, &ds, &d);
    } else {
        exit_code = bad("--dataset-name", o.dataset, "random, sharegpt or jsonl");
        goto done;
    }
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    struct prog pg = {!o.quiet && !o.json && !(g && g->quiet) && isatty(STDERR_FILENO), false};
    o.cfg.on_progress = on_progress;
    o.cfg.progress_user = &pg;
    o.cfg.keep_text = o.info.save_detailed;
    if (!o.json) {
        if (isinf(o.cfg.request_rate))
            printf("Traffic request rate: inf\n");
        else
            printf("Traffic request rate: %g\n", o.cfg.request_rate);
        printf("Burstiness factor: %g (%s)\n", o.cfg.burstiness,
               o.cfg.burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
        if (o.cfg.max_concurrency)
            printf("Maximum request concurrency: %d\n", o.cfg.max_concurrency);
        else
            printf("Maximum request concurrency: None\n");
    }
    fflush(stdout);
    rc = mp_loadgen_run(&o.cfg, ds, &res, &d);
    if (pg.drawn)
        fprintf(stderr, "\r\033[K");
    if (rc) {
        exit_code = cli_report_error(&d, rc);
        goto done;
    }
    struct mp_loadgen_metrics m;
    if (mp_loadgen_metrics_compute(res, &o.mo, &m)) {
        fprintf(stderr, "magpie: error: out of memory computing metrics\n");
        exit_code = EXIT_FAIL;
        goto done;
    }
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tmv);
    o.info.date = date;
    o.info.backend = o.backend;
    o.info.model_id = model_id;
    o.info.dataset = ds->name;
    o.info.num_prompts = o.num_prompts;
    o.info.fail_limit = &o.fail_limit;
    struct mp_loadgen_failures fl;
    mp_loadgen_failures(res, &fl);
    /* with no success there is nothing to judge, whatever the limit */
    bool judged = m.completed > 0 && mp_loadgen_fail_limit_ok(&o.fail_limit, fl.failed, fl.total);
    if (o.json) {
        rc = mp_buf_puts(&out, "{\"success\": ");
        rc |= mp_buf_puts(&out, judged ? "true" : "false");
        rc |= mp_buf_printf(
            &out, ", \"completed\": %zu, \"failed\": %zu, \"metrics\": ", m.completed, m.failed);
        rc |= mp_loadgen_magpie_json(&m, &out);
        rc |= mp_buf_puts(&out, ", \"failures\": ");
        rc |= mp_loadgen_failures_json(&fl, &o.fail_limit, &out);
        rc |= mp_buf_puts(&out, "}\n");
    } else {
        rc = mp_loadgen_summary(res, &m, &out);
    }
    if (rc) {
        fprintf(stderr, "magpie: error: out of memory formatting output\n");
        exit_code = EXIT_FAIL;
        goto done;
    }
    fwrite(out.data, 1, out.len, stdout);
    fflush(stdout);
    char path[8300], base[4096], side[8400];
    if (o.save_result) {
        if (o.result_filename) {
            snprintf(base, sizeof(base), "%s", o.result_filename);
        } else {
            const char *bn = strrchr(model_id, '/');
            char rate[64], conc[64] = "";
            if (isinf(o.cfg.request_rate))
                snprintf(rate, sizeof(rate), "inf");
            else
                snprintf(rate, sizeof(rate), "%.17g%s", o.cfg.request_rate,
                         o.cfg.request_rate == floor(o.cfg.request_rate) ? ".0" : "");
            if (o.cfg.max_concurrency)
                snprintf(conc, sizeof(conc), "-concurrency%d", o.cfg.max_concurrency);
            snprintf(base, sizeof(base), "%s-%sqps%s-%s-%s.json",
                     o.info.label ? o.info.label : o.backend, rate, conc, bn ? bn + 1 : model_id,
                     date);
        }
        if (o.result_dir) {
            if ((rc = mp_fs_mkdirs(o.result_dir, &d))) {
                exit_code = cli_report_error(&d, rc);
                goto done;
            }
            snprintf(path, sizeof(path), "%s/%s", o.result_dir, base);
        } else {
            snprintf(path, sizeof(path), "%s", base);
        }
        mp_buf_reset(&aux);
        if (mp_loadgen_result_json(res, &m, &o.info, &aux) || (rc = write_file(path, &aux))) {
            exit_code = rc ? rc : EXIT_FAIL;
            goto done;
        }
        size_t pl = strlen(path);
        if (pl > 5 && !strcmp(path + pl - 5, ".json"))
            path[pl - 5] = 0;
        if (!o.save_requests) {
            snprintf(side, sizeof(side), "%s.requests.jsonl", path);
            mp_buf_reset(&aux);
            if (mp_loadgen_requests_jsonl(res, &aux) || (rc = write_file(side, &aux))) {
                exit_code = rc ? rc : EXIT_FAIL;
                goto done;
            }
        }
        if (!o.html) {
            snprintf(side, sizeof(side), "%s.html", path);
            mp_buf_reset(&aux);
            if (mp_loadgen_html(res, &m, &o.info, &aux) || (rc = write_file(side, &aux))) {
                exit_code = rc ? rc : EXIT_FAIL;
                goto done;
            }
        }
    }
    if (o.save_requests) {
        mp_buf_reset(&aux);
        if (mp_loadgen_requests_jsonl(res, &aux) || (rc = write_file(o.save_requests, &aux))) {
            exit_code = rc ? rc : EXIT_FAIL;
            goto done;
        }
    }
    if (o.html) {
        mp_buf_reset(&aux);
        if (mp_loadgen_html(res, &m, &o.info, &aux) || (rc = write_file(o.html, &aux))) {
            exit_code = rc ? rc : EXIT_FAIL;
            goto done;
        }
    }
    if (m.completed == 0) {
        fprintf(stderr, "magpie: error: all %zu requests failed\n", m.failed);
        exit_code = EXIT_FAIL;
    } else if (!judged) {
        char ls[48];
        mp_loadgen_fail_limit_format(&o.fail_limit, ls, sizeof(ls));
        fprintf(stderr,
                "magpie: error: %zu of %zu requests failed (%.2f%%), more than "
                "--max-failed-requests %s allows (reasons above)\n",
                fl.failed, fl.total, fl.ratio * 100, ls);
        exit_code = EXIT_FAIL;
    } else if (fl.failed) {
        char ls[48];
        mp_loadgen_fail_limit_format(&o.fail_limit, ls, sizeof(ls));
        fprintf(stderr,
                "magpie: warning: %zu of %zu requests failed (%.2f%%), within "
                "--max-failed-requests %s; metrics cover the %zu successful ones\n",
                fl.failed, fl.total, fl.ratio * 100, ls, m.completed);
    }
done:
    for (int i = 0; i < o.cfg.n_headers; i++)
        if (o.cfg.headers[i] != auth)
            free((void *)o.cfg.headers[i]);
    free(extra);
    mp_buf_fini(&out);
    mp_buf_fini(&aux);
    mp_loadgen_result_free(res);
    mp_loadgen_dataset_free(ds);
    return exit_code;
}
