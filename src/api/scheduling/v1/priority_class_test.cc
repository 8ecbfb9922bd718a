#include "api/scheduling/v1/scheduling_v1.h"

#include <gtest/gtest.h>

namespace batchd::api::scheduling_v1 {
namespace {

std::string Msg(const ErrorList& errs) { return errs.empty() ? "" : JoinMessages(errs); }

Json Pc(const std::string& name, Json value) {
  Json pc = {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"},
             {"metadata", {{"name", name}}}};
  if (!value.is_null()) pc["value"] = value;
  return pc;
}

TEST(PriorityClassTest, Defaults) {
  Json pc = Pc("high", 1000);
  SetDefaultsPriorityClass(pc);
  EXPECT_EQ(pc["preemptionPolicy"], "PreemptLowerPriority");
  pc["preemptionPolicy"] = "Never";
  SetDefaultsPriorityClass(pc);
  EXPECT_EQ(pc["preemptionPolicy"], "Never");
}

TEST(PriorityClassTest, Validate) {
  struct Case {
    std::string name;
    Json pc;
    std::string want;  // Joined messages; "" when valid.
  };
  Json bad_policy = Pc("p", 1);
  bad_policy["preemptionPolicy"] = "Sometimes";
  std::vector<Case> cases = {
      {"valid", Pc("high", 1000), ""},
      {"missing value", Pc("high", Json()), "value: Required value"},
      {"reserved prefix", Pc("system-mine", 5),
       "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved"},
      {"system class may be high", Pc("system-node-critical", 2000001000), ""},
      {"too high", Pc("huge", 1000000001),
       "value: Forbidden: maximum allowed value of a user defined priority is 1000000000"},
      {"bad policy", bad_policy,
       "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", "
       "\"PreemptLowerPriority\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Msg(ValidatePriorityClass(c.pc)), c.want);
  }
}

TEST(PriorityClassTest, ValueAndPolicyImmutable) {
  Json old = Pc("high", 1000);
  SetDefaultsPriorityClass(old);
  Json now = old;
  now["value"] = 2000;
  EXPECT_EQ(Msg(ValidatePriorityClassUpdate(now, old)),
            "value: Forbidden: may not be changed in an update.");
  now = old;
  now["description"] = "changed";
  EXPECT_EQ(Msg(ValidatePriorityClassUpdate(now, old)), "");
  now["preemptionPolicy"] = "Never";
  EXPECT_EQ(Msg(ValidatePriorityClassUpdate(now, old)),
            "preemptionPolicy: Invalid value: \"Never\": field is immutable");
}

TEST(PriorityClassTest, GlobalDefaultIsTheLowestValuedDefault) {
  Json plain = Pc("plain", 1), high = Pc("high", 100), low = Pc("low", 5);
  high["globalDefault"] = true;
  low["globalDefault"] = true;
  EXPECT_EQ(GlobalDefault({}), nullptr);
  EXPECT_EQ(GlobalDefault({&plain}), nullptr);
  EXPECT_EQ(GlobalDefault({&plain, &high}), &high);
  EXPECT_EQ(GlobalDefault({&high, &plain, &low}), &low);
  plain["globalDefault"] = "true";  // not a boolean
  EXPECT_FALSE(IsGlobalDefault(plain));
}

}  // namespace
}  // namespace batchd::api::scheduling_v1
