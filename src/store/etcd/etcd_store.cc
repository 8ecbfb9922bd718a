#include "store/etcd/etcd_store.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/string_view.h"
#include "store/errors.h"
#include "store/internal/etcd_http.h"

namespace batchd::store {

using Json = nlohmann::json;

namespace {

std::string B64(std::string_view s) { return absl::Base64Escape(Sv(s)); }

// A range's start key: etcd refuses an empty key, "\0" is the first one.
std::string StartKey(std::string_view s) {
  return B64(s.empty() ? std::string_view("\0", 1) : s);
}

std::string UnB64(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || !it->is_string()) return "";
  std::string out;
  if (!absl::Base64Unescape(it->get<std::string>(), &out)) return "";
  return out;
}

// int64 fields come as JSON strings (proto3 JSON); absent means 0.
int64_t Int(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  int64_t v = 0;
  if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &v)) return v;
  return 0;
}

bool Bool(const Json& j, const char* field) {
  auto it = j.find(field);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

const Json& Field(const Json& j, const char* field) {
  static const Json kEmpty = Json::object();
  auto it = j.find(field);
  return it == j.end() || !it->is_object() ? kEmpty : *it;
}

// A transaction's responses (an empty array when absent).
const Json& Responses(const Json& txn) {
  static const Json kEmpty = Json::array();
  auto it = txn.find("responses");
  return it == txn.end() || !it->is_array() ? kEmpty : *it;
}

// The first response's `field` (an empty object when absent).
const Json& FirstResponse(const Json& responses, const char* field) {
  static const Json kEmpty = Json::object();
  return responses.empty() ? kEmpty : Field(responses[0], field);
}

// The first key after every key that starts with `p` ("\0": no end).
std::string PrefixEnd(std::string p) {
  while (!p.empty() && static_cast<unsigned char>(p.back()) == 0xff) p.pop_back();
  if (p.empty()) return std::string(1, '\0');
  p.back() = static_cast<char>(static_cast<unsigned char>(p.back()) + 1);
  return p;
}

bool Reserved(std::string_view key) {
  return !key.empty() && static_cast<unsigned char>(key.front()) == 0xff;
}

// etcd's error messages (gRPC status through the gateway) as Store errors.
absl::Status MapError(int http_code, const std::string& body) {
  std::string message = body;
  int64_t grpc_code = 0;
  Json j = Json::parse(body, nullptr, false);
  if (j.is_object()) {
    const Json* e = &j;
    if (j.contains("error") && j["error"].is_object()) e = &j["error"];
    if (e->contains("message") && (*e)["message"].is_string()) {
      message = (*e)["message"].get<std::string>();
    } else if (e->contains("error") && (*e)["error"].is_string()) {
      message = (*e)["error"].get<std::string>();
    }
    grpc_code = Int(*e, "code");
    if (grpc_code == 0) grpc_code = Int(*e, "grpc_code");
  }
  if (absl::StrContains(message, "required revision has been compacted")) {
    return absl::OutOfRangeError("etcdserver: mvcc: required revision has been compacted");
  }
  if (absl::StrContains(message, "future revision")) {
    return absl::OutOfRangeError("etcdserver: mvcc: required revision is a future revision");
  }
  if (absl::StrContains(message, "too many operations") ||
      absl::StrContains(message, "request is too large") ||
      absl::StrContains(message, "larger than max")) {
    return absl::InvalidArgumentError(message);
  }
  if (absl::StrContains(message, "database space exceeded")) {
    return absl::ResourceExhaustedError(message);
  }
  if (grpc_code == 14 || http_code == 503 || absl::StrContains(message, "no leader") ||
      absl::StrContains(message, "leader changed") || absl::StrContains(message, "timed out") ||
      absl::StrContains(message, "unhealthy")) {
    return absl::UnavailableError(message);
  }
  if (grpc_code == 4) return absl::DeadlineExceededError(message);
  return absl::InternalError(absl::StrCat("etcd answered HTTP ", http_code, ": ", message));
}

}  // namespace

EtcdStore::EtcdStore(EtcdOptions options, std::unique_ptr<internal::EtcdHttp> http,
                     int64_t start_etcd_rev)
    : opts_(std::move(options)),
      http_(std::move(http)),
      hub_(start_etcd_rev - opts_.revision_offset, opts_.history),
      delivered_(start_etcd_rev),
      seen_(start_etcd_rev) {}

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(EtcdOptions options) {
  if (Reserved(options.prefix) || absl::StrContains(options.prefix, std::string(1, '\xff'))) {
    return absl::InvalidArgumentError("--etcd-prefix may not contain byte 0xff");
  }
  internal::EtcdHttpOptions ho;
  ho.servers = options.servers;
  ho.ca_file = options.ca_file;
  ho.cert_file = options.cert_file;
  ho.key_file = options.key_file;
  ho.request_timeout = options.request_timeout;
  auto http = internal::EtcdHttp::Create(std::move(ho));
  if (!http.ok()) return http.status();
  // The current revision: a count-only range over the prefix.
  Json req = {{"key", StartKey(options.prefix)},
              {"range_end", B64(PrefixEnd(options.prefix))},
              {"count_only", true}};
  auto r = (*http)->Post("/v3/kv/range", req.dump());
  if (!r.ok()) return r.status();
  if (r->code != 200) return MapError(r->code, r->body);
  Json j = Json::parse(r->body, nullptr, false);
  if (!j.is_object()) return absl::InternalError("etcd: unparsable range answer");
  const int64_t rev = Int(Field(j, "header"), "revision");
  if (rev < options.revision_offset) {
    return absl::FailedPreconditionError(absl::StrCat(
        "etcd revision ", rev, " is below the revision offset ", options.revision_offset));
  }
  std::unique_ptr<EtcdStore> store(new EtcdStore(std::move(options), std::move(*http), rev));
  store->watch_thread_ = std::thread([s = store.get()] { s->WatchLoop(); });
  EtcdStore* raw = store.get();
  absl::MutexLock lock(&raw->mu_);
  if (!raw->mu_.AwaitWithTimeout(absl::Condition(raw, &EtcdStore::WatchCreated),
                                 raw->opts_.request_timeout)) {
    return absl::UnavailableError("etcd: the watch on the store's prefix did not start");
  }
  return store;
}

EtcdStore::~EtcdStore() {
  {
    absl::MutexLock lock(&stream_mu_);
    stopping_ = true;
    if (stream_ != nullptr) stream_->Stop();
  }
  if (watch_thread_.joinable()) watch_thread_.join();
}

void EtcdStore::NoteRevision(int64_t etcd_rev) {
  absl::MutexLock lock(&mu_);
  seen_ = std::max(seen_, etcd_rev);
}

absl::StatusOr<std::string> EtcdStore::Call(const std::string& path, const std::string& body) {
  auto r = http_->Post(path, body);
  absl::Status st = !r.ok() ? r.status() : r->code != 200 ? MapError(r->code, r->body)
                                                           : absl::OkStatus();
  // etcd out of reach (down, no leader): the API's 503.
  if (absl::IsUnavailable(st)) return UnreachableError(st.message());
  if (!st.ok()) return st;
  return std::move(r->body);
}

void EtcdStore::AwaitDelivered(int64_t etcd_rev) {
  absl::MutexLock lock(&mu_);
  seen_ = std::max(seen_, etcd_rev);
  auto done = [this, etcd_rev]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return delivered_ >= etcd_rev;
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), opts_.delivery_timeout)) {
    BATCHD_LOG_WARN("etcd store: revision {} committed but not back on the watch after {}",
                    etcd_rev, absl::FormatDuration(opts_.delivery_timeout));
  }
}

absl::StatusOr<KeyValue> EtcdStore::Get(std::string_view key) {
  if (key.empty() || Reserved(key)) return absl::NotFoundError(absl::StrCat("key ", Sv(key)));
  Json req = {{"key", B64(opts_.prefix + std::string(key))}};
  auto body = Call("/v3/kv/range", req.dump());
  if (!body.ok()) return body.status();
  Json j = Json::parse(*body, nullptr, false);
  NoteRevision(Int(Field(j, "header"), "revision"));
  if (!j.contains("kvs") || !j["kvs"].is_array() || j["kvs"].empty()) {
    return absl::NotFoundError(absl::StrCat("key ", Sv(key), " not found"));
  }
  const Json& kv = j["kvs"][0];
  return KeyValue{std::string(key), UnB64(kv, "value"),
                  Int(kv, "create_revision") - opts_.revision_offset,
                  Int(kv, "mod_revision") - opts_.revision_offset};
}

absl::StatusOr<RangeResult> EtcdStore::Range(std::string_view prefix,
                                             std::string_view start_after, int64_t limit) {
  return DoRange(prefix, start_after, limit, 0);
}

absl::StatusOr<RangeResult> EtcdStore::RangeAtRevision(std::string_view prefix,
                                                       std::string_view start_after,
                                                       int64_t limit, int64_t revision) {
  if (revision < 0) return absl::InvalidArgumentError("negative revision");
  return DoRange(prefix, start_after, limit,
                 revision == 0 ? 0 : revision + opts_.revision_offset);
}

absl::StatusOr<RangeResult> EtcdStore::DoRange(std::string_view prefix,
                                               std::string_view start_after, int64_t limit,
                                               int64_t etcd_revision) {
  if (limit < 0) return absl::InvalidArgumentError("negative range limit");
  // Data keys lie in [P, P+"\xff"); the 0xff space holds final values.
  const std::string data_end = opts_.prefix + "\xff";
  std::string key = opts_.prefix + std::string(prefix);
  std::string end = prefix.empty() ? data_end : std::min(PrefixEnd(key), data_end);
  if (!start_after.empty()) key = std::max(key, opts_.prefix + std::string(start_after) + '\0');
  const bool empty = key >= end;
  Json req = {{"key", StartKey(empty ? data_end : key)}};
  if (!empty) req["range_end"] = B64(end);
  if (limit > 0) req["limit"] = std::to_string(limit);
  if (etcd_revision > 0) req["revision"] = std::to_string(etcd_revision);
  auto body = Call("/v3/kv/range", req.dump());
  if (!body.ok()) return body.status();
  Json j = Json::parse(*body, nullptr, false);
  if (!j.is_object()) return absl::InternalError("etcd: unparsable range answer");
  RangeResult out;
  const int64_t header_rev = Int(Field(j, "header"), "revision");
  NoteRevision(header_rev);
  out.revision =
      (etcd_revision > 0 ? etcd_revision : header_rev) - opts_.revision_offset;
  if (empty) return out;
  out.more = Bool(j, "more");
  if (j.contains("kvs") && j["kvs"].is_array()) {
    out.kvs.reserve(j["kvs"].size());
    for (const Json& kv : j["kvs"]) {
      std::string k = UnB64(kv, "key");
      out.kvs.push_back(KeyValue{k.substr(std::min(k.size(), opts_.prefix.size())),
                                 UnB64(kv, "value"),
                                 Int(kv, "create_revision") - opts_.revision_offset,
                                 Int(kv, "mod_revision") - opts_.revision_offset});
    }
  }
  return out;
}

namespace {

Json Compare(const std::string& key, int64_t expected_etcd_mod) {
  if (expected_etcd_mod > 0) {
    return {{"result", "EQUAL"},
            {"target", "MOD"},
            {"key", B64(key)},
            {"mod_revision", std::to_string(expected_etcd_mod)}};
  }
  // Exists: created at some revision.
  return {{"result", "GREATER"}, {"target", "CREATE"}, {"key", B64(key)},
          {"create_revision", "0"}};
}

}  // namespace

absl::StatusOr<nlohmann::json> EtcdStore::Txn(nlohmann::json req) {
  std::string fence_key;
  int64_t fence_rev = 0;
  {
    absl::MutexLock lock(&mu_);
    fence_key = fence_key_;
    fence_rev = fence_rev_;
  }
  if (fence_rev > 0) {
    req["compare"].push_back({{"result", "EQUAL"},
                              {"target", "MOD"},
                              {"key", B64(fence_key)},
                              {"mod_revision", std::to_string(fence_rev)}});
    if (!req.contains("failure")) req["failure"] = Json::array();
    req["failure"].push_back({{"request_range", {{"key", B64(fence_key)}}}});
  }
  auto body = Call("/v3/kv/txn", req.dump());
  if (!body.ok()) return body.status();
  Json j = Json::parse(*body, nullptr, false);
  if (!j.is_object()) return absl::InternalError("etcd: unparsable txn answer");
  if (fence_rev > 0 && !Bool(j, "succeeded") && j.contains("responses") &&
      j["responses"].is_array() && !j["responses"].empty()) {
    const Json& range = Field(j["responses"].back(), "response_range");
    const int64_t now = range.contains("kvs") && range["kvs"].is_array() && !range["kvs"].empty()
                            ? Int(range["kvs"][0], "mod_revision")
                            : 0;
    if (now != fence_rev) {
      return absl::FailedPreconditionError(absl::StrCat(
          "fenced: this replica's leadership ended (its fence key was taken over at etcd "
          "revision ", now, "); it writes no more"));
    }
  }
  return j;
}

absl::StatusOr<int64_t> EtcdStore::TakeFence(std::string_view key, std::string_view holder) {
  if (key.empty() || Reserved(key)) return absl::InvalidArgumentError("invalid fence key");
  const std::string ekey = opts_.prefix + std::string(key);
  Json req = {{"key", B64(ekey)}, {"value", B64(holder)}};
  auto body = Call("/v3/kv/put", req.dump());
  if (!body.ok()) return body.status();
  Json j = Json::parse(*body, nullptr, false);
  const int64_t rev = Int(Field(j, "header"), "revision");
  if (rev <= 0) return absl::InternalError("etcd: put answered no revision");
  AwaitDelivered(rev);
  absl::MutexLock lock(&mu_);
  fence_key_ = ekey;
  fence_rev_ = rev;
  return rev - opts_.revision_offset;
}

absl::StatusOr<KeyValue> EtcdStore::Create(std::string_view key, std::string value) {
  if (key.empty()) return absl::InvalidArgumentError("empty key");
  if (Reserved(key)) return absl::InvalidArgumentError("keys may not begin with byte 0xff");
  const std::string ekey = opts_.prefix + std::string(key);
  Json req = {
      {"compare", Json::array({{{"result", "EQUAL"},
                                {"target", "MOD"},
                                {"key", B64(ekey)},
                                {"mod_revision", "0"}}})},
      {"success",
       Json::array({{{"request_put", {{"key", B64(ekey)}, {"value", B64(value)}}}},
                    {{"request_delete_range",
                      {{"key", B64(opts_.prefix + "\xff" + std::string(key))}}}}})}};
  auto txn = Txn(std::move(req));
  if (!txn.ok()) return txn.status();
  Json& j = *txn;
  const int64_t rev = Int(Field(j, "header"), "revision");
  if (!Bool(j, "succeeded")) {
    NoteRevision(rev);
    return absl::AlreadyExistsError(absl::StrCat("key ", Sv(key), " already exists"));
  }
  AwaitDelivered(rev);
  const int64_t r = rev - opts_.revision_offset;
  return KeyValue{std::string(key), std::move(value), r, r};
}

absl::StatusOr<KeyValue> EtcdStore::Update(std::string_view key, std::string value,
                                           int64_t expected_mod_revision) {
  if (key.empty() || Reserved(key)) return absl::InvalidArgumentError("invalid key");
  const std::string ekey = opts_.prefix + std::string(key);
  const int64_t expected =
      expected_mod_revision > 0 ? expected_mod_revision + opts_.revision_offset : 0;
  Json req = {
      {"compare", Json::array({Compare(ekey, expected)})},
      {"success", Json::array({{{"request_put",
                                 {{"key", B64(ekey)}, {"value", B64(value)}, {"prev_kv", true}}}}})},
      {"failure", Json::array({{{"request_range", {{"key", B64(ekey)}}}}})}};
  auto txn = Txn(std::move(req));
  if (!txn.ok()) return txn.status();
  Json& j = *txn;
  const int64_t rev = Int(Field(j, "header"), "revision");
  const Json& responses = Responses(j);
  if (!Bool(j, "succeeded")) return CompareFailed(j, key, expected_mod_revision);
  const Json& put = FirstResponse(responses, "response_put");
  const int64_t created = Int(Field(put, "prev_kv"), "create_revision");
  AwaitDelivered(rev);
  return KeyValue{std::string(key), std::move(value), created - opts_.revision_offset,
                  rev - opts_.revision_offset};
}

absl::Status EtcdStore::CompareFailed(const Json& txn, std::string_view key,
                                      int64_t expected_mod_revision) {
  NoteRevision(Int(Field(txn, "header"), "revision"));
  const Json& range = FirstResponse(Responses(txn), "response_range");
  if (!range.contains("kvs") || range["kvs"].empty()) {
    return absl::NotFoundError(absl::StrCat("key ", Sv(key), " not found"));
  }
  return absl::AbortedError(absl::StrCat(
      "key ", Sv(key), " was modified at revision ",
      Int(range["kvs"][0], "mod_revision") - opts_.revision_offset, ", not ",
      expected_mod_revision));
}

absl::StatusOr<KeyValue> EtcdStore::Delete(std::string_view key, int64_t expected_mod_revision) {
  return DeleteWithFinalValueImpl(key, expected_mod_revision, nullptr);
}

absl::StatusOr<KeyValue> EtcdStore::DeleteWithFinalValue(std::string_view key,
                                                         int64_t expected_mod_revision,
                                                         std::string final_value) {
  return DeleteWithFinalValueImpl(key, expected_mod_revision, &final_value);
}

absl::StatusOr<KeyValue> EtcdStore::DeleteWithFinalValueImpl(std::string_view key,
                                                             int64_t expected_mod_revision,
                                                             std::string* final_value) {
  if (key.empty() || Reserved(key)) return absl::InvalidArgumentError("invalid key");
  const std::string ekey = opts_.prefix + std::string(key);
  const int64_t expected =
      expected_mod_revision > 0 ? expected_mod_revision + opts_.revision_offset : 0;
  Json success = Json::array();
  if (final_value != nullptr) {
    // The final value, for the delete's watch event (same revision).
    success.push_back({{"request_put",
                        {{"key", B64(opts_.prefix + "\xff" + std::string(key))},
                         {"value", B64(*final_value)}}}});
  }
  success.push_back({{"request_delete_range", {{"key", B64(ekey)}, {"prev_kv", true}}}});
  Json req = {{"compare", Json::array({Compare(ekey, expected)})},
              {"success", std::move(success)},
              {"failure", Json::array({{{"request_range", {{"key", B64(ekey)}}}}})}};
  auto txn = Txn(std::move(req));
  if (!txn.ok()) return txn.status();
  Json& j = *txn;
  const int64_t rev = Int(Field(j, "header"), "revision");
  const Json& responses = Responses(j);
  if (!Bool(j, "succeeded")) return CompareFailed(j, key, expected_mod_revision);
  const Json& del = Field(responses.back(), "response_delete_range");
  KeyValue out{std::string(key), "", 0, rev - opts_.revision_offset};
  if (del.contains("prev_kvs") && del["prev_kvs"].is_array() && !del["prev_kvs"].empty()) {
    const Json& prev = del["prev_kvs"][0];
    out.value = UnB64(prev, "value");
    out.create_revision = Int(prev, "create_revision") - opts_.revision_offset;
  }
  if (final_value != nullptr) out.value = std::move(*final_value);
  AwaitDelivered(rev);
  return out;
}

absl::StatusOr<std::unique_ptr<WatchHandle>> EtcdStore::Watch(std::string_view prefix,
                                                              int64_t after_revision,
                                                              WatchCallback cb) {
  return hub_.Watch(prefix, after_revision, std::move(cb));
}

absl::Status EtcdStore::Compact(int64_t revision) {
  {
    absl::MutexLock lock(&mu_);
    if (revision <= compacted_) return absl::OkStatus();
  }
  Json req = {{"revision", std::to_string(revision + opts_.revision_offset)}, {"physical", false}};
  auto body = Call("/v3/kv/compaction", req.dump());
  if (!body.ok() && !absl::StrContains(body.status().message(), "has been compacted")) {
    return body.status();
  }
  {
    absl::MutexLock lock(&mu_);
    compacted_ = std::max(compacted_, revision);
  }
  (void)hub_.Compact(std::min(revision, hub_.Revision()));
  // Final values at or below the compacted revision are no longer needed
  // (their deletes' events are past); remove them, each only if unchanged.
  const std::string tomb = opts_.prefix + "\xff";
  std::string from = tomb;
  for (;;) {
    Json range = {{"key", B64(from)},
                  {"range_end", B64(PrefixEnd(tomb))},
                  {"max_mod_revision", std::to_string(revision + opts_.revision_offset)},
                  {"keys_only", true},
                  {"limit", "1000"}};
    auto found = Call("/v3/kv/range", range.dump());
    if (!found.ok()) return absl::OkStatus();  // Left for the next compaction.
    Json j = Json::parse(*found, nullptr, false);
    if (!j.contains("kvs") || !j["kvs"].is_array() || j["kvs"].empty()) return absl::OkStatus();
    for (const Json& kv : j["kvs"]) {
      const std::string k = UnB64(kv, "key");
      Json del = {
          {"compare", Json::array({{{"result", "EQUAL"},
                                    {"target", "MOD"},
                                    {"key", B64(k)},
                                    {"mod_revision", std::to_string(Int(kv, "mod_revision"))}}})},
          {"success", Json::array({{{"request_delete_range", {{"key", B64(k)}}}}})}};
      (void)Call("/v3/kv/txn", del.dump());
      from = k + '\0';
    }
    if (!Bool(j, "more")) return absl::OkStatus();
  }
}

absl::StatusOr<store::CompactRound> EtcdStore::CompactAgreed(int64_t time, int64_t revision) {
  const std::string key(kCompactRevKey);
  Json req = {
      {"compare", Json::array({{{"result", "EQUAL"},
                                {"target", "VERSION"},
                                {"key", B64(key)},
                                {"version", std::to_string(time)}}})},
      {"success", Json::array({{{"request_put",
                                 {{"key", B64(key)},
                                  {"value", B64(std::to_string(revision + opts_.revision_offset))}}}}})},
      {"failure", Json::array({{{"request_range", {{"key", B64(key)}}}}})}};
  auto body = Call("/v3/kv/txn", req.dump());
  if (!body.ok()) return body.status();
  Json j = Json::parse(*body, nullptr, false);
  if (!j.is_object()) return absl::InternalError("etcd: unparsable txn answer");
  const int64_t header_rev = Int(Field(j, "header"), "revision");
  NoteRevision(header_rev);
  store::CompactRound out;
  out.revision = header_rev - opts_.revision_offset;
  if (!Bool(j, "succeeded")) {
    // Another process won this round: adopt its time, and note what it
    // compacted (the key's value) so this process answers 410 alike.
    const Json& range = FirstResponse(Responses(j), "response_range");
    if (range.contains("kvs") && range["kvs"].is_array() && !range["kvs"].empty()) {
      const Json& kv = range["kvs"][0];
      out.time = Int(kv, "version");
      int64_t theirs = 0;
      if (absl::SimpleAtoi(UnB64(kv, "value"), &theirs) && theirs - opts_.revision_offset > 0) {
        const int64_t r = theirs - opts_.revision_offset;
        {
          absl::MutexLock lock(&mu_);
          compacted_ = std::max(compacted_, r);
        }
        (void)hub_.Compact(std::min(r, hub_.Revision()));
      }
    }
    return out;
  }
  out.time = time + 1;
  if (revision > 0) {
    if (absl::Status st = Compact(revision); !st.ok()) return st;
    out.compacted = revision;
  }
  return out;
}

int64_t EtcdStore::CompactedRevision() {
  absl::MutexLock lock(&mu_);
  return compacted_;
}

int64_t EtcdStore::Revision() {
  absl::MutexLock lock(&mu_);
  return std::max(delivered_, seen_) - opts_.revision_offset;
}

int64_t EtcdStore::OldestWatchableRevision() { return hub_.OldestWatchableRevision(); }

int64_t EtcdStore::DeliveredEtcdRevision() const {
  absl::MutexLock lock(&mu_);
  return delivered_;
}

void EtcdStore::WatchLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  for (;;) {
    int64_t from = 0;
    {
      absl::MutexLock lock(&mu_);
      from = delivered_ + 1;
    }
    Json req = {{"create_request",
                 {{"key", StartKey(opts_.prefix)},
                  {"range_end", B64(PrefixEnd(opts_.prefix))},
                  {"start_revision", std::to_string(from)},
                  {"prev_kv", true},
                  {"progress_notify", true}}}};
    auto stream = http_->OpenStream("/v3/watch", req.dump());
    if (stream.ok()) {
      {
        absl::MutexLock lock(&stream_mu_);
        if (stopping_) return;
        stream_ = stream->get();
      }
      absl::Status fatal;
      absl::Status st =
          (*stream)->Run([&](const std::string& line) { return OnWatchLine(line, &fatal); });
      {
        absl::MutexLock lock(&stream_mu_);
        stream_ = nullptr;
        if (stopping_) return;
      }
      if (!fatal.ok()) {
        BATCHD_LOG_ERROR("etcd store: {}; exiting so that a restart relists", fatal.ToString());
        std::_Exit(75);
      }
      int64_t next = 0;
      {
        absl::MutexLock lock(&mu_);
        next = delivered_ + 1;
      }
      BATCHD_LOG_WARN("etcd store: watch ended ({}); reopening from etcd revision {}",
                      st.ToString(), next);
      backoff = absl::Milliseconds(100);
    } else {
      BATCHD_LOG_WARN("etcd store: cannot open the watch: {}", stream.status().ToString());
    }
    absl::MutexLock lock(&stream_mu_);
    auto stopped = [this]() ABSL_SHARED_LOCKS_REQUIRED(stream_mu_) { return stopping_; };
    if (stream_mu_.AwaitWithTimeout(absl::Condition(&stopped), backoff)) return;
    backoff = std::min(backoff * 2, absl::Seconds(2));
  }
}

bool EtcdStore::OnWatchLine(const std::string& line, absl::Status* fatal) {
  Json j = Json::parse(line, nullptr, false);
  if (!j.is_object()) return false;
  if (j.contains("error")) {
    BATCHD_LOG_WARN("etcd store: watch error: {}", MapError(0, line).ToString());
    return false;
  }
  const Json& result = Field(j, "result");
  const int64_t header_rev = Int(Field(result, "header"), "revision");
  if (Bool(result, "created")) {
    absl::MutexLock lock(&mu_);
    watch_created_ = true;
    seen_ = std::max(seen_, header_rev);
  }
  if (Bool(result, "canceled")) {
    if (Int(result, "compact_revision") > 0) {
      *fatal = absl::OutOfRangeError(absl::StrCat(
          "the watch's history was compacted (at revision ", Int(result, "compact_revision"),
          ") while it was disconnected"));
    }
    return false;
  }
  const size_t plen = opts_.prefix.size();
  const int64_t off = opts_.revision_offset;
  std::vector<Event> events;
  std::map<std::string, std::string> finals;  // data key -> final value, this revision
  int64_t finals_rev = 0;
  int64_t last = 0;
  if (result.contains("events") && result["events"].is_array()) {
    for (const Json& ev : result["events"]) {
      const Json& kv = Field(ev, "kv");
      const Json& prev = Field(ev, "prev_kv");
      std::string key = UnB64(kv, "key");
      const int64_t mod = Int(kv, "mod_revision");
      last = std::max(last, mod);
      if (key.size() < plen) continue;
      std::string skey = key.substr(plen);
      const bool del = ev.contains("type") && ev["type"] == "DELETE";
      if (Reserved(skey)) {
        if (!del) {
          if (finals_rev != mod) finals.clear();
          finals_rev = mod;
          finals[skey.substr(1)] = UnB64(kv, "value");
        }
        continue;
      }
      Event e;
      if (!prev.empty()) {
        e.prev = KeyValue{skey, UnB64(prev, "value"), Int(prev, "create_revision") - off,
                          Int(prev, "mod_revision") - off};
      }
      if (del) {
        e.type = Event::Type::kDelete;
        e.kv = KeyValue{skey, e.prev.value, e.prev.create_revision, mod - off};
        if (finals_rev == mod) {
          auto it = finals.find(skey);
          if (it != finals.end()) e.kv.value = it->second;
        }
      } else {
        e.type = Event::Type::kPut;
        e.kv = KeyValue{skey, UnB64(kv, "value"), Int(kv, "create_revision") - off, mod - off};
      }
      events.push_back(std::move(e));
    }
  }
  hub_.Publish(std::move(events));
  // Events: delivered up to the newest; a progress notice (no events, not
  // the creation): every event up to its revision was sent.
  int64_t delivered = last;
  if (last == 0 && !Bool(result, "created")) delivered = header_rev;
  absl::MutexLock lock(&mu_);
  delivered_ = std::max(delivered_, delivered);
  seen_ = std::max(seen_, delivered_);
  return true;
}

}  // namespace batchd::store
