// InProcessClient: a Client over the server's own Registry. Writes go
// through the same validation as HTTP requests; reads come from the watch
// cache. Thread-safe.
#pragma once

#include "client/client.h"
#include "registry/registry.h"

namespace batchd::client {

class InProcessClient : public Client {
 public:
  explicit InProcessClient(registry::Registry& registry, std::string field_manager = "batchd")
      : registry_(registry), field_manager_(std::move(field_manager)) {}

  const api::Scheme& scheme() const override { return registry_.scheme(); }
  absl::StatusOr<api::Json> Get(const api::KindDef& k, const std::string& ns,
                                const std::string& name) override;
  absl::StatusOr<ListResult> List(const api::KindDef& k, const std::string& ns,
                                  const Selector& sel = {}) override;
  absl::StatusOr<api::Json> Create(const api::KindDef& k, const std::string& ns,
                                   api::Json obj) override;
  std::vector<absl::StatusOr<api::Json>> CreateMany(
      const api::KindDef& k, std::vector<std::pair<std::string, api::Json>> objs) override;
  absl::StatusOr<api::Json> Update(const api::KindDef& k, api::Json obj) override;
  absl::StatusOr<api::Json> UpdateStatus(const api::KindDef& k, api::Json obj) override;
  absl::StatusOr<std::string> UpdateStatusForVersion(const api::KindDef& k,
                                                     api::Json obj) override;
  std::vector<absl::StatusOr<api::Json>> UpdateStatusMany(const api::KindDef& k,
                                                          std::vector<StatusEdit> edits) override;
  absl::StatusOr<api::Json> MergePatch(const api::KindDef& k, const std::string& ns,
                                       const std::string& name, const api::Json& patch,
                                       bool status = false) override;
  absl::Status Delete(const api::KindDef& k, const std::string& ns, const std::string& name,
                      const DeleteOptions& opts = {}) override;
  // One store commit (Registry::WriteChain).
  std::vector<absl::StatusOr<api::Json>> WriteChain(std::vector<ChainedWrite> writes) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const api::KindDef& k, const std::string& ns,
                                                     const Selector& sel,
                                                     const std::string& resource_version) override;

  // The options every write of an in-process client carries (the simulator
  // dry-runs its scenario's objects with the same ones).
  static registry::WriteOptions Opts();

 private:
  registry::Registry& registry_;
  std::string field_manager_;
};

}  // namespace batchd::client
