/* Unit tests for the ray module without a Ray cluster: cluster address
 * resolution (auto, RAY_ADDRESS, Jobs API URLs, Magpie's host:6379,
 * ray://, errors naming the value), Magpie's status mapping, TP placement,
 * ray_config from YAML (values and errors with file:line), the job request
 * body and entrypoint, task preparation and staging, finding a task with
 * no record, and an unreachable head reported at once. */
#include <fcntl.h>
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

#include <magpie/ray.h>
#include <magpie/yaml.h>

#include "ray/ray_int.h"

static void resolves(const char *in, const char *want)
{
    char url[600];
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_ray_address_resolve(in, url, sizeof(url), &d);
    if (rc)
        fail_msg("'%s': %s", in, d.msg);
    assert_string_equal(url, want);
}

static void rejects(const char *in)
{
    char url[600];
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_address_resolve(in, url, sizeof(url), &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, in)); /* the message names the value */
    assert_string_equal(d.field, "cluster_address");
}

static void test_address(void **state)
{
    (void)state;
    unsetenv("RAY_ADDRESS");
    unsetenv("MAGPIE_RAY_DASHBOARD_PORT");
    resolves(NULL, "http://127.0.0.1:8265");
    resolves("", "http://127.0.0.1:8265");
    resolves("auto", "http://127.0.0.1:8265");
    resolves("http://head:8265", "http://head:8265");
    resolves("http://head:8265/", "http://head:8265");
    resolves("https://ray.example.com/dash", "https://ray.example.com/dash");
    resolves("10.1.2.3:6379", "http://10.1.2.3:8265");
    resolves("head", "http://head:8265");
    resolves("head:8265", "http://head:8265");
    resolves("ray://head:10001", "http://head:8265");
    resolves("[::1]:6379", "http://[::1]:8265");
    setenv("RAY_ADDRESS", "10.0.0.5:6379", 1);
    resolves("auto", "http://10.0.0.5:8265");
    resolves("http://other:8265", "http://other:8265"); /* an explicit address wins */
    setenv("RAY_ADDRESS", "http://envhead:8265", 1);
    resolves(NULL, "http://envhead:8265");
    setenv("RAY_ADDRESS", "auto", 1);
    resolves("auto", "http://127.0.0.1:8265");
    unsetenv("RAY_ADDRESS");
    setenv("MAGPIE_RAY_DASHBOARD_PORT", "9000", 1);
    resolves("head:6379", "http://head:9000");
    resolves("head:8265", "http://head:8265");
    unsetenv("MAGPIE_RAY_DASHBOARD_PORT");
    rejects("foo://head:1");
    rejects("head:abc");
    rejects("head:0");
    rejects("head:70000");
    rejects("head:");
    rejects("a b:6379");
    rejects("http://");
    rejects("[::1");
    /* a bad RAY_ADDRESS is named as such */
    setenv("RAY_ADDRESS", "bad:port", 1);
    char url[600];
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_address_resolve("auto", url, sizeof(url), &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "bad:port"));
    unsetenv("RAY_ADDRESS");
}

static void test_status(void **state)
{
    (void)state;
    assert_string_equal(mp_ray_status_map("PENDING"), "RUNNING");
    assert_string_equal(mp_ray_status_map("RUNNING"), "RUNNING");
    assert_string_equal(mp_ray_status_map("SUCCEEDED"), "SUCCEEDED");
    assert_string_equal(mp_ray_status_map("FAILED"), "FAILED");
    assert_string_equal(mp_ray_status_map("STOPPED"), "FAILED");
    assert_string_equal(mp_ray_status_map(NULL), "UNKNOWN");
    assert_string_equal(mp_ray_status_map("running"), "UNKNOWN");
    assert_true(mp_ray_status_terminal("STOPPED"));
    assert_true(mp_ray_status_terminal("SUCCEEDED"));
    assert_false(mp_ray_status_terminal("PENDING"));
    assert_false(mp_ray_status_terminal(NULL));
}

static void test_placement(void **state)
{
    (void)state;
    struct mp_ray_placement p;
    mp_ray_tp_placement(MP_SERVE_VLLM, 1, 8, NULL, &p);
    assert_false(p.keep_ray_address);
    assert_string_equal(p.extra_key, "EXTRA_VLLM_ARGS");
    assert_string_equal(p.extra_val, "--distributed-executor-backend mp");
    mp_ray_tp_placement(MP_SERVE_VLLM, 8, 8, "--enforce-eager", &p);
    assert_false(p.keep_ray_address);
    assert_string_equal(p.extra_val, "--enforce-eager --distributed-executor-backend mp");
    mp_ray_tp_placement(MP_SERVE_VLLM, 16, 8, NULL, &p);
    assert_true(p.keep_ray_address);
    assert_int_equal(p.nnodes, 2);
    assert_string_equal(p.extra_val, "--distributed-executor-backend ray");
    /* a flag already given is not added again */
    mp_ray_tp_placement(MP_SERVE_VLLM, 1, 8, "--distributed-executor-backend=ray", &p);
    assert_string_equal(p.extra_val, "--distributed-executor-backend=ray");
    mp_ray_tp_placement(MP_SERVE_SGLANG, 4, 8, "", &p);
    assert_null(p.extra_key);
    assert_false(p.keep_ray_address);
    mp_ray_tp_placement(MP_SERVE_SGLANG, 12, 8, "--mem-fraction-static 0.8", &p);
    assert_true(p.keep_ray_address);
    assert_string_equal(p.extra_key, "EXTRA_SGLANG_ARGS");
    assert_string_equal(p.extra_val, "--mem-fraction-static 0.8 --use-ray --nnodes 2");
    mp_ray_tp_placement(MP_SERVE_SGLANG, 24, 8, "--use-ray", &p);
    assert_string_equal(p.extra_val, "--use-ray --nnodes 3");
    mp_ray_tp_placement(MP_SERVE_ATOM, 16, 8, NULL, &p);
    assert_true(p.warn);
    assert_null(p.extra_key);
    mp_ray_tp_placement(MP_SERVE_VLLM, 9, 0, NULL, &p); /* 0 = 8 GPUs per node */
    assert_true(p.keep_ray_address);
}

static int load_rc(struct mp_ray_config *rc, const char *text, struct mp_diag *d)
{
    struct mp_yaml_doc *doc = NULL;
    int r = mp_yaml_load_string(text, strlen(text), "rc.yaml", &doc, d);
    if (!r)
        r = mp_ray_config_load_node(rc, mp_yaml_get(mp_yaml_root(doc), "ray_config"), d);
    mp_yaml_free(doc);
    return r;
}

static void test_config(void **state)
{
    (void)state;
    struct mp_ray_config rc;
    struct mp_diag d;
    mp_diag_clear(&d);
    mp_ray_config_init(&rc);
    assert_string_equal(rc.cluster_address, "auto");
    assert_string_equal(rc.shared_storage_path, "/shared_nfs/magpie");
    assert_int_equal(rc.gpus_per_node, 8);
    const char *y = "ray_config:\n"
                    "  cluster_address: 10.0.0.1:6379\n"
                    "  shared_storage_path: /nfs/m\n"
                    "  entrypoint_num_gpus: 1\n"
                    "  entrypoint_num_cpus: 2.5\n"
                    "  multi_node: true\n"
                    "  total_num_gpus: 16\n"
                    "  num_nodes: 2\n"
                    "  gpus_per_node: 8\n"
                    "  pip_packages: [numpy, 'pandas>=2']\n"
                    "  env_vars: {HF_TOKEN: x, N: 3}\n"
                    "  metadata: {team: perf}\n"
                    "  entrypoint_resources: {gpu_node: 1}\n"
                    "  magpie_install_path: /opt/magpie/bin/magpie\n";
    assert_int_equal(load_rc(&rc, y, &d), 0);
    assert_string_equal(rc.cluster_address, "10.0.0.1:6379");
    assert_string_equal(rc.shared_storage_path, "/nfs/m");
    assert_true(rc.entrypoint_num_gpus == 1 && rc.entrypoint_num_cpus == 2.5);
    assert_true(rc.multi_node);
    assert_int_equal(rc.total_num_gpus, 16);
    assert_int_equal(rc.n_pip, 2);
    assert_string_equal(rc.pip_packages[1], "pandas>=2");
    assert_string_equal(mp_ray_config_getenv(&rc, "N"), "3");
    assert_string_equal(rc.metadata[0], "team=perf");
    assert_string_equal(rc.resources[0], "gpu_node=1");
    assert_string_equal(rc.magpie_path, "/opt/magpie/bin/magpie");

    struct mp_ray_task t;
    memset(&t, 0, sizeof(t));
    strcpy(t.task_id, "0123abcd");
    strcpy(t.submission_id, "magpie-0123abcd");
    strcpy(t.mode, "benchmark");
    strcpy(t.dir, "/nfs/m/results/0123abcd");
    json_t *b = ray_job_body(&rc, &t, "echo hi");
    assert_string_equal(json_string_value(json_object_get(b, "submission_id")), "magpie-0123abcd");
    json_t *renv = json_object_get(b, "runtime_env");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(renv, "env_vars"), "HF_TOKEN")), "x");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(renv, "env_vars"), "MAGPIE_TASK_ID")),
        "0123abcd");
    assert_int_equal(json_array_size(json_object_get(renv, "pip")), 2);
    json_t *meta = json_object_get(b, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "team")), "perf");
    assert_string_equal(json_string_value(json_object_get(meta, "magpie_task_id")), "0123abcd");
    assert_true(json_number_value(json_object_get(b, "entrypoint_num_cpus")) == 2.5);
    assert_true(json_number_value(
                    json_object_get(json_object_get(b, "entrypoint_resources"), "gpu_node")) == 1);
    json_decref(b);

    /* the entrypoint: quoted words, RAY_ADDRESS dropped unless kept */
    strcpy(t.dir, "/nfs/my results/0123abcd");
    struct mp_buf ep;
    mp_buf_init(&ep, 0);
    const char *args[] = {"benchmark", "-b", "a b.yaml", NULL};
    assert_int_equal(ray_entrypoint(&rc, &t, args, false, &ep), 0);
    assert_non_null(strstr(mp_buf_cstr(&ep),
                           "cd '/nfs/my results/0123abcd/inputs' && { env -u "
                           "RAY_ADDRESS /opt/magpie/bin/magpie benchmark -b "
                           "'a b.yaml' 2>>'/nfs/my results/0123abcd/stderr.log'"));
    assert_non_null(strstr(mp_buf_cstr(&ep), "| tee '/nfs/my results/0123abcd/output.txt'"));
    mp_buf_reset(&ep);
    assert_int_equal(ray_entrypoint(&rc, &t, args, true, &ep), 0);
    assert_null(strstr(mp_buf_cstr(&ep), "RAY_ADDRESS"));
    mp_buf_fini(&ep);
    mp_ray_config_fini(&rc);

    /* errors name the file, line and key */
    mp_ray_config_init(&rc);
    mp_diag_clear(&d);
    assert_int_equal(load_rc(&rc, "ray_config:\n  entrypoint_num_cpus: -1\n", &d), MP_EINVAL);
    assert_int_equal(d.line, 2);
    assert_string_equal(d.field, "entrypoint_num_cpus");
    mp_diag_clear(&d);
    assert_int_equal(load_rc(&rc, "ray_config:\n  env_vars: [a, b]\n", &d), MP_EINVAL);
    assert_string_equal(d.field, "env_vars");
    mp_diag_clear(&d);
    assert_int_equal(load_rc(&rc, "ray_config:\n  cluster_address: 'x y'\n", &d), MP_EINVAL);
    assert_non_null(strstr(d.msg, "'x y'"));
    mp_diag_clear(&d);
    assert_int_equal(load_rc(&rc, "ray_config: [1]\n", &d), MP_EINVAL);
    mp_ray_config_fini(&rc);
}

static void test_task_files(void **state)
{
    (void)state;
    char tmp[] = "/tmp/mp_ray_unit.XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char state_dir[600];
    snprintf(state_dir, sizeof(state_dir), "%s/state", tmp);
    setenv("MAGPIE_RAY_STATE_DIR", state_dir, 1);
    unsetenv("RAY_ADDRESS");
    struct mp_ray_config rc;
    mp_ray_config_init(&rc);
    rc.shared_storage_path = tmp;
    struct mp_ray_task t;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_task_prepare(&rc, "run", "x", &t, &d), 0);
    assert_int_equal(strlen(t.task_id), 8);
    char want[sizeof(t.dir) + 1300];
    snprintf(want, sizeof(want), "%s/results/%s", tmp, t.task_id);
    assert_string_equal(t.dir, want);
    assert_string_equal(t.address, "http://127.0.0.1:8265");
    snprintf(want, sizeof(want), "magpie-%s", t.task_id);
    assert_string_equal(t.submission_id, want);
    /* a relative file keeps its relative path under inputs/ */
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(tmp), 0);
    assert_int_equal(mp_fs_mkdirs("sub", &d), 0);
    assert_int_equal(mp_fs_write_atomic("sub/k.cl", "kernel", 6, &d), 0);
    char *wp = NULL;
    assert_int_equal(mp_ray_task_stage(&t, "./sub/k.cl", &wp, &d), 0);
    assert_string_equal(wp, "sub/k.cl");
    free(wp);
    snprintf(want, sizeof(want), "%s/inputs/sub/k.cl", t.dir);
    assert_true(mp_fs_exists(want));
    /* an absolute one goes under inputs/abs/ */
    char abs[1200];
    snprintf(abs, sizeof(abs), "%s/sub/k.cl", tmp);
    assert_int_equal(mp_ray_task_stage(&t, abs, &wp, &d), 0);
    snprintf(want, sizeof(want), "%s/inputs/abs%s", t.dir, abs);
    assert_string_equal(wp, want);
    free(wp);
    assert_int_equal(mp_ray_task_stage(&t, "missing.cl", &wp, &d), MP_ENOTFOUND);
    assert_int_equal(chdir(cwd), 0);

    /* no record: the id is taken as magpie-<id> at the given address */
    struct mp_ray_task f;
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_task_find("deadbeef", "h:6379", tmp, &f, &d), 0);
    assert_string_equal(f.submission_id, "magpie-deadbeef");
    assert_string_equal(f.address, "http://h:8265");
    assert_int_equal(mp_ray_task_find("raysubmit_abc", NULL, tmp, &f, &d), 0);
    assert_string_equal(f.submission_id, "raysubmit_abc");
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_task_find("../etc", NULL, tmp, &f, &d), MP_EINVAL);
    mp_ray_config_fini(&rc);
    unsetenv("MAGPIE_RAY_STATE_DIR");
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
}

static void test_unreachable(void **state)
{
    (void)state;
    /* port 1 on loopback: nothing listens; the answer comes at once */
    struct mp_ray_client *c = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_ray_client_new("http://127.0.0.1:1", 2, 5, &c, &d), 0);
    assert_int_equal(mp_ray_ping(c, NULL, &d), MP_EIO);
    assert_non_null(strstr(d.msg, "not reachable at http://127.0.0.1:1"));
    mp_ray_client_free(c);
    mp_diag_clear(&d);
    char *json = NULL;
    setenv("MAGPIE_RAY_DASHBOARD_PORT", "1", 1); /* host:6379 -> http://host:1 */
    assert_int_equal(mp_ray_task_status("0123abcd", "127.0.0.1:6379", "/nonexistent", &json, &d),
                     MP_EIO);
    unsetenv("MAGPIE_RAY_DASHBOARD_PORT");
    assert_null(json);
    assert_non_null(strstr(d.msg, "at http://127.0.0.1:1 (cluster address '127.0.0.1:6379')"));
}

/* Runs `shell [opt] file` with its output dropped; the exit status, or -1. */
static int run_shell(const char *shell, const char *opt, const char *file)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (opt)
            execlp(shell, shell, opt, file, (char *)NULL);
        else
            execlp(shell, shell, file, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    int rc = mp_buf_read_file(&b, f);
    fclose(f);
    char *s = rc ? NULL : mp_strdup(mp_buf_cstr(&b));
    mp_buf_fini(&b);
    return s;
}

/* issue 27: the entrypoint of a task whose directory is over 3000 bytes of
 * quotes, $, backticks, spaces and newlines is one valid shell line, and
 * running it reaches that directory (cd, the logs, tee) and hands the path
 * to magpie unchanged. */
static void test_entrypoint_any_path(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/mp_ray_ep.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *root = realpath(tmpl, NULL);
    assert_non_null(root);
    struct mp_buf dir;
    mp_buf_init(&dir, 0);
    assert_int_equal(mp_buf_puts(&dir, root), 0);
    /* one component, well under NAME_MAX; the same characters repeated */
    static const char part[] = "/a 'q' \"dq\" $HOME `id` $(id) \\ *?[x] ;|&<>#~\n"
                               "l2\t'\"'\"'x' ${X:-y} !1 %s -n --x=$'\\n'";
    int depth = 0;
    while (dir.len < 3000) {
        assert_int_equal(mp_buf_printf(&dir, "%s%d", part, depth++), 0);
        assert_int_equal(mkdir(mp_buf_cstr(&dir), 0700), 0);
    }
    struct mp_buf sub;
    mp_buf_init(&sub, 0);
    assert_int_equal(mp_buf_printf(&sub, "%s/inputs", mp_buf_cstr(&dir)), 0);
    assert_int_equal(mkdir(mp_buf_cstr(&sub), 0700), 0);

    struct mp_ray_config rc;
    mp_ray_config_init(&rc);
    rc.magpie_path = mp_ray_config_strdup(&rc, "sh");
    struct mp_ray_task t;
    memset(&t, 0, sizeof(t));
    assert_true(dir.len >= 3000 && dir.len < sizeof(t.dir));
    memcpy(t.dir, mp_buf_cstr(&dir), dir.len + 1);
    /* "magpie" is sh printing its working directory and its argument */
    const char *args[] = {"-c", "pwd -P; printf %s \"$1\"", "sh", t.dir, NULL};
    struct mp_buf ep;
    mp_buf_init(&ep, 0);
    assert_int_equal(ray_entrypoint(&rc, &t, args, false, &ep), 0);
    char script[64];
    snprintf(script, sizeof(script), "%s.sh", tmpl);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_write_atomic(script, mp_buf_cstr(&ep), ep.len, &d), 0);
    assert_int_equal(run_shell("bash", "-n", script), 0);
    assert_int_equal(run_shell("sh", "-n", script), 0); /* Ray runs it with /bin/sh */
    assert_int_equal(run_shell("bash", NULL, script), 0);

    struct mp_buf want, f;
    mp_buf_init(&want, 0);
    mp_buf_init(&f, 0);
    assert_int_equal(mp_buf_printf(&want, "%s\n%s", mp_buf_cstr(&sub), t.dir), 0);
    assert_int_equal(mp_buf_printf(&f, "%s/output.txt", t.dir), 0);
    char *got = slurp(mp_buf_cstr(&f));
    assert_non_null(got);
    assert_string_equal(got, mp_buf_cstr(&want));
    free(got);
    mp_buf_reset(&f);
    assert_int_equal(mp_buf_printf(&f, "%s/exit_code", t.dir), 0);
    got = slurp(mp_buf_cstr(&f));
    assert_non_null(got);
    assert_string_equal(got, "0\n");
    free(got);
    mp_buf_reset(&f);
    assert_int_equal(mp_buf_printf(&f, "%s/stderr.log", t.dir), 0);
    got = slurp(mp_buf_cstr(&f));
    assert_non_null(got);
    assert_string_equal(got, "");
    free(got);

    mp_buf_fini(&f);
    mp_buf_fini(&want);
    mp_buf_fini(&ep);
    mp_buf_fini(&sub);
    mp_buf_fini(&dir);
    mp_ray_config_fini(&rc);
    unlink(script);
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root); /* mkdtemp's name: no quote in it */
    assert_int_equal(system(cmd), 0);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_address),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_task_files),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_entrypoint_any_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
