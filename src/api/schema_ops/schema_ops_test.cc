#include "api/schema_ops/schema_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "absl/time/time.h"

namespace batchd::api::schema_ops {
namespace {

SchemaPtr TestSchema() {
  SchemaPtr container = Object("io.k8s.api.core.v1.Container", "c")
                            .Field("name", Str())
                            .Field("image", Str())
                            .Field("env", ArrayOf(Object("io.k8s.api.core.v1.EnvVar", "e")
                                                      .Field("name", Str())
                                                      .Field("value", Str())))
                            .Build();
  SchemaPtr spec =
      Object("io.k8s.api.batch.v1.JobSpec", "spec")
          .Field("parallelism", Int32())
          .Field("backoffLimit", Int64())
          .Field("suspend", Bool())
          .Field("maxUnavailable", IntOrString())
          .Field("containers", ArrayOf(container))
          .Field("limits", MapOf(QuantitySchema()))
          .Field("quota", MapOf(QuantitySchema().Format(kQuantityAsSentFormat)))
          .Field("start", TimeSchema())
          .Field("renew", SchemaBuilder(TimeSchema()).Build())
          .Field("extra", InlineObject("kept").Field("known", Int32()).PreserveUnknown())
          .Field("raw", AnyValue())
          .Build();
  return Object("io.k8s.api.batch.v1.Job", "job")
      .Field("apiVersion", Str())
      .Field("kind", Str())
      .Field("metadata", InlineObject("meta").Field("labels", MapOf(Str())))
      .Field("spec", spec)
      .Build();
}

TEST(NormalizeTest, Cases) {
  struct Case {
    std::string name;
    std::string in;
    std::string want;                  // Expected object after Normalize (when ok).
    std::vector<std::string> unknown;  // Expected unknown-field paths.
    std::string error;                 // Expected error message ("" = ok).
  };
  const std::vector<Case> cases = {
      {"unknown at depth",
       R"({"spec":{"foo":1,"containers":[{"name":"a","bogus":true}]},"top":1})",
       R"({"spec":{"containers":[{"name":"a"}]}})",
       {"spec.foo", "spec.containers[0].bogus", "top"}, ""},
      {"nulls dropped", R"({"spec":{"parallelism":null,"suspend":true},"metadata":null})",
       R"({"spec":{"suspend":true}})", {}, ""},
      {"null array element becomes zero value", R"({"spec":{"containers":[null]}})",
       R"({"spec":{"containers":[{}]}})", {}, ""},
      {"quantity canonicalised", R"({"spec":{"limits":{"cpu":"1000m","mem":0.5,"x":2}}})",
       R"({"spec":{"limits":{"cpu":"1","mem":"500m","x":"2"}}})", {}, ""},
      {"quantity as sent", R"({"spec":{"quota":{"cpu":9,"mem":"1000m","x":0.5}}})",
       R"({"spec":{"quota":{"cpu":9,"mem":"1000m","x":0.5}}})", {}, ""},
      {"quantity as sent still validated", R"({"spec":{"quota":{"cpu":"abc"}}})", "", {},
       "quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"preserve unknown kept", R"({"spec":{"extra":{"known":1,"other":{"a":1}}}})",
       R"({"spec":{"extra":{"known":1,"other":{"a":1}}}})", {}, ""},
      {"any kept", R"({"spec":{"raw":{"deep":[1,{"x":null}]}}})",
       R"({"spec":{"raw":{"deep":[1,{"x":null}]}}})", {}, ""},
      {"integral float accepted", R"({"spec":{"parallelism":2.0}})",
       R"({"spec":{"parallelism":2}})", {}, ""},
      {"time canonicalised to UTC", R"({"spec":{"start":"2024-01-02T05:04:05.123+02:00"}})",
       R"({"spec":{"start":"2024-01-02T03:04:05Z"}})", {}, ""},
      {"empty time is unset", R"({"spec":{"start":""}})", R"({"spec":{}})", {}, ""},
      {"int or string", R"({"spec":{"maxUnavailable":"50%"}})",
       R"({"spec":{"maxUnavailable":"50%"}})", {}, ""},
      {"string into int32", R"({"spec":{"parallelism":"3"}})", "", {},
       "json: cannot unmarshal string into Go struct field JobSpec.spec.parallelism of type int32"},
      {"int32 overflow", R"({"spec":{"parallelism":3000000000}})", "", {},
       "json: cannot unmarshal number 3000000000 into Go struct field JobSpec.spec.parallelism "
       "of type int32"},
      {"fractional int", R"({"spec":{"backoffLimit":1.5}})", "", {},
       "json: cannot unmarshal number 1.5 into Go struct field JobSpec.spec.backoffLimit of "
       "type int64"},
      {"bool wanted", R"({"spec":{"suspend":"yes"}})", "", {},
       "json: cannot unmarshal string into Go struct field JobSpec.spec.suspend of type bool"},
      {"object wanted", R"({"spec":"x"})", "", {},
       "json: cannot unmarshal string into Go struct field Job.spec of type v1.JobSpec"},
      {"array element type", R"({"spec":{"containers":["x"]}})", "", {},
       "json: cannot unmarshal string into Go struct field JobSpec.spec.containers of type "
       "v1.Container"},
      {"nested field", R"({"spec":{"containers":[{"image":5}]}})", "", {},
       "json: cannot unmarshal number into Go struct field Container.spec.containers.image of "
       "type string"},
      {"map value type", R"({"metadata":{"labels":{"a":1}}})", "", {},
       "json: cannot unmarshal number into Go struct field Job.metadata.labels of type string"},
      {"bad quantity", R"({"spec":{"limits":{"cpu":"abc"}}})", "", {},
       "quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"bad time", R"({"spec":{"start":"yesterday"}})", "", {},
       "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
       "\"yesterday\" as \"2006\""},
      {"root not object", R"([1,2])", "", {},
       "json: cannot unmarshal array into Go value of type v1.Job"},
  };
  SchemaPtr schema = TestSchema();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json obj = Json::parse(c.in);
    std::vector<std::string> unknown;
    absl::Status st = Normalize(*schema, obj, &unknown);
    if (!c.error.empty()) {
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(st.message(), c.error);
      continue;
    }
    ASSERT_TRUE(st.ok()) << st;
    EXPECT_EQ(obj, Json::parse(c.want));
    std::sort(unknown.begin(), unknown.end());
    std::vector<std::string> want = c.unknown;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(unknown, want);
  }
}

TEST(NormalizeTest, MicroTimeKeepsMicroseconds) {
  SchemaBuilder micro = TimeSchema();
  const_cast<Schema&>(*micro.Build()).ref = kMicroTimeRef;
  SchemaPtr s = Object("x.Lease", "").Field("renewTime", micro).Build();
  Json obj = {{"renewTime", "2024-01-02T03:04:05.1234567Z"}};
  ASSERT_TRUE(Normalize(*s, obj, nullptr).ok());
  EXPECT_EQ(obj["renewTime"], "2024-01-02T03:04:05.123456Z");
}

// Times the server wrote skip the parse and format; every input must still
// come out as parsing (RFC 3339) and formatting it would give.
TEST(NormalizeTest, TimesAsParsedAndFormatted) {
  std::vector<std::string> inputs = {
      "2024-01-02T03:04:05Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z", "2000-02-29T23:59:59Z", "2024-04-31T00:00:00Z",
      "2024-00-10T00:00:00Z", "2024-13-10T00:00:00Z", "2024-01-00T00:00:00Z",
      "2024-01-32T00:00:00Z", "2024-01-02T24:00:00Z", "2024-01-02T23:60:00Z",
      "2024-01-02T23:59:60Z", "2024-01-02t03:04:05z", "2024-01-02T03:04:05+00:00",
      "2024-01-02T03:04:05.5Z", "2024-01-02T03:04:05.000000Z", "0999-01-02T03:04:05Z",
      "9999-12-31T23:59:59Z", "2024-1-02T03:04:05Z", "2024-01-02 03:04:05Z",
      "2024-01-02T03:04:05.123456Z", "2024-01-02T03:04:05.12345Z", "20240102T030405Z",
      "2024-01-02T03:04:0aZ", "2024-01-02T03:04:05.12345aZ"};
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    // Years 1336 to 8307.
    absl::Time t = absl::FromUnixMicros(std::uniform_int_distribution<int64_t>(
        int64_t{-20000000000000000}, int64_t{200000000000000000})(rng));
    inputs.push_back(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()));
    inputs.push_back(absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone()));
  }
  SchemaBuilder micro_builder = TimeSchema();
  const_cast<Schema&>(*micro_builder.Build()).ref = kMicroTimeRef;
  SchemaPtr schema =
      Object("x.T", "").Field("time", TimeSchema()).Field("micro", micro_builder).Build();
  for (const std::string& in : inputs) {
    for (const bool micro : {false, true}) {
      SCOPED_TRACE(in + (micro ? " (MicroTime)" : ""));
      absl::Time t;
      std::string err;
      const bool parses = absl::ParseTime(absl::RFC3339_full, in, &t, &err);
      const std::string want =
          !parses ? ""
          : micro ? absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone())
                  : absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                     absl::FromUnixSeconds(absl::ToUnixSeconds(t)),
                                     absl::UTCTimeZone());
      const char* field = micro ? "micro" : "time";
      Json obj = {{field, in}};
      absl::Status st = Normalize(*schema, obj, nullptr);
      ASSERT_EQ(st.ok(), parses) << st;
      if (parses) EXPECT_EQ(obj[field], want);
    }
  }
}

// Quantity strings seen before come from a cache: the same canonical form
// every time, errors still errors, and right after the cache filled up.
TEST(NormalizeTest, QuantitiesTheSameEveryTime) {
  SchemaPtr schema = TestSchema();
  for (int round = 0; round < 3; ++round) {
    Json obj = Json::parse(R"({"spec":{"limits":{"cpu":"1000m","mem":"1Gi","x":"2"},
                                       "quota":{"cpu":"1000m"}}})");
    ASSERT_TRUE(Normalize(*schema, obj, nullptr).ok());
    EXPECT_EQ(obj, Json::parse(R"({"spec":{"limits":{"cpu":"1","mem":"1Gi","x":"2"},
                                           "quota":{"cpu":"1000m"}}})"));
    Json bad = Json::parse(R"({"spec":{"limits":{"cpu":"abc"}}})");
    EXPECT_FALSE(Normalize(*schema, bad, nullptr).ok());
    for (int i = 0; i < 5000; ++i) {
      const Json q = std::to_string(i) + "00m";
      Json many = {{"spec", {{"limits", {{"cpu", q}}}}}};
      ASSERT_TRUE(Normalize(*schema, many, nullptr).ok());
      ASSERT_EQ(many["spec"]["limits"]["cpu"], *CanonicalQuantity(q));  // Parsed afresh.
    }
  }
}

// Malformed input of every shape at every level must give OK or an error, never a crash.
TEST(NormalizeTest, NeverCrashesOnWrongTypes) {
  const std::vector<Json> values = {nullptr, true, 1, -1, 1.5, 1e300, "s", Json::array(),
                                    Json::object(), Json::array({nullptr, 1, "x"}),
                                    18446744073709551615ULL};
  SchemaPtr schema = TestSchema();
  const std::vector<std::vector<std::string>> paths = {
      {"spec"}, {"spec", "parallelism"}, {"spec", "containers"}, {"spec", "limits"},
      {"spec", "start"}, {"spec", "maxUnavailable"}, {"metadata", "labels"}, {"spec", "extra"}};
  int errors = 0;
  for (const auto& path : paths) {
    for (const Json& v : values) {
      Json obj = Json::object();
      Json* cur = &obj;
      for (size_t i = 0; i + 1 < path.size(); ++i) cur = &(*cur)[path[i]];
      (*cur)[path.back()] = v;
      if (!Normalize(*schema, obj, nullptr).ok()) ++errors;
    }
  }
  EXPECT_GT(errors, 40);
}

TEST(NormalizeTest, MembersWalksOnlyThoseMembersWithTheSamePaths) {
  SchemaPtr schema = TestSchema();
  Json obj = Json::parse(
      R"({"metadata":{"labels":{"a":"b"},"bogus":1,"x":null},"spec":{"parallelism":"bad","foo":1},)"
      R"("top":1,"kind":null})");
  std::vector<std::string> unknown;
  ASSERT_TRUE(NormalizeMembers(*schema, obj, {"metadata"}, &unknown).ok());
  EXPECT_EQ(unknown, std::vector<std::string>{"metadata.bogus"});
  // metadata as Normalize leaves it; the rest untouched (not checked, not pruned).
  EXPECT_EQ(obj, Json::parse(R"({"metadata":{"labels":{"a":"b"}},"spec":{"parallelism":"bad",)"
                             R"("foo":1},"top":1,"kind":null})"));
  // An error inside a walked member reads as Normalize's.
  Json full = obj, part = obj;
  absl::Status want = Normalize(*schema, full, nullptr);
  absl::Status got = NormalizeMembers(*schema, part, {"spec"}, nullptr);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(got, want);
  EXPECT_NE(got.message().find("JobSpec.spec.parallelism"), std::string::npos) << got;
}

TEST(NormalizeTest, DeepNestingUnderAnyIsNotWalked) {
  Json deep = Json::array();
  for (int i = 0; i < 5000; ++i) deep = Json::array({std::move(deep)});
  Json obj = {{"spec", {{"raw", {{"d", std::move(deep)}}}}}};
  EXPECT_TRUE(Normalize(*TestSchema(), obj, nullptr).ok());
  obj.clear();  // nlohmann destroys deep trees iteratively.
}

}  // namespace
}  // namespace batchd::api::schema_ops
