#include "store/etcd/etcd_store.h"

#include <memory>

#include "gtest/gtest.h"
#include "store/testing/etcd_process.h"
#include "store/testing/store_conformance.h"

namespace batchd::store {
namespace {

// Without an etcd binary there is nothing to run against: skip, saying so.
class NeedsEtcd : public ::testing::Environment {
 public:
  void SetUp() override {
    if (testing::FindEtcdBinary().empty()) {
      GTEST_SKIP() << "no etcd binary on PATH (install Debian's etcd-server, or set "
                      "BATCHD_ETCD): the etcd store tests are skipped";
    }
  }
};
const auto* const kNeedsEtcd = ::testing::AddGlobalTestEnvironment(new NeedsEtcd);

EtcdOptions TestOptions(const testing::EtcdProcess& etcd) {
  EtcdOptions o;
  o.servers = {etcd.client_url()};
  o.prefix = "/t";
  // A fresh etcd is at revision 1, a fresh Store at 0.
  o.revision_offset = 1;
  return o;
}

// A fresh etcd per test: the suite counts revisions from 0.
struct EtcdFactory {
  std::unique_ptr<testing::EtcdProcess> etcd;
  std::unique_ptr<Store> Make() {
    etcd = std::make_unique<testing::EtcdProcess>();
    absl::Status st = etcd->Start();
    if (!st.ok()) {
      ADD_FAILURE() << st;
      return nullptr;
    }
    auto s = EtcdStore::Open(TestOptions(*etcd));
    if (!s.ok()) {
      ADD_FAILURE() << s.status();
      return nullptr;
    }
    return std::move(*s);
  }
};

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Etcd, StoreConformanceTest, ::testing::Types<EtcdFactory>);
}  // namespace testing

}  // namespace batchd::store
