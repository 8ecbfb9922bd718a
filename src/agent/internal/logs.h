// Pod logs on a node: the PodLogSource over the runtime's log files (tail,
// limit, previous, since, timestamps, follow via inotify), the agent's
// /containerLogs HTTP endpoint, and the option encoding the log proxy uses.
// Thread-safety: the log source and ServeContainerLogs are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "agent/runtime/pod_runtime.h"
#include "apiserver/apiserver.h"
#include "apiserver/http.h"
#include "client/informer.h"
#include "common/clock.h"

namespace batchd::agent::internal {

std::unique_ptr<apiserver::PodLogSource> NewLocalLogSource(PodRuntime& runtime, Clock& clock);

// The byte offset where the last `n` lines of `data` start (a final line
// without '\n' counts as a line).
size_t TailOffset(std::string_view data, int64_t n);

// Log options from kubelet-style query parameters, and back.
apiserver::PodLogSource::Options ParseLogOptions(const apiserver::HttpRequest& req);
std::string LogQuery(const apiserver::PodLogSource::Options& o);

using PodLookup = std::function<client::ObjectRef(const std::string& ns, const std::string& name)>;

// GET /containerLogs/<ns>/<pod>/<container>?...: streams the log of a pod on
// this node; errors are Kubernetes Status bodies.
void ServeContainerLogs(const apiserver::HttpRequest& req, apiserver::ResponseWriter& w,
                        const PodLookup& lookup, apiserver::PodLogSource& logs);

}  // namespace batchd::agent::internal
