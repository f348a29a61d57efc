// The summaries of one submission (`kernelgate eval DIR`): the batch's CSV of the one entry and
// the batch's Markdown under a title for one submission.
#include "merge_fixtures.h"

#include <gtest/gtest.h>

namespace kg::results {
namespace {

using testing::op_json;
using testing::results_json;
using testing::smoke_identity;

TEST(SubmissionSummary, IsTheBatchSummaryOfTheOneSubmissionTitledForIt) {
  const json ops = json::array({op_json("relu.default", "pass", 4, 4, 1.5, {}, {}, {1.5}),
                                op_json("add.Tensor", "fail", 5, 3, std::nullopt, {}, {"value_mismatch", "nan_mask"})});
  const BatchEntry entry{"sub", results_json(smoke_identity(), "sub", ops, 2)};
  const std::string md = submission_summary_markdown(smoke_identity(), entry);
  const std::string batch = batch_summary_markdown(smoke_identity(), {entry});
  ASSERT_EQ(md.rfind("# kernelgate summary\n\n", 0), 0u) << md;
  EXPECT_EQ(md.substr(md.find('\n')), batch.substr(batch.find('\n')));
  EXPECT_NE(md.find("| sub | add.Tensor | cpu | fail | 3/5 | - | nan\\_mask x1, value\\_mismatch x1 |"), std::string::npos) << md;
  const std::string csv = batch_summary_csv({entry});
  EXPECT_NE(csv.find("sub,relu.default,cpu,pass,4,4,1.0,1,1.5,1.5,,,,\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("sub,add.Tensor,cpu,fail,5,3,0.6,0,,,0.5,0.25,,nan_mask=1;value_mismatch=1\r\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace kg::results
