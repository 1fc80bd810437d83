/* The on-disk index cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <magpie/sources.h>

#include "area.h"
#include "helpers.h"

void test_cache(void **state)
{
    (void)state;
    const char *subs[] = {"hipproj"};
    struct mp_src_index *a = open_fix(subs, 1);
    struct mp_src_index *b = open_fix(subs, 1);
    assert_true(mp_src_index_repo(b, 0)->from_cache);
    assert_int_equal(mp_src_index_repo(a, 0)->n_defs, mp_src_index_repo(b, 0)->n_defs);
    struct mp_src_result r;
    resolve(b, "void other::rms_norm_kernel<float>(float*, float const*, int)", NULL, &r);
    assert_int_equal(r.source_line, 34);
    mp_src_result_fini(&r);
    mp_src_index_free(a);
    mp_src_index_free(b);
    struct mp_src_index *ix = NULL;
    const char *bad[] = {"/nonexistent/magpie-src"};
    struct mp_diag d;
    mp_diag_clear(&d);
    assert_int_equal(mp_src_index_open(bad, 1, NULL, &ix, &d), MP_ENOTFOUND);
    assert_non_null(strstr(d.msg, "nonexistent"));
}
