/* The main of every unit-test area (tests/unit/<area>/): runs the cases of
 * the area's test_list.h in the order of its rows, between the group
 * fixtures it names (GROUP_SETUP / GROUP_TEARDOWN rows, optional). The
 * area's directory comes first on the include path, so "test_list.h" is
 * that area's list. */
#include "area.h"

static CMFixtureFunction group_setup;
static CMFixtureFunction group_teardown;

static void group_fixtures(void)
{
#define TEST(name)
#define GROUP_SETUP(fn) group_setup = fn;
#define GROUP_TEARDOWN(fn) group_teardown = fn;
#include "test_list.h"
#undef TEST
#undef GROUP_SETUP
#undef GROUP_TEARDOWN
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TEST(name) cmocka_unit_test(test_##name),
#define GROUP_SETUP(fn)
#define GROUP_TEARDOWN(fn)
#include "test_list.h"
#undef TEST
#undef GROUP_SETUP
#undef GROUP_TEARDOWN
    };
    group_fixtures();
    return cmocka_run_group_tests_name(MP_TEST_AREA, tests, group_setup, group_teardown);
}
