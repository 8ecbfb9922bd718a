// LeaseView: the typed view of a coordination.k8s.io/v1 Lease that the node
// lifecycle controller reads, a node's heartbeat (see api/meta/object_view.h
// for what a view is and its lifetime rule: it points into the JSON it was
// parsed from).
//
// Only the fields batchd's components use are here; add a field when a
// component needs it, parsed in `LeaseView::Parse`.
//
// Thread-safety: immutable after Parse.
#pragma once

#include <string_view>

#include "api/field_error.h"
#include "api/meta/object_view.h"

namespace batchd::api::coordination_v1 {

struct LeaseView {
  meta::ObjectMetaView meta;
  std::string_view holder_identity;
  // spec.renewTime as written (a MicroTime, RFC 3339 with microseconds), ""
  // when unset. Compared as text: the node lifecycle controller times its
  // changes, not its value.
  std::string_view renew_time;

  // REQUIRES: `lease` outlives the view.
  static LeaseView Parse(const Json& lease);
};

}  // namespace batchd::api::coordination_v1
