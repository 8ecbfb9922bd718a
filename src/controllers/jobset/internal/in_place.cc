#include "controllers/jobset/internal/in_place.h"

#include <algorithm>

#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/core/v1/restart_generation.h"
#include "api/jobset/v1alpha2/constants.h"
#include "api/json_access.h"
#include "common/string_view.h"
#include "api/meta/conditions.h"
#include "api/meta/object_meta.h"

namespace batchd::controllers::jobset::internal {

namespace core = api::core_v1;
using api::Json;

InPlacePod ParseInPlacePod(const Json& pod) {
  InPlacePod p;
  p.ns = api::meta::GetNamespace(pod);
  p.name = api::meta::GetName(pod);
  p.succeeded = api::StringMember(api::Member(pod, "status"), "phase") == "Succeeded";
  const Json& annotations = api::MemberAt(pod, {"metadata", "annotations"});
  int64_t g = -1;
  if (absl::SimpleAtoi(Sv(api::StringMember(annotations, core::kRestartGenerationAnnotation)),
                       &g) &&
      g >= 0) {
    p.desired = g;
  }
  p.hold = api::StringMember(annotations, core::kRestartHoldAnnotation) == "true";
  if (const Json* c = api::meta::FindCondition(pod, core::kRestartGenerationCondition)) {
    p.state = api::CopyStringMember(*c, "reason");
    p.message = api::CopyStringMember(*c, "message");
    absl::string_view m = p.message;
    if (absl::ConsumePrefix(&m, core::kGenerationMessagePrefix)) {
      int64_t r = -1;
      if (absl::SimpleAtoi(m.substr(0, m.find(':')), &r) && r >= 0) p.reported = r;
    }
  }
  return p;
}

InPlaceDecision DecideInPlace(const std::vector<InPlacePod>& pods, int64_t total_pods,
                              int32_t restarts_count_towards_max, int32_t max_restarts,
                              std::optional<int32_t> current) {
  InPlaceDecision d;
  std::vector<const InPlacePod*> live;
  int64_t succeeded = 0;
  for (const InPlacePod& p : pods) {
    if (p.succeeded) {
      ++succeeded;
    } else {
      live.push_back(&p);
    }
  }
  if (live.empty()) return d;
  int64_t g = -1;
  for (const InPlacePod* p : live) g = std::max(g, p->desired);
  if (g < 0) return d;  // Pods of a JobSet created before in-place restart: nothing to drive.
  auto ask_all = [&](int64_t generation) {
    for (const InPlacePod* p : live) {
      if (p->desired < generation) d.patches.push_back({p->ns, p->name, generation, true});
    }
  };
  // 1. A container failed in generation g: the next one, for every pod.
  for (const InPlacePod* p : live) {
    if (p->desired != g || p->reported != g || p->state != core::kGenerationContainerFailed) {
      continue;
    }
    const int64_t next = g + 1;
    if (next + restarts_count_towards_max > max_restarts) {
      d.fail = true;
      return d;
    }
    ask_all(next);
    d.previous = static_cast<int32_t>(g);
    d.started_generation = next;
    d.restart_message = absl::StrCat("pod ", p->name, ": ", p->message);
    return d;
  }
  // 2. Pods behind g join it, held.
  ask_all(g);
  if (!d.patches.empty()) return d;
  // 3. The barrier: once every pod has stopped for g (or runs it), all start.
  const bool all_present = static_cast<int64_t>(live.size()) + succeeded >= total_pods;
  bool all_reached = true, all_running = true;
  for (const InPlacePod* p : live) {
    const bool at_g = p->reported == g;
    all_reached = all_reached && at_g &&
                  (p->state == core::kGenerationHeld || p->state == core::kGenerationRunning);
    all_running = all_running && at_g && p->state == core::kGenerationRunning && !p->hold;
  }
  if (all_present && all_reached) {
    for (const InPlacePod* p : live) {
      if (p->hold) d.patches.push_back({p->ns, p->name, g, false});
    }
  }
  // 4. Every pod runs g: it is the current attempt.
  if (all_present && all_running && current != g) d.current = static_cast<int32_t>(g);
  return d;
}

Json InPlacePatchBody(const InPlacePatch& p) {
  const std::string g = std::to_string(p.generation);
  return {{"metadata",
           {{"annotations",
             {{core::kRestartGenerationAnnotation, g},
              {api::jobset_v1alpha2::kInPlaceRestartAttemptKey, g},
              {core::kRestartHoldAnnotation, p.hold ? Json("true") : Json(nullptr)}}}}}};
}

}  // namespace batchd::controllers::jobset::internal
