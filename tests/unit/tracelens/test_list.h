/* The cases of test_tracelens (src/tracelens: pseudo ops, overlap sheets,
 * statistics, the views), one row each, run in this order between the
 * group fixtures; each is void test_<name>(void **) in one file here. */
GROUP_SETUP(setup)
GROUP_TEARDOWN(teardown)
TEST(moe_pseudo_ops)
TEST(overlap_info)
TEST(pyset_order)
TEST(mla_pseudo_ops)
TEST(stats_selection)
TEST(sort_ts_idx)
TEST(summary)
TEST(html)
TEST(html_synthetic)
TEST(xlsx)
TEST(xlsx_synthetic)
