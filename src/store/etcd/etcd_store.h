// EtcdStore: the `Store` backend on an etcd v3 cluster (`batchd server
// --store etcd --etcd-servers URL,...`), so several `batchd server` replicas
// share one state. It speaks etcd's HTTP/JSON gateway (POST /v3/kv/range,
// /v3/kv/txn, /v3/kv/compaction, streaming /v3/watch; keys and values in
// base64): no gRPC/protobuf build dependency (docs/ha.md says why).
//
// Layout: store key K lives at etcd key `prefix + K`. Store keys may not
// begin with byte 0xff: `prefix + "\xff" + K` holds the final value of a
// DeleteWithFinalValue of K (written in the delete's own transaction, so the
// delete stays one revision; removed when K is created again or by Compact).
//
// Revisions: a store revision is the etcd revision minus
// `revision_offset` (0 in the server, so resourceVersions are etcd
// revisions; tests use 1, because a fresh etcd starts at revision 1 and a
// fresh store at 0). Writes are etcd transactions: Create is
// `If mod_revision(K)==0 Then Put`, a conditional Update/Delete is
// `If mod_revision(K)==expected Then ... Else Range K` (NotFound vs Aborted
// from the Else branch), as kube-apiserver writes.
//
// Watches: one etcd watch on the whole prefix (prev_kv, progress_notify)
// feeds an in-memory WatchHub ring that local watchers replay from; so the
// oldest watchable revision is the one this process opened at (or a later
// compaction or ring trim), as the Store contract allows. A write returns
// only once its own event came back on that watch and was delivered, so
// watch callbacks run before the writer's call returns, as on the other
// backends (bounded by `delivery_timeout`; past it the write still succeeds
// and a warning is logged). When the etcd watch breaks it is reopened on
// another member from the last delivered revision; if that revision was
// compacted meanwhile the process cannot continue gap-free and exits
// (its supervisor restarts it; a fresh process relists).
//
// Errors: etcd's "required revision has been compacted" / "is a future
// revision" are OutOfRange; "too many operations" / "request is too large"
// InvalidArgument; no leader, no member reachable: Unavailable; timeouts:
// DeadlineExceeded.
//
// Thread-safety: all methods are thread-safe (Store contract).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/compactor.h"
#include "store/internal/watch_hub.h"
#include "store/store.h"

namespace batchd::store {

namespace internal {
class EtcdHttp;
class EtcdHttpStream;
}

struct EtcdOptions {
  // Client URLs of the members: "http://127.0.0.1:2379".
  std::vector<std::string> servers;
  // TLS client configuration (kube-apiserver's --etcd-cafile/certfile/keyfile).
  std::string ca_file, cert_file, key_file;
  // Every key lives under this etcd prefix (kube-apiserver: --etcd-prefix).
  std::string prefix = "/batchd";
  // store revision = etcd revision - revision_offset (see above).
  int64_t revision_offset = 0;
  absl::Duration request_timeout = absl::Seconds(15);
  // The longest a write waits for its own event on the watch.
  absl::Duration delivery_timeout = absl::Seconds(20);
  // The local watch history ring (like SQLite's and memory's).
  internal::WatchHubOptions history;
};

class EtcdStore : public Store {
 public:
  // Connects, reads the current revision and opens the watch.
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(EtcdOptions options);
  ~EtcdStore() override;

  absl::StatusOr<KeyValue> Get(std::string_view key) override;
  absl::StatusOr<RangeResult> Range(std::string_view prefix, std::string_view start_after,
                                    int64_t limit) override;
  absl::StatusOr<RangeResult> RangeAtRevision(std::string_view prefix,
                                              std::string_view start_after, int64_t limit,
                                              int64_t revision) override;
  absl::StatusOr<KeyValue> Create(std::string_view key, std::string value) override;
  absl::StatusOr<KeyValue> Update(std::string_view key, std::string value,
                                  int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> Delete(std::string_view key, int64_t expected_mod_revision) override;
  absl::StatusOr<KeyValue> DeleteWithFinalValue(std::string_view key,
                                                int64_t expected_mod_revision,
                                                std::string final_value) override;
  absl::StatusOr<std::unique_ptr<WatchHandle>> Watch(std::string_view prefix,
                                                     int64_t after_revision,
                                                     WatchCallback cb) override;
  absl::Status Compact(int64_t revision) override;
  int64_t CompactedRevision() override;
  int64_t Revision() override;
  int64_t OldestWatchableRevision() override;

  // Fencing for leader election (docs/ha.md): writes `holder` at `key` and,
  // from then on, every write of this store is a transaction that also
  // requires `key` unmodified since; so once another replica took the fence
  // over (its own TakeFence as the new leader) nothing this one still had
  // in flight or sends later lands: FailedPrecondition ("fenced"). Returns
  // the fence's revision.
  absl::StatusOr<int64_t> TakeFence(std::string_view key, std::string_view holder);

  // One round of kube-apiserver's compaction agreement (store/compactor.h,
  // storage/etcd3/compact.go) through the etcd key `compact_rev_key` (the
  // literal key, outside the prefix, as kube-apiserver's: compaction is
  // etcd-wide, so every client of this etcd that compacts agrees on it):
  // `If version(compact_rev_key) == time Then Put(compact_rev_key, revision)
  // Else Get(compact_rev_key)`. The winner (time + 1 next) compacts to
  // `revision` (when not 0); a loser adopts the key's version and notes the
  // key's value as compacted. Not fenced: compaction is no leader's write.
  absl::StatusOr<store::CompactRound> CompactAgreed(int64_t time, int64_t revision);
  static constexpr std::string_view kCompactRevKey = "compact_rev_key";

  // Test hooks: the etcd revision delivered to local watchers so far.
  int64_t DeliveredEtcdRevision() const;

 private:
  EtcdStore(EtcdOptions options, std::unique_ptr<internal::EtcdHttp> http, int64_t start_etcd_rev);

  absl::StatusOr<KeyValue> DeleteWithFinalValueImpl(std::string_view key,
                                                    int64_t expected_mod_revision,
                                                    std::string* final_value);
  absl::StatusOr<RangeResult> DoRange(std::string_view prefix, std::string_view start_after,
                                      int64_t limit, int64_t etcd_revision);
  // Runs a write transaction, with the fence's compare when one is set.
  absl::StatusOr<nlohmann::json> Txn(nlohmann::json req);
  // POSTs `body` to `path`; a non-200 answer becomes a Status.
  absl::StatusOr<std::string> Call(const std::string& path, const std::string& body);
  // Waits until the watch delivered `etcd_rev`.
  void AwaitDelivered(int64_t etcd_rev);
  void WatchLoop();
  // Handles one line of the watch stream; false ends the stream.
  bool OnWatchLine(const std::string& line, absl::Status* fatal);
  void NoteRevision(int64_t etcd_rev);
  // A compare-and-write on `key` whose compare failed (its failure branch
  // ranged the key): NotFound when the key is absent, else Aborted naming the
  // revision it has.
  absl::Status CompareFailed(const nlohmann::json& txn, std::string_view key,
                             int64_t expected_mod_revision);
  bool WatchCreated() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return watch_created_; }

  const EtcdOptions opts_;
  std::unique_ptr<internal::EtcdHttp> http_;
  internal::WatchHub hub_;

  mutable absl::Mutex mu_;
  // Highest etcd revision whose events were delivered to local watchers.
  int64_t delivered_ ABSL_GUARDED_BY(mu_);
  // Highest etcd revision seen in any answer (>= delivered_).
  int64_t seen_ ABSL_GUARDED_BY(mu_);
  int64_t compacted_ ABSL_GUARDED_BY(mu_) = 0;  // store revision
  bool watch_created_ ABSL_GUARDED_BY(mu_) = false;
  std::string fence_key_ ABSL_GUARDED_BY(mu_);  // etcd key; empty: no fence
  int64_t fence_rev_ ABSL_GUARDED_BY(mu_) = 0;

  // The watch stream being read (stopped by the destructor).
  absl::Mutex stream_mu_;
  bool stopping_ ABSL_GUARDED_BY(stream_mu_) = false;
  internal::EtcdHttpStream* stream_ ABSL_GUARDED_BY(stream_mu_) = nullptr;
  std::thread watch_thread_;
};

}  // namespace batchd::store
