// The core/v1 Event kind: schema, validation and the event printer
// (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, wide SUBOBJECT/SOURCE/...).
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/core/v1/core_v1.h"
#include "api/core/v1/internal/pods.h"
#include "api/core/v1/internal/schemas.h"
#include "api/json_access.h"
#include "api/schema_ops/schema_ops.h"
#include "api/validation/object_meta.h"

namespace batchd::api::core_v1::internal {
namespace {

SchemaPtr EventSchema() {
  static const SchemaPtr source =
      Object(R("EventSource"), "EventSource contains information for an event.")
          .Field("component", Str("Component from which the event is generated."))
          .Field("host", Str("Node name on which the event is generated.")).Build();
  static const SchemaPtr series =
      Object(R("EventSeries"), "EventSeries contain information on series of events.")
          .Field("count", Int32("Number of occurrences in this series up to the last heartbeat "
                                "time."))
          .Field("lastObservedTime", MicroTimeSchema("Time of the last occurrence observed.")).Build();
  static const SchemaPtr s =
      TopLevel(R("Event"), "Event is a report of an event somewhere in the cluster.")
          .Field("action", Str("What action was taken/failed regarding to the Regarding object."))
          .Field("count", Int32("The number of times this event has occurred."))
          .Field("eventTime", MicroTimeSchema("Time when this Event was first observed."))
          .Field("firstTimestamp", TimeSchema("The time at which the event was first recorded."))
          .Field("involvedObject", ObjectReferenceSchema())
          .Field("lastTimestamp", TimeSchema("The time at which the most recent occurrence of "
                                             "this event was recorded."))
          .Field("message", Str("A human-readable description of the status of this operation."))
          .Field("reason", Str("Short, machine understandable string that gives the reason for "
                               "the transition into the object's current status."))
          .Field("related", ObjectReferenceSchema())
          .Field("reportingComponent", Str("Name of the controller that emitted this Event."))
          .Field("reportingInstance", Str("ID of the controller instance."))
          .Field("series", series)
          .Field("source", source)
          .Field("type", Str("Type of this event (Normal, Warning)."))
          .Require("metadata").Require("involvedObject")
          .Build();
  return s;
}

std::string Since(const Json& obj, const char* key, absl::Time now) {
  const Json* v = FindMember(obj, key);
  return v ? HumanAge(*v, now) : std::string();
}

std::vector<Json> EventRowCells(const Json& ev, absl::Time now) {
  std::string first = Since(ev, "firstTimestamp", now);
  if (first.empty()) first = FindMember(ev, "eventTime") ? Since(ev, "eventTime", now) : "<unknown>";
  std::string last = Since(ev, "lastTimestamp", now);
  if (last.empty()) last = first;
  int64_t count = IntMember(ev, "count");
  if (const Json* series = FindMember(ev, "series"); series && series->is_object()) {
    last = FindMember(*series, "lastObservedTime") ? Since(*series, "lastObservedTime", now) : "<unknown>";
    count = IntMember(*series, "count");
  } else if (count == 0) {
    count = 1;
  }
  const Json& involved = MemberObject(ev, "involvedObject");
  std::string target = absl::AsciiStrToLower(std::string(StringMember(involved, "kind")));
  if (!StringMember(involved, "name").empty()) target += "/" + std::string(StringMember(involved, "name"));
  const Json& src = MemberObject(ev, "source");
  std::string component(StringMember(src, "component"));
  if (component.empty()) component = std::string(StringMember(ev, "reportingComponent"));
  std::string host(StringMember(src, "host"));
  if (host.empty()) host = std::string(StringMember(ev, "reportingInstance"));
  std::string source = host.empty() ? component : component + ", " + host;
  std::string message(absl::StripAsciiWhitespace(std::string(StringMember(ev, "message"))));
  return {last, std::string(StringMember(ev, "type")), std::string(StringMember(ev, "reason")), target,
          std::string(StringMember(involved, "fieldPath")), source, message, first, count,
          std::string(StringMember(MemberObject(ev, "metadata"), "name"))};
}

ErrorList ValidateEvent(const Json& ev) {
  ErrorList errs = validation::ValidateObjectMeta(MemberObject(ev, "metadata"), true,
                                                  validation::NameIsDNSSubdomain,
                                                  Path("metadata"));
  const std::string ns = std::string(StringMember(MemberObject(ev, "metadata"), "namespace"));
  const std::string involved_ns = std::string(StringMember(MemberObject(ev, "involvedObject"), "namespace"));
  if (!involved_ns.empty() && involved_ns != ns) {
    errs.push_back(Invalid(Path("involvedObject").Child("namespace"), involved_ns,
                           "does not match event.namespace"));
  }
  const std::string type(StringMember(ev, "type"));
  if (!type.empty() && type != "Normal" && type != "Warning") {
    errs.push_back(NotSupported(Path("type"), type, {"Normal", "Warning"}));
  }
  return errs;
}

}  // namespace

KindDef EventKind() {
  KindDef k;
  k.version = "v1";
  k.kind = "Event";
  k.plural = "events";
  k.singular = "event";
  k.namespaced = true;
  k.short_names = {"ev"};
  k.schema = EventSchema();
  k.validate_create = ValidateEvent;
  k.validate_update = [](const Json& obj, const Json& old) {
    ErrorList errs = ValidateEvent(obj);
    ErrorList u = validation::ValidateObjectMetaUpdate(MemberObject(obj, "metadata"),
                                                       MemberObject(old, "metadata"),
                                                       Path("metadata"));
    errs.insert(errs.end(), u.begin(), u.end());
    return errs;
  };
  k.columns_include_name = true;
  k.columns = {{"Last Seen", "string", "", "Time since the most recent occurrence.", 0},
               {"Type", "string", "", "Type of this event (Normal, Warning).", 0},
               {"Reason", "string", "", "Why the action was taken.", 0},
               {"Object", "string", "", "The object this event is about.", 0},
               {"Subobject", "string", "", "The part of the object this event is about.", 1},
               {"Source", "string", "", "The component reporting this event.", 1},
               {"Message", "string", "", "A human-readable description of the event.", 0},
               {"First Seen", "string", "", "Time since the first occurrence.", 1},
               {"Count", "integer", "", "The number of times this event has occurred.", 1},
               {"Name", "string", "name", "Name of the event.", 1}};
  k.row_cells = EventRowCells;
  k.selectable_fields = {"involvedObject.kind", "involvedObject.namespace",
                         "involvedObject.name", "involvedObject.uid",
                         "involvedObject.apiVersion", "involvedObject.resourceVersion",
                         "involvedObject.fieldPath", "reason", "reportingComponent", "source",
                         "type"};
  k.field_value = [](const Json& obj, const std::string& f) {
    if (f == "source") return std::string(StringMember(MemberObject(obj, "source"), "component"));
    return FieldString(obj, f);
  };
  return k;
}

}  // namespace batchd::api::core_v1::internal
