/* Included by every file of a unit-test area (tests/unit/<area>/, see
 * docs/ARCHITECTURE.md, "Adding a unit test"): cmocka, and a prototype
 * for each case and group fixture the area's test_list.h names, so a case
 * is an ordinary external function of whichever file of the area holds it. */
#ifndef MP_TEST_AREA_H
#define MP_TEST_AREA_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define TEST(name) void test_##name(void **state);
#define GROUP_SETUP(fn) int fn(void **state);
#define GROUP_TEARDOWN(fn) int fn(void **state);
#include "test_list.h"
#undef TEST
#undef GROUP_SETUP
#undef GROUP_TEARDOWN

#endif
