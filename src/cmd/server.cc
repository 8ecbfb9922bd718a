#include "cmd/server.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/json_access.h"
#include "api/kind.h"
#include "apiserver/apiserver.h"
#include "apiserver/http_server.h"
#include "apiserver/resource_metrics.h"
#include "auth/audit.h"
#include "auth/authenticator.h"
#include "auth/bootstrap_policy.h"
#include "auth/node_authorizer.h"
#include "auth/rbac.h"
#include "auth/service_account_tokens.h"
#include "ui/ui.h"
#include "cmd/feature_gates.h"
#include "cmd/node_metrics.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/pki.h"
#include "agent/agent.h"
#include "agent/runtime/log_files.h"
#include "agent/sim/sim_kubelet.h"
#include "client/in_process_client.h"
#include "controllers/cronjob/cronjob_controller.h"
#include "controllers/endpointslice/endpointslice_controller.h"
#include "controllers/gc/event_ttl.h"
#include "controllers/gc/finished_retention.h"
#include "controllers/gc/gc_controller.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/workload_with_job.h"
#include "controllers/jobset/exclusive_placement.h"
#include "controllers/jobset/jobset_controller.h"
#include "controllers/nodelifecycle/default_tolerations.h"
#include "controllers/nodelifecycle/nodelifecycle.h"
#include "controllers/queueing/config.h"
#include "controllers/queueing/queue_manager.h"
#include "controllers/serviceaccount/serviceaccount.h"
#include "controllers/topology/ungater.h"
#include "controllers/admissioncheck/controllers.h"
#include "controllers/multikueue/http_dialer.h"
#include "controllers/multikueue/multikueue.h"
#include "controllers/workload/jobset_integration.h"
#include "controllers/workload/pod_integration.h"
#include "controllers/workload/workload_controller.h"
#include "reconcile/context.h"
#include "reconcile/events.h"
#include "registry/pod_security_admission.h"
#include "registry/priority_admission.h"
#include "registry/registry.h"
#include "scheduler/scheduler.h"
#include "reconcile/leader_election.h"
#include "store/compactor.h"
#include "store/etcd/etcd_store.h"
#include "store/memory/memory_store.h"
#include "store/observable_store.h"
#include "store/sqlite/sqlite_store.h"

namespace batchd::cmd {

struct Server::Impl {
  ServerOptions opts;
  RealClock clock;
  controllers::NodeLifecycleOptions node_lifecycle;  // from opts, checked in Create
  std::unique_ptr<store::Store> backend;
  std::unique_ptr<store::ObservableStore> store;
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<apiserver::ApiServer> api;
  std::unique_ptr<apiserver::HttpServer> http;
  // Controllers: they read through informers and write through `client`,
  // the same registry path HTTP clients use.
  std::unique_ptr<client::InProcessClient> client;
  std::unique_ptr<reconcile::Manager> manager;
  std::unique_ptr<reconcile::InformerFactory> informers;
  std::unique_ptr<reconcile::ApiEventRecorder> events;
  // Controllers keep a reference to their context: it lives as long as they
  // do. One per controller, each naming itself in its Events (`kubectl
  // describe` shows "From job-controller"), all writing through `events`.
  struct Component {
    std::unique_ptr<reconcile::ComponentEventRecorder> events;
    std::unique_ptr<reconcile::ControllerContext> ctx;
  };
  std::vector<Component> components;
  reconcile::ControllerContext& ContextFor(const std::string& component) {
    Component c;
    c.events = std::make_unique<reconcile::ComponentEventRecorder>(*events, component);
    c.ctx.reset(new reconcile::ControllerContext{*client, *informers, *manager, clock, *c.events});
    components.push_back(std::move(c));
    return *components.back().ctx;
  }
  void AddControllers();
  // The node agent for this machine (absent with --no-local-node) and the
  // pods/log source: local files, or a proxy to the pod's remote agent.
  std::unique_ptr<agent::NodeAgent> agent;
  std::unique_ptr<reconcile::ComponentEventRecorder> agent_events;  // "kubelet"
  std::unique_ptr<apiserver::PodLogSource> logs;
  std::unique_ptr<apiserver::ResourceMetricsSource> resource_metrics;  // kubectl top
  // Kueue-style queueing: the configuration (--config) and the queue
  // manager, kept for its metrics.
  controllers::queueing::QueueingConfig queueing;
  std::shared_ptr<controllers::queueing::QueueManager> queue_manager;
  FeatureGates gates;
  std::string scheme = "http";
  std::string ca_file;
  // History compaction and Event expiry (--etcd-compaction-interval, --event-ttl).
  std::unique_ptr<store::Compactor> compactor;
  std::unique_ptr<controllers::EventTtlSweeper> event_ttl;
  // Kueue's objectRetentionPolicies.workloads.afterFinished, when configured.
  std::unique_ptr<controllers::FinishedRetentionSweeper> workload_retention;
  // With leader election: what must run once starts when this replica leads.
  std::unique_ptr<reconcile::LeaderElector> elector;
  store::EtcdStore* etcd = nullptr;  // the backend, with --store etcd
  absl::Status StartLeading();
  // Security: authentication, authorization, audit (auth/).
  std::unique_ptr<auth::ServiceAccountTokens> sa_tokens;
  std::unique_ptr<auth::Authenticator> authenticator;
  std::unique_ptr<auth::Authorizer> rbac;  // Under the node authorizer (RBAC mode).
  std::unique_ptr<auth::Authorizer> authorizer;
  std::unique_ptr<auth::AuditLog> audit;
  absl::Status SetUpSecurity();
};

namespace {

// Reads and parses the queueing configuration; the defaults without a file.
absl::StatusOr<controllers::queueing::QueueingConfig> LoadQueueingConfig(const std::string& path) {
  if (path.empty()) return controllers::queueing::QueueingConfig{};
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError("--config: cannot read " + path);
  std::stringstream buf;
  buf << in.rdbuf();
  auto cfg = controllers::queueing::ParseQueueingConfig(buf.str());
  if (!cfg.ok()) {
    return absl::InvalidArgumentError("--config " + path + ": " + std::string(cfg.status().message()));
  }
  return cfg;
}


// The pod root must not be the store's directory nor lie inside it: pods
// write there as their own users, and nothing of theirs may reach state.db.
absl::Status CheckPodRoot(const std::string& pod_root, const std::string& data_dir) {
  std::error_code ec;
  const std::filesystem::path pods = std::filesystem::weakly_canonical(pod_root, ec);
  const std::filesystem::path data = std::filesystem::weakly_canonical(data_dir, ec);
  auto p = pods.begin();
  for (auto d = data.begin(); d != data.end(); ++d, ++p) {
    if (d->empty()) continue;
    if (p == pods.end() || *p != *d) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--pod-root ", pod_root, " is inside the data directory ", data_dir,
      ": pods must not share the store's directory; choose another --pod-root"));
}

// DATA/admin.token: read, or created (mode 0600) with 32 random bytes.
absl::StatusOr<std::string> AdminToken(const std::string& data_dir) {
  std::filesystem::path p = std::filesystem::path(data_dir) / "admin.token";
  std::error_code ec;
  if (std::filesystem::exists(p, ec)) {
    std::ifstream in(p);
    std::string token;
    std::getline(in, token);
    if (token.size() < 16) return absl::InvalidArgumentError(p.string() + ": token too short");
    return token;
  }
  std::string token = auth::RandomHex(32);
  std::string tmp = p.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return absl::InvalidArgumentError("cannot write " + p.string());
    out << token << "\n";
  }
  std::filesystem::permissions(tmp, std::filesystem::perms::owner_read |
                                        std::filesystem::perms::owner_write,
                               ec);
  std::filesystem::rename(tmp, p, ec);
  if (ec) return absl::InvalidArgumentError("cannot write " + p.string());
  return token;
}

}  // namespace

absl::Status Server::Impl::SetUpSecurity() {
  std::error_code ec;
  std::filesystem::create_directories(opts.data_dir, ec);
  if (ec) return absl::InvalidArgumentError("cannot create data dir " + opts.data_dir);
  if (auto st = auth::EnsureDefaultPolicy(*registry); !st.ok()) return st;
  auth::AuthenticatorOptions ao;
  if (!opts.token_auth_file.empty()) {
    std::ifstream in(opts.token_auth_file);
    if (!in) return absl::InvalidArgumentError("--token-auth-file: cannot read " + opts.token_auth_file);
    std::stringstream buf;
    buf << in.rdbuf();
    std::vector<std::string> warnings;
    auto t = auth::TokenTable::Parse(buf.str(), opts.token_auth_file, &warnings);
    if (!t.ok()) return t.status();
    for (const auto& w : warnings) BATCHD_LOG_WARN("{}", w);
    ao.tokens = std::move(*t);
  }
  auto admin = AdminToken(opts.data_dir);
  if (!admin.ok()) return admin.status();
  ao.tokens.Add(*admin, auth::LocalAdminUser());
  auth::ServiceAccountTokens::Options so;
  so.issuer = opts.service_account_issuer;
  so.api_audiences = opts.api_audiences;
  std::string sa_key = opts.service_account_key_file;
  if (sa_key.empty()) {
    sa_key = (std::filesystem::path(opts.data_dir) / "pki" / "sa.key").string();
  } else if (!std::filesystem::exists(sa_key)) {
    return absl::InvalidArgumentError("--service-account-key-file: cannot read " + sa_key);
  }
  auto sa = auth::ServiceAccountTokens::LoadOrCreate(sa_key, so);
  if (!sa.ok()) return sa.status();
  sa_tokens = std::move(*sa);
  ao.service_accounts = sa_tokens.get();
  const api::KindDef* sa_kind = registry->scheme().ByResource("", "v1", "serviceaccounts");
  registry::Registry* reg = registry.get();
  ao.service_account_uid = [reg, sa_kind](const std::string& ns,
                                          const std::string& name) -> std::optional<std::string> {
    auto o = reg->Get(*sa_kind, ns, name);
    if (!o.ok()) return std::nullopt;
    return api::CopyStringMember(api::MemberObject(*(*o)->Shared(), "metadata"), "uid");
  };
  ao.allow_loopback_admin = opts.allow_loopback_admin;
  ao.anonymous = opts.anonymous_auth;
  RealClock* c = &clock;
  ao.now = [c] { return c->Now(); };
  authenticator = std::make_unique<auth::Authenticator>(std::move(ao));
  if (opts.authorization_mode == "RBAC") {
    auto r = std::make_unique<auth::RbacAuthorizer>(*registry);
    r->ReconcileAggregation();
    rbac = std::move(r);
    // As kube-apiserver's --authorization-mode=Node,RBAC.
    authorizer = std::make_unique<auth::NodeAuthorizer>(auth::NewRegistryNodeGraph(*registry), *rbac);
  } else if (opts.authorization_mode == "AlwaysAllow") {
    authorizer = std::make_unique<auth::AlwaysAllowAuthorizer>();
  } else {
    return absl::InvalidArgumentError("--authorization-mode must be RBAC or AlwaysAllow, not " +
                                      opts.authorization_mode);
  }
  if (!opts.audit_log_path.empty()) {
    auth::AuditOptions au;
    au.path = opts.audit_log_path;
    au.max_size_mb = opts.audit_log_maxsize_mb;
    au.max_backups = opts.audit_log_maxbackup;
    auto log = auth::AuditLog::Open(au);
    if (!log.ok()) return log.status();
    audit = std::move(*log);
  }
  return absl::OkStatus();
}

// The controllers `batchd server` runs, listed explicitly (STYLE.md practice
// 14). Each reports its Events under the component name its Kubernetes or
// Kueue counterpart uses.
void Server::Impl::AddControllers() {
  Impl& i = *this;
  controllers::JobControllerOptions job_options;
  job_options.workload_with_job = i.gates.workload_with_job;
  controllers::AddJobController(i.ContextFor("job-controller"), job_options);
  controllers::AddCronJobController(i.ContextFor("cronjob-controller"));
  controllers::AddJobSetController(i.ContextFor("jobset"));
  controllers::AddExclusivePlacementController(i.ContextFor("jobset"));
  controllers::AddGarbageCollector(i.ContextFor("garbage-collector-controller"));
  controllers::AddServiceAccountsController(i.ContextFor("service-account-controller"));
  controllers::AddTtlAfterFinishedController(i.ContextFor("ttl-after-finished-controller"));
  controllers::AddNodeLifecycleController(i.ContextFor("node-controller"), i.node_lifecycle);
  controllers::endpointslice::AddEndpointSliceController(
      i.ContextFor("endpointslice-controller"));
  agent::sim::AddSimulatedKubelet(i.ContextFor("kubelet"));
  scheduler::SchedulerOptions so;
  so.binder = std::make_shared<scheduler::RegistryBinder>(*i.registry);
  scheduler::AddScheduler(i.ContextFor("default-scheduler"), std::move(so));
  const controllers::JobIntegrationOptions jo = controllers::JobIntegrationOptionsFrom(i.queueing);
  if (i.queueing.FrameworkEnabled("batch/job")) {
    controllers::AddJobIntegration(i.ContextFor("batch/job-kueue-controller"), jo);
  }
  if (i.queueing.FrameworkEnabled("pod")) {
    controllers::AddPodIntegration(i.ContextFor("pod-kueue-controller"),
                                   controllers::PodIntegrationOptionsFrom(i.queueing));
  }
  if (i.queueing.FrameworkEnabled(controllers::kJobSetFramework)) {
    controllers::AddJobSetIntegration(i.ContextFor("jobset-kueue-controller"), jo);
  }
  controllers::topology::AddTopologyUngater(i.ContextFor("kueue-topology-ungater"));
  // Two-phase admission, the provisioning check, resource-in-use finalizers.
  controllers::admissioncheck::AddAdmissionCheckControllers(i.ContextFor("kueue-admission-checks"));
  // MultiKueue: dispatch to worker clusters (docs/multikueue.md).
  {
    controllers::multikueue::MultiKueueOptions mk;
    mk.origin = i.queueing.multi_kueue.origin;
    mk.worker_lost_timeout = i.queueing.multi_kueue.worker_lost_timeout;
    mk.gc_interval = i.queueing.multi_kueue.gc_interval;
    mk.dispatcher_name = i.queueing.multi_kueue.dispatcher_name;
    mk.dialer = controllers::multikueue::MakeHttpDialer();
    controllers::multikueue::AddMultiKueueControllers(i.ContextFor("kueue-multikueue"),
                                                      std::move(mk));
  }
  i.queue_manager = controllers::queueing::AddQueueManager(i.ContextFor("kueue-admission"),
                                                           i.queueing);
}

Server::Server() : impl_(std::make_unique<Impl>()) {}
Server::~Server() { Stop(); }

std::string DefaultPodRoot(const std::string& data_dir) {
  std::string d = data_dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d + "-pods";
}

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& opts) {
  std::unique_ptr<Server> s(new Server());
  Impl& i = *s->impl_;
  i.opts = opts;
  switch (opts.store) {
    case StoreBackend::kMemory:
      i.backend = std::make_unique<store::MemoryStore>();
      break;
    case StoreBackend::kEtcd: {
      if (opts.etcd_servers.empty()) {
        return absl::InvalidArgumentError("--store etcd needs --etcd-servers URL[,URL...]");
      }
      store::EtcdOptions eo;
      eo.servers = opts.etcd_servers;
      eo.ca_file = opts.etcd_cafile;
      eo.cert_file = opts.etcd_certfile;
      eo.key_file = opts.etcd_keyfile;
      eo.prefix = opts.etcd_prefix;
      auto st = store::EtcdStore::Open(eo);
      if (!st.ok()) {
        return absl::UnavailableError(absl::StrCat("--store etcd: ", st.status().message()));
      }
      i.etcd = st->get();
      i.backend = std::move(*st);
      break;
    }
    case StoreBackend::kSqlite: {
      std::error_code ec;
      std::filesystem::create_directories(opts.data_dir, ec);
      if (ec) return absl::InvalidArgumentError("cannot create data dir " + opts.data_dir);
      store::SqliteOptions so;
      so.path = (std::filesystem::path(opts.data_dir) / "state.db").string();
      so.sync = opts.sync == StoreSync::kFull ? store::SqliteSync::kFull : store::SqliteSync::kNormal;
      auto st = store::SqliteStore::Open(so);
      if (!st.ok()) return st.status();
      i.backend = std::move(*st);
      break;
    }
  }
  auto queueing = LoadQueueingConfig(opts.config_file);
  if (!queueing.ok()) return queueing.status();
  i.queueing = *queueing;
  auto gates = ParseFeatureGates(opts.feature_gates);
  if (!gates.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--feature-gates: ", std::string(gates.status().message())));
  }
  i.gates = *gates;
  if (!absl::ParseDuration(opts.node_monitor_grace_period, &i.node_lifecycle.grace) ||
      i.node_lifecycle.grace <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--node-monitor-grace-period: want a positive duration");
  }
  if (opts.node_eviction_rate < 0 || opts.secondary_node_eviction_rate < 0 ||
      opts.unhealthy_zone_threshold <= 0 || opts.unhealthy_zone_threshold > 1 ||
      opts.large_cluster_size_threshold < 0) {
    return absl::InvalidArgumentError(
        "--node-eviction-rate and --secondary-node-eviction-rate must not be negative, "
        "--unhealthy-zone-threshold must be in (0, 1], --large-cluster-size-threshold >= 0");
  }
  i.node_lifecycle.eviction_rate = opts.node_eviction_rate;
  i.node_lifecycle.secondary_eviction_rate = opts.secondary_node_eviction_rate;
  i.node_lifecycle.unhealthy_zone_threshold = opts.unhealthy_zone_threshold;
  i.node_lifecycle.large_cluster_size_threshold = opts.large_cluster_size_threshold;
  i.store = std::make_unique<store::ObservableStore>(*i.backend, i.clock);
  i.registry = std::make_unique<registry::Registry>(*i.store, api::BuiltinScheme(), i.clock);
  if (auto st = i.registry->Start(); !st.ok()) return st;
  // kube-apiserver's Priority admission plugin and its built-in classes.
  registry::AddPriorityAdmission(*i.registry);
  registry::AddPodSecurityAdmission(*i.registry);
  // kube-apiserver's DefaultTolerationSeconds admission plugin.
  if (opts.default_not_ready_toleration_seconds < 0 ||
      opts.default_unreachable_toleration_seconds < 0) {
    return absl::InvalidArgumentError("default toleration seconds must not be negative");
  }
  if (auto st = controllers::AddDefaultTolerationSeconds(
          *i.registry, {.not_ready_seconds = opts.default_not_ready_toleration_seconds,
                        .unreachable_seconds = opts.default_unreachable_toleration_seconds});
      !st.ok()) {
    return st;
  }
  // kube-apiserver's ServiceAccount admission plugin (pods get "default").
  if (auto st = controllers::AddServiceAccountAdmission(*i.registry); !st.ok()) return st;
  if (auto st = registry::EnsureSystemPriorityClasses(*i.registry); !st.ok()) return st;
  // JobSet's pod webhook (exclusive placement), after Priority: it reads spec.priority.
  if (auto st = controllers::AddJobSetPodWebhook(*i.registry); !st.ok()) return st;
  // Kueue's Job webhook: queued Jobs are created suspended.
  const controllers::JobIntegrationOptions jo = controllers::JobIntegrationOptionsFrom(i.queueing);
  // integrations.frameworks decides which kinds are managed (Kueue: batch/job).
  if (i.queueing.FrameworkEnabled("batch/job")) {
    if (auto st = controllers::RegisterJobWebhooks(*i.registry, jo); !st.ok()) return st;
  }
  // MultiKueue: queued Jobs of a MultiKueue ClusterQueue default to managedBy multikueue.
  if (i.queueing.FrameworkEnabled("batch/job")) {
    if (auto st = controllers::multikueue::RegisterMultiKueueJobDefaulting(*i.registry); !st.ok()) {
      return st;
    }
  }
  // Kueue's JobSet webhook (or, without the jobset framework, the refusal of queue names).
  if (auto st = controllers::RegisterJobSetWebhooks(
          *i.registry, jo, i.queueing.FrameworkEnabled(controllers::kJobSetFramework));
      !st.ok()) {
    return st;
  }
  // Kueue's pod webhook, when the configuration enables the `pod` framework.
  if (i.queueing.FrameworkEnabled("pod")) {
    if (auto st = controllers::RegisterPodWebhooks(
            *i.registry, controllers::PodIntegrationOptionsFrom(i.queueing));
        !st.ok()) {
      return st;
    }
  }
  if (i.gates.workload_with_job) {
    if (auto st = controllers::job::AddParallelismValidation(*i.registry); !st.ok()) return st;
  }
  i.client = std::make_unique<client::InProcessClient>(*i.registry, "batchd-controller-manager");
  i.manager = std::make_unique<reconcile::Manager>(i.clock);
  i.informers = std::make_unique<reconcile::InformerFactory>(*i.client, *i.manager);
  i.events = std::make_unique<reconcile::ApiEventRecorder>(*i.client, i.clock, "batchd");
  i.events->StartAsync();  // Events are best-effort: reconciles do not wait for them
  if (opts.local_node) {
    agent::LocalAgentOptions lo;
    lo.data_dir = opts.data_dir;
    lo.pod_root = opts.pod_root.empty() ? DefaultPodRoot(opts.data_dir) : opts.pod_root;
    lo.pod_user = opts.pod_user;
    lo.pod_pids_limit = opts.pod_pids_limit;
    if (auto st = CheckPodRoot(lo.pod_root, opts.data_dir); !st.ok()) return st;
    lo.shared_pods = &i.informers->For("", "v1", "pods");
    lo.shared_endpoint_slices = &i.informers->For("discovery.k8s.io", "v1", "endpointslices");
    i.agent_events = std::make_unique<reconcile::ComponentEventRecorder>(*i.events, "kubelet");
    lo.events = i.agent_events.get();
    agent::AgentOptions eviction;
    if (auto st = agent::ParseEvictionHard(opts.eviction_hard, eviction); !st.ok()) return st;
    lo.eviction_nodefs_available_fraction = eviction.eviction_nodefs_available_fraction;
    lo.eviction_nodefs_available_bytes = eviction.eviction_nodefs_available_bytes;
    auto log_max = agent::ParseByteQuantity(opts.container_log_max_size);
    if (!log_max.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--container-log-max-size: ",
                                                     log_max.status().message()));
    }
    if (*log_max < agent::kMinLogMaxBytes || opts.container_log_max_files < agent::kMinLogMaxFiles) {
      return absl::InvalidArgumentError(
          "--container-log-max-size must be at least 1Ki and --container-log-max-files at least 2");
    }
    lo.container_log_max_bytes = *log_max;
    lo.container_log_max_files = opts.container_log_max_files;
    absl::Duration transition;
    if (!absl::ParseDuration(opts.eviction_pressure_transition_period, &transition) ||
        transition < absl::ZeroDuration()) {
      return absl::InvalidArgumentError("--eviction-pressure-transition-period: want a duration");
    }
    lo.eviction_pressure_transition_period = transition;
    auto a = agent::NewLocalAgent(lo, *i.client, i.clock);
    if (!a.ok()) return a.status();
    i.agent = std::move(*a);
  }
  agent::KubeletClientOptions kubelet{opts.kubelet_client_certificate, opts.kubelet_client_key};
  if (kubelet.cert_file.empty() != kubelet.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--kubelet-client-certificate and --kubelet-client-key must be given together");
  }
  if (kubelet.cert_file.empty()) {
    auto kc = pki::EnsureKubeletClientCert((std::filesystem::path(opts.data_dir) / "pki").string());
    if (!kc.ok()) return kc.status();
    kubelet = {kc->cert_file, kc->key_file};
  }
  i.logs = agent::NewProxyLogSource(*i.client, i.agent ? i.agent->options().node_name : "",
                                    i.agent ? &i.agent->logs() : nullptr, kubelet);
  if (auto st = i.SetUpSecurity(); !st.ok()) return st;
  i.resource_metrics = agent::NewResourceMetricsSource(
      *i.client, i.clock, i.agent ? i.agent->options().node_name : "", i.agent.get(), kubelet);
  apiserver::ApiServerOptions ao;
  ao.logs = i.logs.get();
  ao.resource_metrics = i.resource_metrics.get();
  ao.authenticator = i.authenticator.get();
  ao.authorizer = i.authorizer.get();
  ao.audit = i.audit.get();
  ao.service_account_tokens = i.sa_tokens.get();
  ao.static_content = ui::ServeDashboard;
  store::ObservableStore* obs = i.store.get();
  Impl* impl = &i;
  ao.ready_checks = [impl]() {
    std::vector<std::pair<std::string, absl::Status>> out;
    // The store answers a read (a missing key is NotFound, not an error).
    absl::StatusOr<store::KeyValue> probe = impl->store->Get("/readyz-probe");
    out.emplace_back("etcd", probe.ok() || absl::IsNotFound(probe.status())
                                 ? absl::OkStatus()
                                 : probe.status());
    // Standby replicas too keep their informers synced (Start).
    std::vector<std::string> unsynced = impl->manager->UnsyncedInformers();
    out.emplace_back("informer-sync",
                     unsynced.empty() ? absl::OkStatus()
                                      : absl::UnavailableError(absl::StrCat(
                                            unsynced.size(), " informers not synced, e.g. ",
                                            unsynced.front())));
    return out;
  };
  client::Informer* node_informer = &i.informers->For("", "v1", "nodes");
  ao.extra_metrics = [obs, impl, node_informer](std::string* out) {
    obs->AppendPrometheus(out);
    if (impl->queue_manager) impl->queue_manager->AppendPrometheus(out);
    if (impl->http) impl->http->AppendPrometheus(out);
    if (impl->events) impl->events->AppendPrometheus(out);
    std::vector<client::ObjectRef> nodes = node_informer->List();
    std::vector<const api::Json*> node_ptrs;
    for (const client::ObjectRef& n : nodes) node_ptrs.push_back(n.get());
    AppendNodeMetrics(node_ptrs, out);
  };
  // Kueue's visibility API, answered by the queue manager (AddControllers).
  ao.pending_workloads = [impl](const apiserver::PendingWorkloadsRequest& r)
      -> absl::StatusOr<api::Json> {
    if (!impl->queue_manager) return absl::UnavailableError("the queue manager is not running");
    return impl->queue_manager->PendingWorkloadsSummary(r.api_version, r.ns, r.name, r.offset,
                                                        r.limit);
  };
  i.api = std::make_unique<apiserver::ApiServer>(*i.registry, i.clock, ao);
  i.AddControllers();
  store::CompactAgreement agree;
  if (i.etcd != nullptr) {
    // Every replica runs the compactor; one per interval compacts (docs/ha.md).
    store::EtcdStore* etcd = i.etcd;
    agree = [etcd](int64_t time, int64_t revision) { return etcd->CompactAgreed(time, revision); };
  }
  i.compactor = std::make_unique<store::Compactor>(*i.store, i.clock, opts.compaction_interval,
                                                   std::move(agree));
  i.event_ttl =
      std::make_unique<controllers::EventTtlSweeper>(*i.registry, i.clock, opts.event_ttl);
  const bool elect = opts.leader_elect == LeaderElect::kOn ||
                     (opts.leader_elect == LeaderElect::kAuto && opts.store == StoreBackend::kEtcd);
  if (elect && opts.local_node) {
    return absl::InvalidArgumentError(
        "--leader-elect runs the controllers on one replica at a time, but the local node agent "
        "needs them on this one: pass --no-local-node and run `batchd agent` on each machine "
        "(docs/ha.md)");
  }
  if (elect) {
    reconcile::LeaderElectionOptions le;
    le.lease_duration = opts.leader_elect_lease_duration;
    le.renew_deadline = opts.leader_elect_renew_deadline;
    le.retry_period = opts.leader_elect_retry_period;
    if (auto st = reconcile::ValidateLeaderElection(le); !st.ok()) return st;
    i.elector = std::make_unique<reconcile::LeaderElector>(
        *i.client, i.clock, le,
        [impl] {
          if (auto st = impl->StartLeading(); !st.ok()) {
            BATCHD_LOG_ERROR("starting the controllers as leader failed: {}; exiting",
                             st.ToString());
            std::_Exit(1);
          }
        },
        [] {
          // As kube-controller-manager: a replica that lost its lease exits at
          // once, before another may lead; its supervisor restarts it.
          BATCHD_LOG_ERROR("leader election lost; exiting");
          std::_Exit(1);
        });
  }
  if (i.queueing.workload_retention_after_finished) {
    const api::KindDef* wl = i.registry->scheme().ByResource("kueue.x-k8s.io", "v1beta2", "workloads");
    if (wl == nullptr) return absl::InternalError("the Workload kind is not served");
    i.workload_retention = std::make_unique<controllers::FinishedRetentionSweeper>(
        *i.registry, i.clock, *wl, "Finished", *i.queueing.workload_retention_after_finished);
  }
  return s;
}

namespace {

bool IsLoopbackAddress(const std::string& host) {
  in_addr a4{};
  if (inet_pton(AF_INET, host.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6{};
  return inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

// Names for the generated serving certificate: the listen address, or for a
// wildcard the host name and every interface address; plus --tls-san.
std::vector<std::string> ServingNames(const std::string& host,
                                      const std::vector<std::string>& extra) {
  std::vector<std::string> names = extra;
  if (host != "0.0.0.0" && host != "::") {
    names.push_back(host);
    return names;
  }
  char hn[256] = {};
  if (gethostname(hn, sizeof(hn) - 1) == 0 && hn[0]) names.push_back(hn);
  ifaddrs* ifs = nullptr;
  if (getifaddrs(&ifs) == 0) {
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (!i->ifa_addr) continue;
      char buf[INET6_ADDRSTRLEN] = {};
      if (i->ifa_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf,
                  sizeof(buf));
      } else if (i->ifa_addr->sa_family == AF_INET6) {
        auto* a6 = reinterpret_cast<sockaddr_in6*>(i->ifa_addr);
        if (IN6_IS_ADDR_LINKLOCAL(&a6->sin6_addr)) continue;
        inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf));
      }
      if (buf[0]) names.push_back(buf);
    }
    freeifaddrs(ifs);
  }
  return names;
}

}  // namespace

absl::StatusOr<int> Server::Start() {
  Impl& i = *impl_;
  apiserver::HttpServerOptions ho;
  auto colon = i.opts.listen.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(i.opts.listen.substr(colon + 1), &ho.port)) {
    return absl::InvalidArgumentError("--listen must be HOST:PORT");
  }
  ho.address = i.opts.listen.substr(0, colon);
  if (ho.address.size() > 2 && ho.address.front() == '[' && ho.address.back() == ']') {
    ho.address = ho.address.substr(1, ho.address.size() - 2);
  }
  const bool loopback = IsLoopbackAddress(ho.address);
  using Https = ServerOptions::Https;
  const bool have_cert = !i.opts.tls_cert_file.empty() || !i.opts.tls_private_key_file.empty();
  if (have_cert && (i.opts.tls_cert_file.empty() || i.opts.tls_private_key_file.empty())) {
    return absl::InvalidArgumentError(
        "--tls-cert-file and --tls-private-key-file must be given together");
  }
  if (have_cert && i.opts.serve_https == Https::kNever) {
    return absl::InvalidArgumentError("--serve-https=never contradicts --tls-cert-file");
  }
  const bool https =
      have_cert || i.opts.serve_https == Https::kAlways ||
      (i.opts.serve_https == Https::kAuto && !loopback && !i.opts.insecure_serve_unauthenticated);
  if (!https && !loopback && !i.opts.insecure_serve_unauthenticated) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to serve plain HTTP on ", ho.address,
        ": anyone who can reach it could run commands on every node. Serve HTTPS (the default "
        "beyond loopback, or --tls-cert-file/--tls-private-key-file), listen on 127.0.0.1, or "
        "pass --insecure-serve-unauthenticated (only for tests inside a network namespace)"));
  }
  if (https) {
    apiserver::TlsServerFiles tls;
    if (have_cert) {
      tls.cert_file = i.opts.tls_cert_file;
      tls.key_file = i.opts.tls_private_key_file;
    } else {
      auto pki = pki::EnsureServingPki(
          (std::filesystem::path(i.opts.data_dir) / "pki").string(),
          ServingNames(ho.address, i.opts.tls_sans));
      if (!pki.ok()) return pki.status();
      tls.cert_file = pki->cert_file;
      tls.key_file = pki->key_file;
      tls.client_ca_file = pki->client_ca_file;
      i.ca_file = pki->ca_cert_file;
    }
    if (!i.opts.client_ca_file.empty()) tls.client_ca_file = i.opts.client_ca_file;
    ho.tls = tls;
    i.scheme = "https";
  }
  ho.max_connections = i.opts.max_connections;
  ho.max_requests_inflight = i.opts.max_requests_inflight;
  ho.max_mutating_requests_inflight = i.opts.max_mutating_requests_inflight;
  ho.max_long_running_requests = i.opts.max_long_running_requests;
  ho.request_timeout = absl::Seconds(i.opts.request_timeout_seconds);
  apiserver::ApiServer* api = i.api.get();
  i.http = std::make_unique<apiserver::HttpServer>(
      ho, [api](const apiserver::HttpRequest& req, apiserver::ResponseWriter& w) {
        api->Handle(req, w);
      });
  if (!i.elector) {
    if (auto st = i.StartLeading(); !st.ok()) return st;
  }
  if (i.elector) {
    // A standby keeps the controllers' informers synced and watching, so it
    // starts acting as soon as it leads (docs/ha.md).
    if (auto st = i.manager->StartInformers(); !st.ok()) return st;
  }
  auto port = i.http->Start();
  if (!port.ok()) return port;
  // On etcd every replica takes part in the compaction agreement, leading or
  // not; otherwise the one server (or the leader) compacts (StartLeading).
  if (i.etcd != nullptr) i.compactor->Start();
  if (i.elector) i.elector->Start();
  if (i.agent) {
    if (auto st = i.agent->Start(); !st.ok()) return st;
  }
  return port;
}

absl::Status Server::Impl::StartLeading() {
  const absl::Time t0 = absl::Now();  // for the log line only
  if (elector && etcd) {
    // Fence: from now on every write of this replica also requires that no
    // later leader took the fence over (docs/ha.md).
    auto rev = etcd->TakeFence("/leader-fence/batchd-controller-manager", elector->identity());
    if (!rev.ok()) return rev.status();
  }
  const absl::Time t1 = absl::Now();
  // Informers already run on a standby (Start): only the workers start here.
  if (auto st = manager->Start(opts.controller_workers); !st.ok()) return st;
  if (elector) {
    const absl::Time t2 = absl::Now();
    BATCHD_LOG_INFO("leading: fence taken in {} ms, controllers started in {} ms, at {} (Unix ms)",
                    absl::ToInt64Milliseconds(t1 - t0), absl::ToInt64Milliseconds(t2 - t1),
                    absl::ToUnixMillis(t2));
  }
  if (etcd == nullptr) compactor->Start();
  event_ttl->Start();
  if (workload_retention) workload_retention->Start();
  return absl::OkStatus();
}

const std::string& Server::scheme() const { return impl_->scheme; }
const std::string& Server::ca_file() const { return impl_->ca_file; }

bool Server::Stop() {
  if (!impl_) return true;
  if (impl_->elector) impl_->elector->Stop();
  if (impl_->agent) impl_->agent->Stop();
  if (impl_->http) impl_->http->Stop();
  const bool clean = !impl_->http || impl_->http->Stats().abandoned == 0;
  impl_->workload_retention.reset();
  impl_->event_ttl.reset();
  impl_->compactor.reset();
  if (impl_->manager) impl_->manager->Stop();
  return clean;
}

}  // namespace batchd::cmd
