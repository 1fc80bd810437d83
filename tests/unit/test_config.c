/* Unit tests for the YAML node tree (fmt/yaml.c) and the kernel configs
 * built on it (config/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <magpie/yaml.h>

static struct mp_yaml_doc *load(const char *text)
{
    struct mp_yaml_doc *doc = NULL;
    struct mp_diag d;
    mp_diag_clear(&d);
    int rc = mp_yaml_load_string(text, strlen(text), "t.yaml", &doc, &d);
    if (rc)
        fprintf(stderr, "load failed: %s at %ld:%ld\n", d.msg, d.line, d.col);
    assert_int_equal(rc, 0);
    return doc;
}

static void test_yaml_tree(void **state)
{
    (void)state;
    struct mp_yaml_doc *doc = load("a: 1\n"
                                   "b:\n"
                                   "  - x\n"
                                   "  - 'y z'\n"
                                   "  - [1, 2]\n"
                                   "c: {d: true, e: 2.5, f: ~, g: \"null\"}\n"
                                   "h: &anc\n"
                                   "  k: v\n"
                                   "i: *anc\n"
                                   "a: 0x10\n");
    const struct mp_yaml_node *r = mp_yaml_root(doc);
    assert_int_equal(r->kind, MP_YAML_MAP);
    long long iv = 0;
    assert_int_equal(mp_yaml_int(mp_yaml_get(r, "a"), "a", &iv, NULL), 0);
    assert_int_equal(iv, 16); /* last duplicate wins */
    const struct mp_yaml_node *b = mp_yaml_get(r, "b");
    assert_int_equal(b->kind, MP_YAML_SEQ);
    assert_int_equal(b->n, 3);
    assert_string_equal(b->items[1]->str, "y z");
    assert_true(b->items[1]->quoted);
    assert_int_equal(b->items[2]->kind, MP_YAML_SEQ);
    assert_int_equal(b->line, 3);
    assert_int_equal(b->col, 3);
    const struct mp_yaml_node *c = mp_yaml_get(r, "c");
    bool bv = false;
    assert_int_equal(mp_yaml_bool(mp_yaml_get(c, "d"), "d", &bv, NULL), 0);
    assert_true(bv);
    double dv = 0;
    assert_int_equal(mp_yaml_double(mp_yaml_get(c, "e"), "e", &dv, NULL), 0);
    assert_true(dv == 2.5);
    assert_true(mp_yaml_is_null(mp_yaml_get(c, "f")));
    assert_false(mp_yaml_is_null(mp_yaml_get(c, "g")));
    assert_true(mp_yaml_is_null(mp_yaml_get(c, "missing")));
    const struct mp_yaml_node *i = mp_yaml_get(r, "i");
    assert_ptr_equal(i, mp_yaml_get(r, "h"));
    assert_string_equal(mp_yaml_get(i, "k")->str, "v");
    mp_yaml_free(doc);

    /* many items: child arrays grow */
    char big[4096] = "l:\n";
    for (int k = 0; k < 100; k++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), "  - %d\n", k);
    doc = load(big);
    const struct mp_yaml_node *l = mp_yaml_get(mp_yaml_root(doc), "l");
    assert_int_equal(l->n, 100);
    assert_int_equal(mp_yaml_int(l->items[99], NULL, &iv, NULL), 0);
    assert_int_equal(iv, 99);
    mp_yaml_free(doc);
}

static void test_yaml_errors(void **state)
{
    (void)state;
    struct mp_yaml_doc *doc = load("x:\n  n: abc\n  q: '5'\n");
    struct mp_diag d;
    mp_diag_clear(&d);
    const struct mp_yaml_node *x = mp_yaml_get(mp_yaml_root(doc), "x");
    long long v;
    assert_int_equal(mp_yaml_int(mp_yaml_get(x, "n"), "x.n", &v, &d), MP_EINVAL);
    assert_string_equal(d.file, "t.yaml");
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 6);
    assert_string_equal(d.field, "x.n");
    assert_non_null(strstr(d.msg, "integer"));
    mp_diag_clear(&d);
    assert_int_equal(mp_yaml_int(mp_yaml_get(x, "q"), "x.q", &v, &d), MP_EINVAL);
    mp_yaml_free(doc);

    mp_diag_clear(&d);
    doc = NULL;
    const char *bad = "a: [1, 2\nb: 3\n";
    assert_int_equal(mp_yaml_load_string(bad, strlen(bad), "bad.yaml", &doc, &d), MP_EPARSE);
    assert_null(doc);
    assert_string_equal(d.file, "bad.yaml");
    assert_true(d.line >= 1);

    doc = load("");
    assert_int_equal(mp_yaml_root(doc)->kind, MP_YAML_NULL);
    mp_yaml_free(doc);

    mp_diag_clear(&d);
    assert_int_equal(mp_yaml_load_file("/nonexistent/x.yaml", &doc, &d), MP_EIO);
    assert_string_equal(d.file, "/nonexistent/x.yaml");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_tree),
        cmocka_unit_test(test_yaml_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
