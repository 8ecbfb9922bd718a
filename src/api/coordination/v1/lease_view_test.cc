#include "api/coordination/v1/lease_view.h"

#include "gtest/gtest.h"

namespace batchd::api::coordination_v1 {
namespace {

TEST(LeaseViewTest, ParsesTheHeartbeat) {
  const Json lease = Json::parse(R"({
    "metadata": {"name": "n1", "namespace": "kube-node-lease"},
    "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40,
             "renewTime": "2024-01-01T00:00:05.000001Z"}})");
  LeaseView v = LeaseView::Parse(lease);
  EXPECT_EQ(v.meta.Key(), "kube-node-lease/n1");
  EXPECT_EQ(v.holder_identity, "n1");
  EXPECT_EQ(v.renew_time, "2024-01-01T00:00:05.000001Z");
}

TEST(LeaseViewTest, EmptyAndMistypedLeasesReadAsDefaults) {
  for (const Json& lease : {Json(), Json::object(), Json{{"spec", "x"}},
                            Json{{"spec", {{"renewTime", 5}, {"holderIdentity", nullptr}}}}}) {
    LeaseView v = LeaseView::Parse(lease);
    EXPECT_EQ(v.meta.name, "");
    EXPECT_EQ(v.holder_identity, "");
    EXPECT_EQ(v.renew_time, "");
  }
}

}  // namespace
}  // namespace batchd::api::coordination_v1
