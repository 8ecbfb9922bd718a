// batchctl: what kubectl lacks for batchd — queue views and actions in the
// spirit of kueuectl (list/stop/resume/create for ClusterQueues, LocalQueues,
// Workloads and ResourceFlavors), `create simulated-nodes` (a generated
// topology of simulated Nodes), plus `version` and `kubeconfig`.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "api/kind.h"
#include "auth/service_account_tokens.h"
#include "cli/completion.h"
#include "cli/node_commands.h"
#include "cli/queue_commands.h"
#include "client/http_client.h"

namespace {

using batchd::cli::QueueCommands;
using batchd::cli::SimulatedNodeCommands;

constexpr char kDefaultServer[] = "http://127.0.0.1:8080";

// Where batchctl connects, as kubectl decides: `--server` (or BATCHD_SERVER)
// alone when given; else the current context of `--kubeconfig`, of the first
// file of KUBECONFIG, or of ~/.kube/config when it exists (server, CA, client
// certificate, token); else the local server at 127.0.0.1:8080.
struct Target {
  std::string server;                       // --server / BATCHD_SERVER ("" when neither)
  std::string kubeconfig;                   // --kubeconfig
};

// `--server`, else BATCHD_SERVER; "" when neither is given.
std::string ExplicitServer(const Target& t) {
  if (!t.server.empty()) return t.server;
  const char* env = std::getenv("BATCHD_SERVER");
  return env != nullptr ? env : "";
}

absl::StatusOr<batchd::client::KubeconfigServer> Resolve(const Target& t) {
  if (std::string s = ExplicitServer(t); !s.empty()) return batchd::client::KubeconfigServer{s, {}};
  std::string path = t.kubeconfig;
  if (path.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
      path = std::string(env).substr(0, std::string(env).find(':'));  // the first file
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
      std::string def = std::string(home) + "/.kube/config";
      if (access(def.c_str(), R_OK) == 0) path = def;
    }
  }
  if (path.empty() || path == "/dev/null") return batchd::client::KubeconfigServer{kDefaultServer, {}};
  return batchd::client::LoadKubeconfig(path);
}

absl::StatusOr<std::unique_ptr<batchd::client::HttpClient>> Connect(const Target& t) {
  auto where = Resolve(t);
  if (!where.ok()) return where.status();
  where->options.user_agent = "batchctl";
  return batchd::client::HttpClient::Create(where->server, batchd::api::BuiltinScheme(),
                                            where->options);
}

// Runs `fn` with a QueueCommands over HTTP; prints errors as kubectl does.
template <typename Fn>
int WithCommands(const Target& target, Fn fn) {
  auto client = Connect(target);
  if (!client.ok()) {
    std::cerr << "error: " << client.status().message() << "\n";
    return 1;
  }
  QueueCommands cmds(**client, std::cout, absl::Now());
  // The visibility API (positions, blockers, estimates) is outside the Scheme.
  batchd::client::HttpClient* http = client->get();
  cmds.SetRawGet([http](const std::string& path) -> absl::StatusOr<batchd::api::Json> {
    auto r = http->Do("GET", path);
    if (!r.ok()) return r.status();
    if (r->code / 100 != 2) return batchd::client::StatusFromResponse(r->code, r->body);
    batchd::api::Json j = batchd::api::Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return absl::InternalError("the server's answer is not JSON");
    return j;
  });
  absl::Status st = fn(cmds);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

// Runs `fn` with a SimulatedNodeCommands over HTTP.
template <typename Fn>
int WithNodeCommands(const Target& target, Fn fn) {
  auto client = Connect(target);
  if (!client.ok()) {
    std::cerr << "error: " << client.status().message() << "\n";
    return 1;
  }
  SimulatedNodeCommands cmds(**client, std::cout);
  absl::Status st = fn(cmds);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

std::string Base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += t[(v >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

struct KubeconfigFlags {
  std::string name = "batchd";
  std::string data_dir = "./batchd-data";
  std::string token;
  std::string ca_file;
  std::string ns = "default";
};

// A kubeconfig for `server`: the token given, else the admin token the
// server wrote to DATA/admin.token (when readable); the CA given, else
// DATA/pki/ca.crt (when present), embedded as certificate-authority-data.
void PrintKubeconfig(const std::string& server, const KubeconfigFlags& f) {
  std::string token = f.token;
  if (token.empty()) token = ReadFirstLine(f.data_dir + "/admin.token");
  std::string ca_path = f.ca_file.empty() ? f.data_dir + "/pki/ca.crt" : f.ca_file;
  std::string ca;
  if (std::ifstream in(ca_path); in) {
    std::stringstream buf;
    buf << in.rdbuf();
    ca = buf.str();
  }
  std::cout << "apiVersion: v1\n"
            << "kind: Config\n"
            << "clusters:\n"
            << "- name: " << f.name << "\n"
            << "  cluster:\n"
            << "    server: " << server << "\n";
  if (!ca.empty() && server.rfind("https://", 0) == 0) {
    std::cout << "    certificate-authority-data: " << Base64(ca) << "\n";
  }
  std::cout << "users:\n"
            << "- name: " << f.name << "\n";
  if (token.empty()) {
    std::cout << "  user: {}\n";
  } else {
    std::cout << "  user:\n"
              << "    token: " << token << "\n";
  }
  std::cout << "contexts:\n"
            << "- name: " << f.name << "\n"
            << "  context:\n"
            << "    cluster: " << f.name << "\n"
            << "    user: " << f.name << "\n"
            << "    namespace: " << f.ns << "\n"
            << "current-context: " << f.name << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"batchctl: queue and cluster tools for batchd"};
  app.require_subcommand(1);
  Target target;
  app.add_option("-s,--server", target.server,
                 "batchd URL (env BATCHD_SERVER; default: the kubeconfig's server, else " +
                     std::string(kDefaultServer) + ")");
  app.add_option("--kubeconfig", target.kubeconfig,
                 "kubeconfig whose current context to use (env KUBECONFIG; default "
                 "~/.kube/config when it exists)");
  // `batchctl kubeconfig --server URL` (the README's form) as well as
  // `batchctl --server URL kubeconfig`: subcommands pass the global flags up.
  app.fallthrough();
  int rc = 0;

  app.add_subcommand("version", "Print the batchctl version")->callback([] {
    std::cout << "batchctl v0.2.0 (Kubernetes API v1.32, kueue.x-k8s.io/v1beta2)\n";
  });
  KubeconfigFlags kcf;
  auto* kc = app.add_subcommand("kubeconfig", "Print a kubeconfig that points kubectl at batchd");
  kc->add_option("--name", kcf.name, "cluster, user and context name")->capture_default_str();
  kc->add_option("--data-dir", kcf.data_dir,
                 "The server's data directory: its admin.token and pki/ca.crt are used when "
                 "readable")
      ->capture_default_str();
  kc->add_option("--token", kcf.token, "Bearer token of the user (instead of the admin token)");
  kc->add_option("--certificate-authority", kcf.ca_file, "CA file (default DATA/pki/ca.crt)");
  kc->add_option("-n,--namespace", kcf.ns, "The context's namespace")->capture_default_str();
  kc->callback([&] {
    // The URL given (the README's form), else BATCHD_SERVER, else the local server.
    std::string server = ExplicitServer(target);
    PrintKubeconfig(server.empty() ? kDefaultServer : server, kcf);
  });

  // list clusterqueues|localqueues|workloads
  batchd::cli::ListFlags lf;
  std::string list_what;
  auto* list = app.add_subcommand("list", "List clusterqueues, localqueues or workloads");
  list->add_option("kind", list_what, "clusterqueues (cq), localqueues (lq) or workloads (wl)")
      ->required();
  list->add_option("-n,--namespace", lf.namespace_, "namespace")->capture_default_str();
  list->add_flag("-A,--all-namespaces", lf.all_namespaces, "list across all namespaces");
  list->add_option("-c,--clusterqueue", lf.cluster_queue, "only this ClusterQueue");
  list->add_option("-q,--localqueue", lf.local_queue, "only workloads of this LocalQueue");
  list->add_option("--status", lf.status,
                   "workloads: all, pending, quotareserved, admitted or finished")
      ->capture_default_str();
  list->add_option("--active", lf.active, "clusterqueues: true or false");
  list->add_option("-l,--selector", lf.label_selector, "label selector");
  list->callback([&] {
    rc = WithCommands(target, [&](QueueCommands& c) { return c.List(list_what, lf); });
  });

  // stop|resume clusterqueue|localqueue|workload NAME
  std::string sr_what, sr_name, sr_ns = "default";
  bool keep_running = false;
  auto* stop = app.add_subcommand("stop", "Stop admission for a queue, or deactivate a workload");
  stop->add_option("kind", sr_what, "clusterqueue, localqueue or workload")->required();
  stop->add_option("name", sr_name, "name")->required();
  stop->add_option("-n,--namespace", sr_ns, "namespace")->capture_default_str();
  stop->add_flag("--keep-already-running", keep_running,
                 "queues: stop new admissions but let admitted workloads run (Hold)");
  stop->callback([&] {
    rc = WithCommands(target,
                      [&](QueueCommands& c) { return c.Stop(sr_what, sr_name, sr_ns, keep_running); });
  });
  auto* resume = app.add_subcommand("resume", "Resume a stopped queue or a deactivated workload");
  resume->add_option("kind", sr_what, "clusterqueue, localqueue or workload")->required();
  resume->add_option("name", sr_name, "name")->required();
  resume->add_option("-n,--namespace", sr_ns, "namespace")->capture_default_str();
  resume->callback([&] {
    rc = WithCommands(target, [&](QueueCommands& c) { return c.Resume(sr_what, sr_name, sr_ns); });
  });

  auto* describe = app.add_subcommand(
      "describe", "Describe a workload: queue, state, placement per topology domain, conditions");
  describe->alias("get");
  describe->add_option("kind", sr_what, "workload")->required();
  describe->add_option("name", sr_name, "name")->required();
  describe->add_option("-n,--namespace", sr_ns, "namespace")->capture_default_str();
  describe->callback([&] {
    rc = WithCommands(target, [&](QueueCommands& c) { return c.Describe(sr_what, sr_name, sr_ns); });
  });

  // create clusterqueue|localqueue|resourceflavor NAME [flags]
  auto* create = app.add_subcommand(
      "create", "Create a clusterqueue, localqueue, resourceflavor or simulated nodes");
  create->require_subcommand(1);
  batchd::cli::ClusterQueueFlags cqf;
  auto* ccq = create->add_subcommand("clusterqueue", "Create a ClusterQueue")->alias("cq");
  ccq->add_option("name", cqf.name)->required();
  ccq->add_option("--cohort", cqf.cohort, "cohort name");
  ccq->add_option("--queuing-strategy", cqf.queueing_strategy, "BestEffortFIFO or StrictFIFO");
  ccq->add_option("--namespace-selector", cqf.namespace_selector, "k=v,... (default: all)");
  ccq->add_option("--reclaim-within-cohort", cqf.reclaim_within_cohort, "Never, LowerPriority or Any");
  ccq->add_option("--preemption-within-cluster-queue", cqf.preemption_within_cluster_queue,
                  "Never, LowerPriority or LowerOrNewerEqualPriority");
  ccq->add_option("--nominal-quota", cqf.nominal_quota, "\"flavor:cpu=9;memory=36Gi,flavor2:...\"");
  ccq->add_option("--borrowing-limit", cqf.borrowing_limit, "same syntax as --nominal-quota");
  ccq->add_option("--lending-limit", cqf.lending_limit, "same syntax as --nominal-quota");
  ccq->callback([&] {
    auto obj = batchd::cli::BuildClusterQueue(cqf);
    if (!obj.ok()) {
      std::cerr << "error: " << obj.status().message() << "\n";
      rc = 1;
      return;
    }
    rc = WithCommands(target, [&](QueueCommands& c) { return c.Create("clusterqueue", "", *obj); });
  });
  std::string lq_name, lq_ns = "default", lq_cq;
  auto* clq = create->add_subcommand("localqueue", "Create a LocalQueue")->alias("lq");
  clq->add_option("name", lq_name)->required();
  clq->add_option("-n,--namespace", lq_ns, "namespace")->capture_default_str();
  clq->add_option("-c,--clusterqueue", lq_cq, "the ClusterQueue it submits to")->required();
  clq->callback([&] {
    auto obj = batchd::cli::BuildLocalQueue(lq_name, lq_ns, lq_cq);
    if (!obj.ok()) {
      std::cerr << "error: " << obj.status().message() << "\n";
      rc = 1;
      return;
    }
    rc = WithCommands(target, [&](QueueCommands& c) { return c.Create("localqueue", lq_ns, *obj); });
  });
  batchd::cli::ResourceFlavorFlags rff;
  auto* crf = create->add_subcommand("resourceflavor", "Create a ResourceFlavor")->alias("rf");
  crf->add_option("name", rff.name)->required();
  crf->add_option("--node-labels", rff.node_labels, "k=v,...");
  crf->add_option("--node-taints", rff.node_taints, "k=v:Effect,...");
  crf->add_option("--tolerations", rff.tolerations, "k=v:Effect,k:Effect,...");
  crf->callback([&] {
    auto obj = batchd::cli::BuildResourceFlavor(rff);
    if (!obj.ok()) {
      std::cerr << "error: " << obj.status().message() << "\n";
      rc = 1;
      return;
    }
    rc = WithCommands(target, [&](QueueCommands& c) { return c.Create("resourceflavor", "", *obj); });
  });

  // create node-token NAME [--data-dir DIR] [--duration 8760h]: a node agent's
  // credential, signed with the server's key (so only who can read the data
  // directory can mint one); the agent authenticates as system:node:NAME.
  std::string nt_name, nt_data = "./batchd-data", nt_issuer = "https://batchd.local", nt_key;
  int64_t nt_hours = 24 * 365;
  auto* cnt = create->add_subcommand("node-token", "Print a node agent's bearer token (system:node:NAME)");
  cnt->add_option("name", nt_name, "the node's name")->required();
  cnt->add_option("--data-dir", nt_data, "the server's data directory (its pki/sa.key signs)")
      ->capture_default_str();
  cnt->add_option("--hours", nt_hours, "validity in hours")->capture_default_str();
  cnt->add_option("--service-account-issuer", nt_issuer, "the server's --service-account-issuer")
      ->capture_default_str();
  cnt->add_option("--service-account-key-file", nt_key,
                  "the server's --service-account-key-file (default DATA_DIR/pki/sa.key)");
  cnt->callback([&] {
    std::string key = nt_key.empty() ? nt_data + "/pki/sa.key" : nt_key;
    if (!std::ifstream(key)) {
      std::cerr << "error: cannot read " << key << " (run on the server with --data-dir)\n";
      rc = 1;
      return;
    }
    batchd::auth::ServiceAccountTokens::Options o;
    o.issuer = nt_issuer;
    auto tokens = batchd::auth::ServiceAccountTokens::LoadOrCreate(key, o);
    if (!tokens.ok() || nt_hours <= 0) {
      std::cerr << "error: " << (tokens.ok() ? "--hours must be positive" : tokens.status().message()) << "\n";
      rc = 1;
      return;
    }
    batchd::auth::ServiceAccountClaims c;
    c.node = nt_name;
    c.issued_at = absl::Now();
    c.expires = c.issued_at + absl::Hours(nt_hours);
    c.jti = batchd::auth::RandomHex(16);
    std::cout << (*tokens)->Issue(c) << "\n";
  });

  // create simulated-nodes --levels block=4,rack=8,hostname=20 --cpu 96 --memory 256Gi [...]
  batchd::cli::SimulatedNodeFlags snf;
  bool sn_delete = false, sn_dry_run = false;
  auto* csn = create->add_subcommand(
      "simulated-nodes", "Create (or --delete) simulated Nodes with a generated topology");
  csn->alias("simulated-node");
  csn->add_option("--levels", snf.levels,
                  "topology levels from the top, name=fanout,... (e.g. block=4,rack=8,hostname=20); "
                  "a bare name is the label topology.batchd.io/NAME (hostname: "
                  "kubernetes.io/hostname), a name with '/' is the label key itself");
  csn->add_option("--count", snf.count,
                  "number of nodes: alone, a flat set without topology labels; with --levels, "
                  "must equal the product of the fanouts");
  csn->add_option("--prefix", snf.prefix, "node name prefix")->capture_default_str();
  csn->add_option("--cpu", snf.cpu, "cpu per node (capacity = allocatable), e.g. 96");
  csn->add_option("--memory", snf.memory, "memory per node, e.g. 256Gi");
  csn->add_option("--gpu", snf.gpu, "nvidia.com/gpu per node (0: none)")->capture_default_str();
  csn->add_option("--pods", snf.pods, "pods per node")->capture_default_str();
  csn->add_option("--labels", snf.labels, "k=v,... added to every node");
  csn->add_option("--taints", snf.taints, "k=v:Effect,... on every node");
  csn->add_flag("--delete", sn_delete,
                "delete the simulated nodes these flags describe (never a node that is not simulated)");
  csn->add_flag("--dry-run", sn_dry_run, "print the count and the first nodes; send nothing");
  csn->callback([&] {
    if (sn_delete && sn_dry_run) {
      std::cerr << "error: --delete and --dry-run do not go together\n";
      rc = 1;
      return;
    }
    // --delete needs only the names, but the same flags as the create, so
    // a copy of the create line with --delete added removes what it made.
    auto spec = batchd::cli::BuildSimulatedNodeSpec(snf);
    if (!spec.ok()) {
      std::cerr << "error: " << spec.status().message() << "\n";
      rc = 1;
      return;
    }
    if (sn_dry_run) {
      std::cout << batchd::cli::FormatSimulatedNodesPlan(*spec);
      return;
    }
    rc = WithNodeCommands(target, [&](SimulatedNodeCommands& c) {
      return sn_delete ? c.Delete(*spec) : c.Create(*spec);
    });
  });

  // completion bash|zsh: generated from the commands above.
  std::string shell;
  auto* comp = app.add_subcommand("completion", "Print a shell completion script (bash or zsh)");
  comp->add_option("shell", shell, "bash or zsh")->required();
  comp->callback([&] {
    batchd::cli::CompletionChoices choices = {
        {"list", {"clusterqueues", "localqueues", "workloads", "cq", "lq", "wl"}},
        {"stop", {"clusterqueue", "localqueue", "workload"}},
        {"resume", {"clusterqueue", "localqueue", "workload"}},
        {"describe", {"workload"}},
        {"completion", {"bash", "zsh"}}};
    auto script = batchd::cli::CompletionScript(app, shell, choices);
    if (!script.ok()) {
      std::cerr << "error: " << script.status().message() << "\n";
      rc = 1;
      return;
    }
    std::cout << *script;
  });

  CLI11_PARSE(app, argc, argv);
  return rc;
}
