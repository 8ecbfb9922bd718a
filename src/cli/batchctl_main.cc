// batchctl: what kubectl lacks for batchd. For now: `version` and
// `kubeconfig --server URL`; queue commands arrive with queueing.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"batchctl: queue and cluster tools for batchd"};
  app.require_subcommand(1);
  app.add_subcommand("version", "Print the batchctl version")->callback([] {
    std::cout << "batchctl v0.1.0 (Kubernetes API v1.32)\n";
  });
  std::string server = "http://127.0.0.1:8080";
  std::string name = "batchd";
  auto* kc = app.add_subcommand("kubeconfig", "Print a kubeconfig that points kubectl at batchd");
  kc->add_option("--server", server, "batchd URL")->capture_default_str();
  kc->add_option("--name", name, "cluster, user and context name")->capture_default_str();
  kc->callback([&] {
    std::cout << "apiVersion: v1\n"
              << "kind: Config\n"
              << "clusters:\n"
              << "- name: " << name << "\n"
              << "  cluster:\n"
              << "    server: " << server << "\n"
              << "users:\n"
              << "- name: " << name << "\n"
              << "  user: {}\n"
              << "contexts:\n"
              << "- name: " << name << "\n"
              << "  context:\n"
              << "    cluster: " << name << "\n"
              << "    user: " << name << "\n"
              << "    namespace: default\n"
              << "current-context: " << name << "\n";
  });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
