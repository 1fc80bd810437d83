/* Unit tests for the YAML that the MCP kernel tools write (issue 27): every
 * string goes out as a double-quoted, escaped YAML scalar, so a kernel_id
 * or path holding newlines, quotes, control characters or YAML syntax
 * reads back (through libyaml and the project's own config loader) as the
 * same value under its own key, with no key added; a string that is not
 * UTF-8 is refused, naming its field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <magpie/config.h>
#include <magpie/yaml.h>

#include "mcp/kcfg_int.h"

/* Strings a YAML writer gets wrong when it does not escape them. */
static const char *const nasty[] = {
    "",
    "plain",
    "k\nkernels:\n  - id: evil",
    "line\r\nnext: 1",
    "\"quoted\" and \\back\\slash\\ end",
    "tab\there",
    "\x01\x02\x1b[31m\x1f\x7f",
    "nel\xc2\x85ls\xe2\x80\xa8ps\xe2\x80\xa9",
    "bom\xef\xbb\xbf and \xef\xbf\xbe\xef\xbf\xbf",
    "c1 \xc2\x80\xc2\x9f nbsp\xc2\xa0 e\xcc\x81 \xe4\xb8\xad \xf0\x9f\x98\x80",
    "key: value # comment",
    "- item",
    "&anchor *alias !tag {a: b} [x] | > % @ `",
    "---\n...\n",
    "null",
    "~",
    "true",
    "1e3",
    "  leading and trailing  ",
    "'single' $HOME ${X:-y} $(id)",
};

/* "k: <s as a scalar>\nafter: 1\n" loads back as a two-key map, k = s. */
static void roundtrips(const char *s, size_t n)
{
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_buf_puts(&b, "k: "), 0);
    assert_int_equal(mp_config_yaml_str(&b, s, n), 0);
    assert_null(memchr(b.data + 3, '\n', b.len - 3)); /* one line */
    assert_int_equal(mp_buf_puts(&b, "\nafter: 1\n"), 0);
    struct mp_yaml_doc *doc = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_yaml_load_string(b.data, b.len, "<t>", &doc, &d);
    if (rc)
        fail_msg("%s: %s", mp_buf_cstr(&b), d.msg);
    const struct mp_yaml_node *root = mp_yaml_root(doc);
    assert_int_equal(root->kind, MP_YAML_MAP);
    assert_int_equal(root->n, 2);
    assert_string_equal(root->keys[0]->str, "k");
    assert_string_equal(root->keys[1]->str, "after");
    const struct mp_yaml_node *v = root->vals[0];
    assert_int_equal(v->kind, MP_YAML_SCALAR);
    assert_true(v->quoted);
    assert_int_equal(v->len, n);
    assert_memory_equal(v->str, s, n);
    mp_yaml_free(doc);
    mp_buf_fini(&b);
}

static void test_put_str(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++)
        roundtrips(nasty[i], strlen(nasty[i]));
    roundtrips("nul\0inside", 10);
    /* every single byte that may stand alone in UTF-8 */
    for (int c = 1; c < 0x80; c++) {
        char one[1] = {(char)c};
        roundtrips(one, 1);
    }
    /* not UTF-8: refused, nothing appended */
    static const char *const bad[] = {"\xff",     "a\xc0\x80",        "\xed\xa0\x80",
                                      "\xe2\x80", "\xf4\x90\x80\x80", "\x80"};
    struct mp_buf b;
    mp_buf_init(&b, 0);
    assert_int_equal(mp_buf_puts(&b, "x"), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(mp_config_yaml_str(&b, bad[i], strlen(bad[i])), MP_EINVAL);
        assert_int_equal(b.len, 1);
    }
    mp_buf_fini(&b);
}

/* The config_content of create_kernel_config for these arguments. */
static char *create_config(json_t *raw, int *rc_out)
{
    const struct mcp_tool *t = mcp_tool_find("create_kernel_config");
    assert_non_null(t);
    char err[512];
    json_t *args = mcp_args_decode(t, raw, err, sizeof(err));
    if (!args)
        fail_msg("%s", err);
    json_t *result = NULL;
    *rc_out = t->run(NULL, args, &result);
    json_decref(args);
    assert_non_null(result);
    const char *s =
        json_string_value(json_object_get(result, *rc_out ? "error" : "config_content"));
    assert_non_null(s);
    char *out = mp_strdup(s);
    json_decref(result);
    return out;
}

static void test_create_kernel_config(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "id", "type", "source_files", "working_dir", "testcase_command", "compile_command"};
    for (size_t i = 0; i < sizeof(nasty) / sizeof(nasty[0]); i++) {
        const char *id = nasty[i][0] ? nasty[i] : "empty";
        /* paths that exist nowhere are written as given */
        char path[512], wd[512];
        snprintf(path, sizeof(path), "/nonexistent/%s.cu", nasty[i]);
        snprintf(wd, sizeof(wd), "/nonexistent/%s", nasty[i]);
        const char *tc = nasty[i][0] ? nasty[i] : "true";
        json_t *raw = json_pack("{s:s, s:s, s:s, s:s, s:s}", "kernel_id", id, "kernel_path", path,
                                "testcase_command", tc, "working_dir", wd, "compile_command",
                                nasty[i][0] ? nasty[i] : "make");
        assert_non_null(raw);
        int rc = 0;
        char *yaml = create_config(raw, &rc);
        json_decref(raw);
        if (rc)
            fail_msg("case %zu: %s", i, yaml);

        /* libyaml's view: kernels -> one entry with exactly the keys written */
        struct mp_yaml_doc *doc = NULL;
        struct mp_diag d;
        mp_diag_clear(&d);
        if (mp_yaml_load_string(yaml, strlen(yaml), "<t>", &doc, &d))
            fail_msg("case %zu: %s\n%s", i, d.msg, yaml);
        const struct mp_yaml_node *root = mp_yaml_root(doc);
        assert_int_equal(root->kind, MP_YAML_MAP);
        assert_int_equal(root->n, 1);
        assert_string_equal(root->keys[0]->str, "kernels");
        const struct mp_yaml_node *ks = root->vals[0];
        assert_int_equal(ks->kind, MP_YAML_SEQ);
        assert_int_equal(ks->n, 1);
        const struct mp_yaml_node *e = ks->items[0];
        assert_int_equal(e->kind, MP_YAML_MAP);
        assert_int_equal(e->n, 6);
        for (size_t k = 0; k < 6; k++)
            assert_string_equal(e->keys[k]->str, keys[k]);
        assert_string_equal(e->vals[0]->str, id);
        assert_string_equal(e->vals[1]->str, "hip");
        assert_int_equal(e->vals[2]->kind, MP_YAML_SEQ);
        assert_int_equal(e->vals[2]->n, 1);
        assert_string_equal(e->vals[2]->items[0]->str, path);
        assert_string_equal(e->vals[3]->str, wd);
        assert_string_equal(e->vals[4]->str, tc);
        mp_yaml_free(doc);

        /* the config loader's view: one kernel, that id, no unknown key */
        struct mp_kernel_config cfg;
        mp_kernel_config_init(&cfg);
        mp_diag_clear(&d);
        if (mp_config_load_kernel_string(&cfg, yaml, "<t>", &d))
            fail_msg("case %zu: %s", i, d.msg);
        assert_int_equal(cfg.nkernels, 1);
        assert_string_equal(cfg.kernels[0].id, id);
        assert_int_equal(cfg.nwarnings, 0);
        if (!strchr(nasty[i], '$')) { /* paths have $VAR expanded, as in Magpie */
            assert_int_equal(cfg.kernels[0].nsources, 1);
            assert_string_equal(cfg.kernels[0].sources[0], path);
            assert_string_equal(cfg.kernels[0].working_dir, wd);
        }
        mp_kernel_config_fini(&cfg);
        free(yaml);
    }
}

static void test_header_comment(void **state)
{
    (void)state;
    json_t *raw = json_pack("{s:s, s:s, s:s}", "kernel_id", "vadd_v2", "kernel_path",
                            "/nonexistent/vadd.cu", "testcase_command", "true");
    int rc = 0;
    char *yaml = create_config(raw, &rc);
    json_decref(raw);
    assert_int_equal(rc, 0);
    /* a plain id stays as it was in the header */
    static const char plain[] = "# Kernel configuration for vadd_v2 (magpie create_kernel_config)\n"
                                "# Run: magpie analyze -k <this file>\nkernels:\n";
    assert_true(strncmp(yaml, plain, strlen(plain)) == 0);
    free(yaml);
    /* one that could end the comment's line is quoted there too */
    raw = json_pack("{s:s, s:s, s:s}", "kernel_id", "a\nevil: 1", "kernel_path",
                    "/nonexistent/vadd.cu", "testcase_command", "true");
    yaml = create_config(raw, &rc);
    json_decref(raw);
    assert_int_equal(rc, 0);
    static const char quoted[] = "# Kernel configuration for \"a\\nevil: 1\" (magpie";
    assert_true(strncmp(yaml, quoted, strlen(quoted)) == 0);
    free(yaml);
}

static void test_not_utf8(void **state)
{
    (void)state;
    struct mcp_kentry e;
    memset(&e, 0, sizeof(e));
    e.kernel_id = "k";
    e.kernel_type = "hip";
    e.kernel_path = "/nonexistent/\xff.cu";
    e.working_dir = "/nonexistent";
    struct mp_buf b;
    mp_buf_init(&b, 0);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mcp_kernel_entry_yaml(&e, &b, "  ", &d), MP_EINVAL);
    assert_string_equal(d.field, "kernel_path");
    assert_non_null(strstr(d.msg, "not valid UTF-8"));
    mp_buf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_str),
        cmocka_unit_test(test_create_kernel_config),
        cmocka_unit_test(test_header_comment),
        cmocka_unit_test(test_not_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
