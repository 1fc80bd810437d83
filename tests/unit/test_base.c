/* Unit tests for src/base and src/fmt: diag, buf, array growth, arena,
 * interner, atomic writes, CSV quoting and Python-style float text. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <magpie/base.h>
#include <magpie/fmt.h>

static void test_diag_first_error_wins(void **state)
{
    (void)state;
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(d.offset, -1);
    assert_int_equal(mp_diag_set(&d, MP_EPARSE, "bad %s", "thing"), MP_EPARSE);
    mp_diag_set(&d, MP_EIO, "later");
    mp_diag_set_file(&d, "t.json");
    mp_diag_set_pos(&d, 42, 3, 7);
    mp_diag_set_field(&d, "ts");
    char buf[256];
    mp_diag_format(&d, buf, sizeof(buf));
    assert_string_equal(buf, "t.json:3:7: byte offset 42: field 'ts': bad thing");
    assert_int_equal(d.code, MP_EPARSE);
    /* NULL diag is allowed everywhere */
    assert_int_equal(mp_diag_set(NULL, MP_EIO, "x"), MP_EIO);
}

static void test_buf_limits(void **state)
{
    (void)state;
    struct mp_buf b;
    mp_buf_init(&b, 16);
    assert_string_equal(mp_buf_cstr(&b), "");
    assert_int_equal(mp_buf_puts(&b, "0123456789"), 0);
    assert_int_equal(mp_buf_printf(&b, "%d", 12345), 0);
    assert_string_equal(mp_buf_cstr(&b), "012345678912345");
    /* the hard maximum includes the terminating NUL */
    assert_int_equal(mp_buf_putc(&b, 'x'), MP_ENOMEM);
    assert_int_equal(b.len, 15);
    mp_buf_reset(&b);
    assert_int_equal(b.len, 0);
    /* 0 bytes from NULL (an empty buffer's data), with and without room:
     * no copy (UBSan would abort on memcpy from NULL) */
    struct mp_buf empty;
    mp_buf_init(&empty, 0);
    assert_int_equal(mp_buf_append(&b, empty.data, empty.len), 0);
    assert_int_equal(mp_buf_append(&empty, NULL, 0), 0);
    assert_int_equal(b.len, 0);
    assert_string_equal(mp_buf_cstr(&empty), "");
    mp_buf_fini(&empty);
    mp_buf_fini(&b);
}

static void test_size_mul(void **state)
{
    (void)state;
    size_t out = 7;
    assert_int_equal(mp_size_mul(0, SIZE_MAX, &out), 0);
    assert_true(out == 0);
    assert_int_equal(mp_size_mul(SIZE_MAX, 0, &out), 0);
    assert_true(out == 0);
    assert_int_equal(mp_size_mul(SIZE_MAX, 1, &out), 0);
    assert_true(out == SIZE_MAX);
    assert_int_equal(mp_size_mul(SIZE_MAX / 2, 2, &out), 0);
    assert_true(out == SIZE_MAX - 1);
    out = 7;
    assert_int_equal(mp_size_mul(SIZE_MAX / 2 + 1, 2, &out), MP_ENOMEM);
    assert_int_equal(mp_size_mul(SIZE_MAX, SIZE_MAX, &out), MP_ENOMEM);
    assert_int_equal(
        mp_size_mul((size_t)1 << (sizeof(size_t) * 4), (size_t)1 << (sizeof(size_t) * 4), &out),
        MP_ENOMEM);
    assert_true(out == 7); /* untouched on overflow */
    assert_int_equal(mp_size_mul(3, 5, &out), 0);
    assert_true(out == 15);
    char *p = mp_reallocarray(NULL, 3, 5);
    assert_non_null(p);
    memset(p, 'x', 15);
    assert_null(mp_reallocarray(p, SIZE_MAX / 4, 8)); /* p untouched */
    assert_int_equal(p[14], 'x');
    char *q = mp_reallocarray(p, 0, 8);
    assert_non_null(q);
    free(q);
}

static void test_grow(void **state)
{
    (void)state;
    int32_t *v = NULL;
    size_t cap = 0;
    /* need 0: nothing allocated */
    assert_int_equal(mp_grow(&v, &cap, 0, sizeof(*v), 16), 0);
    assert_null(v);
    assert_true(cap == 0);
    /* first growth takes min_cap */
    assert_int_equal(MP_GROW(v, cap, 1, 16), 0);
    assert_non_null(v);
    assert_true(cap == 16);
    for (int i = 0; i < 16; i++)
        v[i] = i;
    /* exactly full: no change */
    int32_t *before = v;
    assert_int_equal(MP_GROW(v, cap, 16, 16), 0);
    assert_true(v == before && cap == 16);
    /* one past: doubles, contents kept */
    assert_int_equal(MP_GROW(v, cap, 17, 16), 0);
    assert_true(cap == 32);
    for (int i = 0; i < 16; i++)
        assert_int_equal(v[i], i);
    /* a big jump doubles until it fits */
    assert_int_equal(MP_GROW(v, cap, 100, 16), 0);
    assert_true(cap == 128);
    /* first growth past min_cap */
    char *c = NULL;
    size_t ccap = 0;
    assert_int_equal(MP_GROW(c, ccap, 9, 4), 0);
    assert_true(ccap == 16);
    /* min_cap 0 counts as 1 */
    free(c);
    c = NULL;
    ccap = 0;
    assert_int_equal(MP_GROW(c, ccap, 3, 0), 0);
    assert_true(ccap == 4);
    free(c);
    /* overflow of the doubling and of cap * elem: MP_ENOMEM, nothing changed */
    size_t big = SIZE_MAX / 2 + 1;
    assert_int_equal(mp_grow(&v, &cap, SIZE_MAX, sizeof(*v), 16), MP_ENOMEM);
    assert_true(v != NULL && cap == 128);
    assert_int_equal(mp_grow(&v, &big, SIZE_MAX, 1, 16), MP_ENOMEM);
    assert_true(big == SIZE_MAX / 2 + 1);
    assert_int_equal(MP_GROW(v, cap, SIZE_MAX / sizeof(*v) + 1, 16), MP_ENOMEM);
    assert_true(cap == 128);
    assert_int_equal(v[15], 15);
    free(v);
}

/* MP_GROW2: two arrays of different element sizes grow to one capacity by
 * MP_GROW's doubling; on overflow cap and both blocks stay as they were. */
static void test_grow2(void **state)
{
    (void)state;
    double *a = NULL;
    uint8_t *b = NULL;
    size_t cap = 0;
    assert_int_equal(mp_grow2(&a, sizeof(*a), &b, sizeof(*b), &cap, 0, 8), 0);
    assert_true(a == NULL && b == NULL && cap == 0);
    assert_int_equal(MP_GROW2(a, b, cap, 5, 8), 0);
    assert_true(a != NULL && b != NULL && cap == 8);
    for (int i = 0; i < 8; i++) {
        a[i] = i * 0.5;
        b[i] = (uint8_t)i;
    }
    assert_int_equal(MP_GROW2(a, b, cap, 8, 8), 0);
    assert_true(cap == 8);
    assert_int_equal(MP_GROW2(a, b, cap, 33, 8), 0);
    assert_true(cap == 64);
    for (int i = 0; i < 8; i++)
        assert_true(a[i] == i * 0.5 && b[i] == (uint8_t)i);
    assert_int_equal(MP_GROW2(a, b, cap, SIZE_MAX / sizeof(*a) + 1, 8), MP_ENOMEM);
    assert_true(cap == 64 && a[7] == 3.5 && b[7] == 7);
    free(a);
    free(b);
}

static void test_str_ends_with(void **state)
{
    (void)state;
    assert_true(mp_str_ends_with("trace.json.gz", ".json.gz"));
    assert_true(mp_str_ends_with("trace.json", ".json"));
    assert_false(mp_str_ends_with("trace.json.gz", ".json"));
    assert_false(mp_str_ends_with("json", ".json"));
    assert_true(mp_str_ends_with(".json", ".json"));
    assert_true(mp_str_ends_with("x", ""));
    assert_true(mp_str_ends_with("", ""));
    assert_false(mp_str_ends_with("", "x"));
}

static void test_arena_and_intern(void **state)
{
    (void)state;
    struct mp_arena *a = mp_arena_new(64);
    char *big = mp_arena_alloc(a, 1000); /* larger than a block */
    memset(big, 'x', 1000);
    char *s = mp_arena_strndup(a, "hello", 5);
    assert_string_equal(s, "hello");
    assert_true(((uintptr_t)mp_arena_alloc(a, 3) & 7u) == 0);
    mp_arena_free(a);
    mp_arena_free(NULL);

    struct mp_intern *in = mp_intern_new();
    int32_t ids[5000];
    char tmp[32];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(tmp, sizeof(tmp), "name-%d", i);
        ids[i] = mp_intern_add(in, tmp, (size_t)n);
        assert_int_equal(ids[i], i);
    }
    for (int i = 0; i < 5000; i += 7) {
        int n = snprintf(tmp, sizeof(tmp), "name-%d", i);
        assert_int_equal(mp_intern_add(in, tmp, (size_t)n), ids[i]);
        assert_int_equal(mp_intern_find(in, tmp, (size_t)n), ids[i]);
        assert_string_equal(mp_intern_str(in, ids[i]), tmp);
    }
    assert_int_equal(mp_intern_find(in, "absent", 6), -1);
    /* embedded NUL and empty strings are distinct keys */
    int32_t e = mp_intern_add(in, "", 0);
    int32_t z = mp_intern_add(in, "a\0b", 3);
    assert_true(e != z);
    assert_int_equal(mp_intern_len(in, z), 3);
    assert_int_equal(mp_intern_count(in), 5002);
    mp_intern_free(in);
}

static size_t read_small(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return SIZE_MAX;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return n;
}

static size_t count_entries(const char *dir)
{
    DIR *dd = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; dd && (e = readdir(dd)) != NULL;)
        n += e->d_name[0] != '.';
    if (dd)
        closedir(dd);
    return n;
}

/* Staged writes: a committed path holds the commit's bytes (the staged copy
 * when equal, a fresh write when the data changed after staging or was never
 * staged); uncommitted paths leave nothing behind, not even a temporary. */
static void test_fs_stage(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_stage_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[300], b[300], c[300], u[300], got[64];
    snprintf(a, sizeof(a), "%s/a.csv", dir);
    snprintf(b, sizeof(b), "%s/b.csv", dir);
    snprintf(c, sizeof(c), "%s/c.csv", dir);
    snprintf(u, sizeof(u), "%s/u.csv", dir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_write_atomic(u, "kept", 4, &d), 0);
    struct mp_fs_stage *st = mp_fs_stage_new();
    assert_non_null(st);
    assert_int_equal(mp_fs_stage_put(st, a, "alpha", 5), 0);
    assert_int_equal(mp_fs_stage_put(st, b, "beta", 4), 0);
    assert_int_equal(mp_fs_stage_put(st, u, "replaced", 8), 0); /* never committed */
    assert_int_equal(mp_fs_stage_put(st, c, "", 0), 0);
    assert_int_equal(mp_fs_stage_commit(st, a, "alpha", 5, &d), 0);
    assert_int_equal(mp_fs_stage_commit(st, b, "BETA!", 5, &d), 0); /* changed since */
    assert_int_equal(mp_fs_stage_commit(st, c, "", 0, &d), 0);
    char never[300];
    snprintf(never, sizeof(never), "%s/n.csv", dir);
    assert_int_equal(mp_fs_stage_commit(st, never, "n", 1, &d), 0); /* not staged */
    mp_fs_stage_free(st);
    assert_int_equal(read_small(a, got, sizeof(got)), 5);
    assert_string_equal(got, "alpha");
    assert_int_equal(read_small(b, got, sizeof(got)), 5);
    assert_string_equal(got, "BETA!");
    assert_int_equal(read_small(c, got, sizeof(got)), 0);
    assert_int_equal(read_small(never, got, sizeof(got)), 1);
    assert_int_equal(read_small(u, got, sizeof(got)), 4);
    assert_string_equal(got, "kept");
    assert_int_equal(count_entries(dir), 5); /* a b c n u: no temporary left */
    /* freed with nothing committed: nothing written at all */
    st = mp_fs_stage_new();
    assert_non_null(st);
    char z[300];
    snprintf(z, sizeof(z), "%s/z.csv", dir);
    assert_int_equal(mp_fs_stage_put(st, z, "zz", 2), 0);
    mp_fs_stage_free(st);
    assert_false(mp_fs_exists(z));
    assert_int_equal(count_entries(dir), 5);
    mp_fs_stage_free(NULL);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_fs_join(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"a", "b", "a/b"}, {"a/", "b", "a/b"}, {"", "b", "b"}, {"a", "", "a"}, {"/", "x", "/x"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *j = mp_fs_join(cases[i][0], cases[i][1]);
        assert_non_null(j);
        assert_string_equal(j, cases[i][2]);
        free(j);
    }
    char *j = mp_fs_join("dir", NULL);
    assert_string_equal(j, "dir");
    free(j);
}

static void test_atomic_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/mp_base_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[256], path[300];
    snprintf(sub, sizeof(sub), "%s/a/b/c", dir);
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_mkdirs(sub, &d), 0);
    assert_true(mp_fs_is_dir(sub));
    snprintf(path, sizeof(path), "%s/out.csv", sub);
    assert_int_equal(mp_fs_write_atomic(path, "old", 3, &d), 0);
    assert_int_equal(mp_fs_write_atomic(path, "new!", 4, &d), 0);
    FILE *f = fopen(path, "r");
    char got[16] = {0};
    assert_int_equal(fread(got, 1, sizeof(got) - 1, f), 4);
    fclose(f);
    assert_string_equal(got, "new!");
    /* a path inside a missing directory fails without touching anything */
    char bad[320];
    snprintf(bad, sizeof(bad), "%s/missing/x.csv", dir);
    mp_diag_clear(&d);
    assert_int_equal(mp_fs_write_atomic(bad, "x", 1, &d), MP_EIO);
    assert_string_equal(d.file, bad);
    assert_false(mp_fs_exists(bad));
    unlink(path);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_csv_python_quoting(void **state)
{
    (void)state;
    struct mp_buf b;
    mp_buf_init(&b, 0);
    struct mp_csv c;
    mp_csv_init(&c, &b, "\r\n");
    mp_csv_str(&c, "plain");
    mp_csv_str(&c, "a,b");
    mp_csv_str(&c, "say \"hi\"");
    mp_csv_str(&c, "two\nlines");
    mp_csv_str(&c, "");
    mp_csv_end_row(&c);
    assert_string_equal(mp_buf_cstr(&b), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\r\n");
    mp_buf_fini(&b);
}

static void test_pyfloat(void **state)
{
    (void)state;

    static const struct {
        double v;
        const char *s;
    } cases[] = {
        {0.1, "0.1"},
        {1.0, "1.0"},
        {100.0, "100.0"},
        {1e-06, "1e-06"},
        {1e16, "1e+16"},
        {123456789012345.6, "123456789012345.6"},
        {-2.5, "-2.5"},
        {0.0001, "0.0001"},
        {84.4844258626302, "84.4844258626302"},
        {1.5e300, "1.5e+300"},
        {0.0, "0.0"},
        /* the fixed-point fast path and its edges (Python's repr) */
        {229.594, "229.594"},
        {229.59400000000008, "229.59400000000008"},
        {999999999999999.9, "999999999999999.9"},
        {999999999999999.0, "999999999999999.0"},
        {1e15, "1000000000000000.0"},
        {9.999999999999999e-05, "9.999999999999999e-05"},
        {1.0 / 3.0, "0.3333333333333333"},
        {-1234.5, "-1234.5"},
        {0.30000000000000004, "0.30000000000000004"},
    };

    char buf[64];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mp_fmt_pyfloat(cases[i].v, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].s);
    }
    struct mp_buf b;
    mp_buf_init(&b, 0);
    mp_json_str(&b, "a\"b\\c\n\x01", 7);
    assert_string_equal(mp_buf_cstr(&b), "\"a\\\"b\\\\c\\n\\u0001\"");
    /* json.dumps("µs \x7f 😀 \xff") with ensure_ascii (an invalid byte as U+FFFD) */
    mp_buf_reset(&b);
    const char *u = "\xc2\xb5s \x7f \xf0\x9f\x98\x80 \xff";
    mp_json_str_ascii(&b, u, strlen(u));
    assert_string_equal(mp_buf_cstr(&b), "\"\\u00b5s \\u007f \\ud83d\\ude00 \\ufffd\"");
    mp_buf_fini(&b);
}

/* The digits and exponent of Python's repr, found the slow way: the
 * correctly rounded decimal of 1 to 17 digits that first reads back. */
static int slow_shortest(double v, char *digits)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
        if (strtod(buf, NULL) == v || p == 17)
            break;
    }
    const char *q = buf + (buf[0] == '-');
    size_t n = 0;
    for (; *q && *q != 'e'; q++)
        if (*q != '.')
            digits[n++] = *q;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return atoi(q + 1);
}

/* The same read back from a repr: its significant digits and the decimal
 * exponent of the first one. */
static int repr_digits(const char *s, char *digits)
{
    const char *p = s + (*s == '-'), *x = strchr(p, 'e'), *end = x ? x : p + strlen(p);
    char all[64];
    int na = 0, dot = -1;
    for (const char *q = p; q < end; q++) {
        if (*q == '.')
            dot = na;
        else
            all[na++] = *q;
    }
    if (dot < 0)
        dot = na;
    int i = 0;
    while (i < na - 1 && all[i] == '0')
        i++;
    int e = dot - i - 1 + (x ? atoi(x + 1) : 0), n = 0;
    for (; i < na; i++)
        digits[n++] = all[i];
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return e;
}

/* mp_sort_rec16 against qsort by (key, original position), for both key
 * kinds, on keys with many ties, negative values, the int64 extremes and
 * spreads that make some digits common to all keys (skipped passes). */
struct rec16 {
    union {
        double d;
        int64_t i;
    } k;

    int64_t pos;
};

static int cmp_rec16_f64(const void *a, const void *b)
{
    const struct rec16 *x = a, *y = b;
    if (x->k.d != y->k.d)
        return x->k.d < y->k.d ? -1 : 1;
    if (signbit(x->k.d) != signbit(y->k.d)) /* -0.0 before +0.0 */
        return signbit(x->k.d) ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

static int cmp_rec16_i64(const void *a, const void *b)
{
    const struct rec16 *x = a, *y = b;
    if (x->k.i != y->k.i)
        return x->k.i < y->k.i ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

static void test_sort_rec16(void **state)
{
    (void)state;

    enum { N = 20000 };
    struct rec16 *v = malloc(N * sizeof(*v)), *want = malloc(N * sizeof(*v));
    assert_non_null(v);
    assert_non_null(want);
    uint64_t rng = 12345;
    for (int kind = 0; kind < 2; kind++) {
        for (int spread = 0; spread < 4; spread++) {
            size_t n = spread == 3 ? 2 : N;
            for (size_t i = 0; i < n; i++) {
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                uint64_t r = rng >> 16;
                v[i].pos = (int64_t)i;
                if (kind == 0) {
                    static const double small[] = {-0.0, 0.0, 1.5, -1.5, 1e300, -1e-300};
                    v[i].k.d = spread == 0   ? (double)(r % 1000) - 500.0 /* ties */
                               : spread == 1 ? 5152402429458.044 + (double)(r % 100000) * 0.001
                                             : small[r % 6];
                } else {
                    static const int64_t edge[] = {INT64_MIN, INT64_MAX, -1, 0, 1};
                    v[i].k.i = spread == 0   ? (int64_t)(r % 1000) - 500
                               : spread == 1 ? (int64_t)(r << 20) /* full range, both signs */
                                             : edge[r % 5];
                }
            }
            memcpy(want, v, n * sizeof(*v));
            qsort(want, n, sizeof(*want), kind == 0 ? cmp_rec16_f64 : cmp_rec16_i64);
            assert_int_equal(mp_sort_rec16(v, n, kind == 0 ? MP_SORT_F64 : MP_SORT_I64), 0);
            for (size_t i = 0; i < n; i++)
                if (v[i].pos != want[i].pos)
                    fail_msg("kind %d spread %d: position %zu holds record %lld, want %lld", kind,
                             spread, i, (long long)v[i].pos, (long long)want[i].pos);
        }
    }
    assert_int_equal(mp_sort_rec16(v, 0, MP_SORT_I64), 0);
    free(v);
    free(want);
}

/* mp_fmt_pyfloat's integer paths against printf and strtod: random
 * significands over the whole fast range, quotients like a report's means,
 * and the values next to powers of two and of ten. */
static void test_pyfloat_exact(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 60000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v;
        int ex = (int)(x % 64) - 15;
        switch (i % 4) {
        case 0:
            v = ldexp(1.0 + (double)(x >> 12) / 4503599627370496.0, ex);
            break;
        case 1:
            v = (double)(x % 100000000) / (double)(1 + (x >> 40) % 99991);
            break;
        case 2:
            v = ldexp(1.0, ex);
            for (int k = (int)(x >> 60) % 3; k > 0; k--)
                v = nextafter(v, (x >> 59) & 1 ? INFINITY : 0.0);
            break;
        default:
            v = pow(10.0, (double)((int)(x % 20) - 4));
            for (int k = (int)(x >> 60) % 3; k > 0; k--)
                v = nextafter(v, (x >> 59) & 1 ? INFINITY : 0.0);
            break;
        }
        if (v == 0 || !isfinite(v))
            continue;
        char out[64], want[40], got[40];
        mp_fmt_pyfloat(v, out, sizeof(out));
        int we = slow_shortest(v, want), ge = repr_digits(out, got);
        if (strcmp(want, got) != 0 || we != ge)
            fail_msg("%.17g: repr %s, want digits %s e%d", v, out, want, we);
    }
}

/* mp_utf8_len: well-formed sequences and each way one can fail, with the
 * bound respected (a cut sequence is 0) and nothing read past a NUL. */
static void test_utf8_len(void **state)
{
    (void)state;

    struct {
        const char *s;
        size_t avail, want;
    } cases[] = {
        {"a", 1, 1},
        {"\xC3\xA9", 2, 2},         /* U+00E9 */
        {"\xE2\x80\xA8", 3, 3},     /* U+2028 */
        {"\xF0\x9F\x98\x80", 4, 4}, /* U+1F600 */
        {"\xF4\x8F\xBF\xBF", 4, 4}, /* U+10FFFF */
        {"\xC3\xA9", 1, 0},         /* cut by avail */
        {"\xC0\xAF", 2, 0},         /* overlong */
        {"\xE0\x80\xAF", 3, 0},     /* overlong */
        {"\xF0\x80\x80\xAF", 4, 0}, /* overlong */
        {"\xED\xA0\x80", 3, 0},     /* surrogate */
        {"\xF4\x90\x80\x80", 4, 0}, /* above U+10FFFF */
        {"\xF5\x80\x80\x80", 4, 0}, /* no such lead byte */
        {"\x80", 1, 0},             /* continuation first */
        {"\xE2\x28\xA1", 3, 0},     /* bad continuation */
        {"\xE2\x82", SIZE_MAX, 0},  /* NUL ends it: not read beyond */
        {"", 0, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(mp_utf8_len((const unsigned char *)cases[i].s, cases[i].avail),
                         cases[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diag_first_error_wins),
        cmocka_unit_test(test_buf_limits),
        cmocka_unit_test(test_size_mul),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_grow2),
        cmocka_unit_test(test_str_ends_with),
        cmocka_unit_test(test_arena_and_intern),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_fs_stage),
        cmocka_unit_test(test_fs_join),
        cmocka_unit_test(test_csv_python_quoting),
        cmocka_unit_test(test_pyfloat),
        cmocka_unit_test(test_pyfloat_exact),
        cmocka_unit_test(test_sort_rec16),
        cmocka_unit_test(test_utf8_len),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
