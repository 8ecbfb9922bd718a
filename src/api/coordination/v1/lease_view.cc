#include "api/coordination/v1/lease_view.h"

#include "api/json_access.h"

namespace batchd::api::coordination_v1 {

LeaseView LeaseView::Parse(const Json& lease) {
  LeaseView v;
  v.meta = meta::ObjectMetaView::Parse(lease);
  const Json& spec = Member(lease, "spec");
  v.holder_identity = StringMember(spec, "holderIdentity");
  v.renew_time = StringMember(spec, "renewTime");
  return v;
}

}  // namespace batchd::api::coordination_v1
