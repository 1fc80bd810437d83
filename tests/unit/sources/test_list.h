/* The cases of test_sources (src/sources: kernel-to-source mapping), one
 * row each, run in this order between the group fixtures; each is
 * void test_<name>(void **) in one file here. */
GROUP_SETUP(setup)
GROUP_TEARDOWN(teardown)
TEST(demangle)
TEST(closed)
TEST(cpp)
TEST(evidence)
TEST(evidence_sibling)
TEST(refs)
TEST(inductor)
TEST(cache)
TEST(miopen)
TEST(return_type)
TEST(clues)
TEST(wrappers)
