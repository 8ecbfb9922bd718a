#include "reconcile/leader_election.h"

#include <unistd.h>

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/meta/time_util.h"
#include "common/logging.h"

namespace batchd::reconcile {

using api::Json;

namespace {

std::string DefaultIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    snprintf(host, sizeof(host), "batchd");
  }
  std::random_device rd;
  return absl::StrFormat("%s_%08x%08x", host, rd(), rd());
}

std::string Str(const Json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

absl::Status ValidateLeaderElection(const LeaderElectionOptions& o) {
  if (o.retry_period <= absl::ZeroDuration() || o.renew_deadline <= o.retry_period * 1.2 ||
      o.lease_duration <= o.renew_deadline) {
    return absl::InvalidArgumentError(absl::StrCat(
        "leader election wants lease duration > renew deadline > 1.2 x retry period > 0; got ",
        absl::FormatDuration(o.lease_duration), ", ", absl::FormatDuration(o.renew_deadline), ", ",
        absl::FormatDuration(o.retry_period)));
  }
  if (o.lease_duration < absl::Seconds(1)) {
    return absl::InvalidArgumentError("leader election lease duration must be at least 1s");
  }
  return absl::OkStatus();
}

LeaderElector::LeaderElector(client::Client& client, Clock& clock, LeaderElectionOptions options,
                             std::function<void()> on_started_leading,
                             std::function<void()> on_stopped_leading)
    : client_(client),
      clock_(clock),
      opts_(std::move(options)),
      lease_kind_(*client.scheme().ByResource("coordination.k8s.io", "v1", "leases")),
      on_started_(std::move(on_started_leading)),
      on_stopped_(std::move(on_stopped_leading)) {
  if (opts_.identity.empty()) opts_.identity = DefaultIdentity();
}

LeaderElector::~LeaderElector() { Stop(); }

bool LeaderElector::TryAcquireOrRenew() {
  if (stopped_leading_.load()) return false;  // Never again in this process.
  const absl::Time now = clock_.Now();
  const std::string now_str = api::meta::FormatRfc3339Micro(now);
  const int64_t duration_s = absl::ToInt64Seconds(opts_.lease_duration);
  // When the previous holder's lease expired by local time (for the log).
  absl::Time expired_at = absl::InfinitePast();
  auto got = client_.Get(lease_kind_, opts_.lease_namespace, opts_.lease_name);
  if (!got.ok() && absl::IsNotFound(got.status())) {
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", opts_.lease_name}, {"namespace", opts_.lease_namespace}}},
                  {"spec",
                   {{"holderIdentity", opts_.identity},
                    {"leaseDurationSeconds", duration_s},
                    {"acquireTime", now_str},
                    {"renewTime", now_str},
                    {"leaseTransitions", 0}}}};
    auto created = client_.Create(lease_kind_, opts_.lease_namespace, std::move(lease));
    if (!created.ok()) return false;
    absl::MutexLock lock(&mu_);
    observed_rv_ = Str((*created)["metadata"], "resourceVersion");
    observed_time_ = now;
    observed_holder_ = opts_.identity;
    observed_duration_ = opts_.lease_duration;
    last_renew_ = now;
  } else if (!got.ok()) {
    BATCHD_LOG_WARN("leader election: reading lease {}/{}: {}", opts_.lease_namespace,
                    opts_.lease_name, got.status().ToString());
    return false;
  } else {
    Json lease = std::move(*got);
    Json spec = lease.value("spec", Json::object());
    const std::string rv = Str(lease["metadata"], "resourceVersion");
    const std::string holder = Str(spec, "holderIdentity");
    int64_t held_for_s = spec.value("leaseDurationSeconds", int64_t{0});
    if (held_for_s <= 0) held_for_s = duration_s;
    {
      absl::MutexLock lock(&mu_);
      if (rv != observed_rv_) {
        observed_rv_ = rv;
        observed_time_ = now;
      }
      observed_holder_ = holder;
      observed_duration_ = absl::Seconds(held_for_s);
      if (!holder.empty() && holder != opts_.identity &&
          observed_time_ + absl::Seconds(held_for_s) > now) {
        return false;  // Another replica leads and its lease is valid.
      }
      if (!holder.empty() && holder != opts_.identity) {
        expired_at = observed_time_ + absl::Seconds(held_for_s);
      }
    }
    int64_t transitions = spec.value("leaseTransitions", int64_t{0});
    if (holder != opts_.identity) {
      spec["acquireTime"] = now_str;
      ++transitions;
    }
    spec["holderIdentity"] = opts_.identity;
    spec["leaseDurationSeconds"] = duration_s;
    spec["renewTime"] = now_str;
    spec["leaseTransitions"] = transitions;
    lease["spec"] = std::move(spec);
    // The resourceVersion read makes this a compare-and-swap.
    auto updated = client_.Update(lease_kind_, std::move(lease));
    if (!updated.ok()) return false;
    absl::MutexLock lock(&mu_);
    observed_rv_ = Str((*updated)["metadata"], "resourceVersion");
    observed_time_ = now;
    observed_holder_ = opts_.identity;
    observed_duration_ = opts_.lease_duration;
    last_renew_ = now;
  }
  if (!stopped_leading_.load() && !leading_.exchange(true)) {
    // Times in Unix milliseconds, for failover measurements (bench/etcd_bench.sh).
    BATCHD_LOG_INFO(
        "leader election: {} now leads ({}/{}); previous lease expired at {}, attempt at {}, "
        "acquired at {} (local ms)",
        opts_.identity, opts_.lease_namespace, opts_.lease_name,
        expired_at == absl::InfinitePast() ? int64_t{0} : absl::ToUnixMillis(expired_at),
        absl::ToUnixMillis(now), absl::ToUnixMillis(clock_.Now()));
    if (on_started_) on_started_();
  }
  return !stopped_leading_.load();
}

void LeaderElector::ObserveLease(const Json& lease) {
  if (!lease.is_object()) return;
  auto meta = lease.find("metadata");
  auto spec = lease.find("spec");
  if (meta == lease.end() || spec == lease.end() || !spec->is_object()) return;
  const std::string rv = Str(*meta, "resourceVersion");
  if (rv.empty()) return;
  int64_t held_for_s = spec->value("leaseDurationSeconds", int64_t{0});
  if (held_for_s <= 0) held_for_s = absl::ToInt64Seconds(opts_.lease_duration);
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (rv == observed_rv_) return;
  observed_rv_ = rv;
  observed_time_ = now;
  observed_holder_ = Str(*spec, "holderIdentity");
  observed_duration_ = absl::Seconds(held_for_s);
}

absl::Duration LeaderElector::NextAttemptIn(double jitter) {
  if (leading_.load()) return opts_.retry_period;
  absl::Duration wait = opts_.retry_period + opts_.retry_period * jitter;
  absl::MutexLock lock(&mu_);
  if (!observed_holder_.empty() && observed_holder_ != opts_.identity &&
      observed_duration_ > absl::ZeroDuration()) {
    // One millisecond past the expiry, so the attempt finds it expired.
    const absl::Duration to_expiry =
        observed_time_ + observed_duration_ - clock_.Now() + absl::Milliseconds(1);
    wait = std::max(absl::Milliseconds(1), std::min(wait, to_expiry));
  }
  return wait;
}

bool LeaderElector::CheckDeadline() {
  if (!leading_.load()) return false;
  absl::Time last;
  {
    absl::MutexLock lock(&mu_);
    last = last_renew_;
  }
  if (clock_.Now() - last < opts_.renew_deadline) return true;
  if (!stopped_leading_.exchange(true)) {
    leading_.store(false);
    BATCHD_LOG_ERROR("leader election: {} could not renew its lease for {}; stops leading",
                     opts_.identity, absl::FormatDuration(opts_.renew_deadline));
    if (on_stopped_) on_stopped_();
  }
  return false;
}

void LeaderElector::Start() {
  campaign_ = std::thread([this] {
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> jitter(0.0, 1.2);
    for (;;) {
      TryAcquireOrRenew();
      if (stopped_leading_.load()) return;
      // Candidates poll with jitter (client-go: JitterFactor 1.2) and try
      // again as soon as the holder's lease expires; the leader renews
      // every retry period.
      const absl::Duration wait = NextAttemptIn(jitter(rng));
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), wait)) return;
    }
  });
  // Sees each renewal when it is written (see the header). A broken watch is
  // opened again after a retry period; the polls above go on meanwhile.
  observer_ = std::thread([this] {
    client::Selector sel;
    sel.fields = absl::StrCat("metadata.name=", opts_.lease_name);
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        if (stop_) return;
      }
      if (stopped_leading_.load()) return;
      auto stream = client_.Watch(lease_kind_, opts_.lease_namespace, sel, "");
      if (stream.ok()) {
        client::WatchEvent ev;
        while (!(*stream)->done()) {
          {
            absl::MutexLock lock(&mu_);
            if (stop_) return;
          }
          if (!(*stream)->Next(&ev, absl::Milliseconds(500))) continue;
          if (ev.type == "ADDED" || ev.type == "MODIFIED") ObserveLease(ev.Object());
        }
      }
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), opts_.retry_period)) return;
    }
  });
  // The deadline is watched apart from the campaign, whose request may
  // itself hang for longer than the deadline.
  watchdog_ = std::thread([this] {
    for (;;) {
      if (leading_.load()) CheckDeadline();
      if (stopped_leading_.load()) return;
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(200))) return;
    }
  });
}

void LeaderElector::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (campaign_.joinable()) campaign_.join();
  if (watchdog_.joinable()) watchdog_.join();
  if (observer_.joinable()) observer_.join();
}

}  // namespace batchd::reconcile
