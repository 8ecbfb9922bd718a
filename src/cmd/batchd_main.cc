// batchd: the Kubernetes batch stack in one program.
//   batchd server [--listen 127.0.0.1:8080] [--data-dir DIR] ...
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cmd/server.h"
#include "common/logging.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int RunServer(const batchd::cmd::ServerOptions& opts) {
  auto server = batchd::cmd::Server::Create(opts);
  if (!server.ok()) {
    std::cerr << "batchd: " << server.status().message() << "\n";
    return 1;
  }
  auto port = (*server)->Start();
  if (!port.ok()) {
    std::cerr << "batchd: " << port.status().message() << "\n";
    return 1;
  }
  std::string host = opts.listen.substr(0, opts.listen.rfind(':'));
  std::cout << "batchd server listening on http://" << host << ":" << *port << "\n"
            << "  kubectl -s http://" << host << ":" << *port << " get namespaces\n"
            << "  or: build/bin/batchctl kubeconfig --server http://" << host << ":" << *port
            << " > ~/.kube/config" << std::endl;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  while (!g_stop) pause();
  BATCHD_LOG_INFO("shutting down");
  (*server)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"batchd: Kubernetes batch, Kueue-style queueing and JobSet in one program"};
  app.require_subcommand(0, 1);
  batchd::cmd::ServerOptions opts;
  auto* server = app.add_subcommand("server", "Run the API server with the embedded store");
  for (CLI::App* a : {&app, server}) {
    a->add_option("--listen", opts.listen, "HOST:PORT to serve plain HTTP on")
        ->capture_default_str();
    a->add_option("--data-dir", opts.data_dir, "Directory of the embedded SQLite store")
        ->capture_default_str();
    a->add_option("--store", opts.store, "Store backend: sqlite or memory")->capture_default_str();
    a->add_option("--store-sync", opts.sync,
                  "SQLite durability: full (power loss) or normal (process crash)")
        ->capture_default_str();
    a->add_flag("!--no-local-node", opts.local_node, "Do not run a node agent for this machine");
    a->add_option("--config", opts.config_file, "Queueing configuration file");
  }
  bool version = false;
  app.add_flag("--version", version, "Print the version");
  CLI11_PARSE(app, argc, argv);
  if (version) {
    std::cout << "batchd v0.1.0 (Kubernetes API v1.32)\n";
    return 0;
  }
  spdlog::set_level(spdlog::level::info);
  return RunServer(opts);
}
