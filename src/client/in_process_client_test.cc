// UpdateStatusForVersion: the status write of a caller that reads only the
// new resourceVersion. The in-process client's (which hands the written
// object to the watch cache) and the default one (UpdateStatus, then the
// version of its result) return the same: the version a read then sees, or
// the write's error.
#include "client/in_process_client.h"

#include "api/testing/builders.h"
#include "common/testing/fake_clock.h"
#include "gtest/gtest.h"
#include "registry/errors.h"
#include "store/memory/memory_store.h"

namespace batchd::client {
namespace {

using api::Json;

// Forwards what the test uses; UpdateStatusForVersion is Client's default.
class ForwardingClient : public Client {
 public:
  explicit ForwardingClient(Client& c) : c_(c) {}
  const api::Scheme& scheme() const override { return c_.scheme(); }
  absl::StatusOr<Json> Get(const api::KindDef& k, const std::string& ns,
                           const std::string& name) override {
    return c_.Get(k, ns, name);
  }
  absl::StatusOr<ListResult> List(const api::KindDef& k, const std::string& ns,
                                  const Selector& sel) override {
    return c_.List(k, ns, sel);
  }
  absl::StatusOr<Json> Create(const api::KindDef& k, const std::string& ns, Json obj) override {
    return c_.Create(k, ns, std::move(obj));
  }
  absl::StatusOr<Json> Update(const api::KindDef& k, Json obj) override {
    return c_.Update(k, std::move(obj));
  }
  absl::StatusOr<Json> UpdateStatus(const api::KindDef& k, Json obj) override {
    return c_.UpdateStatus(k, std::move(obj));
  }
  absl::StatusOr<Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                  const std::string& name, const Json& patch,
                                  bool status) override {
    return c_.MergePatch(k, ns, name, patch, status);
  }
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const DeleteOptions& opts) override {
    return c_.Delete(k, ns, name, opts);
  }
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const api::KindDef& k,
                                                     const std::string& ns, const Selector& sel,
                                                     const std::string& rv) override {
    return c_.Watch(k, ns, sel, rv);
  }

 private:
  Client& c_;
};

TEST(InProcessClientTest, UpdateStatusForVersionReturnsTheWrittenVersion) {
  FakeClock clock;
  store::MemoryStore store;
  registry::Registry reg(store, api::BuiltinScheme(), clock);
  ASSERT_TRUE(reg.Start().ok());
  InProcessClient in_process(reg);
  ForwardingClient forwarding(in_process);
  const api::KindDef& jobs = in_process.Kind("batch", "v1", "jobs");
  ASSERT_TRUE(in_process.Create(jobs, "default", api::testing::MakeJob("a").Obj()).ok());
  int active = 0;
  for (Client* c : std::vector<Client*>{&in_process, &forwarding}) {
    Json job = *c->Get(jobs, "default", "a");
    const std::string before = job["metadata"]["resourceVersion"];
    job["status"]["active"] = ++active;
    absl::StatusOr<std::string> rv = c->UpdateStatusForVersion(jobs, job);
    ASSERT_TRUE(rv.ok()) << rv.status();
    const Json now = *c->Get(jobs, "default", "a");
    EXPECT_EQ(*rv, now["metadata"]["resourceVersion"].get<std::string>());
    EXPECT_NE(*rv, before);
    EXPECT_EQ(now["status"].value("active", 0), active);
    // The version written against is gone now: a Conflict, nothing written.
    job["status"]["active"] = 100;
    absl::StatusOr<std::string> stale = c->UpdateStatusForVersion(jobs, job);
    ASSERT_FALSE(stale.ok());
    EXPECT_EQ(registry::GetPayload(stale.status()).reason, "Conflict");
    EXPECT_EQ((*c->Get(jobs, "default", "a"))["status"].value("active", 0), active);
  }
}

}  // namespace
}  // namespace batchd::client
