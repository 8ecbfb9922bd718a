#!/usr/bin/env bash
# Installs the Debian packages batchd needs to build and test. Idempotent:
# it only calls apt-get when something is missing.
set -euo pipefail
pkgs=(g++ cmake ninja-build make pkg-config
      dpkg-dev  # dpkg-shlibdeps: the Depends of `make deb` (packaging/build-deb.sh)
      etcd-server etcd-client  # etcd-server: the etcd store backend's tests and --store etcd
      libboost-dev libboost-system-dev nlohmann-json3-dev libyaml-cpp-dev libabsl-dev
      libcli11-dev libspdlog-dev libfmt-dev libsqlite3-dev sqlite3
      libjemalloc-dev libre2-dev libssl-dev openssl libgtest-dev libgmock-dev libbenchmark-dev procps curl
      clang-14  # clang-14: the thread-safety check (scripts/check-thread-safety.sh)
      prometheus  # prometheus + promtool: test/e2e/test_prometheus.sh
      iproute2  # ss: test/e2e/jobs/test_remote_agent.sh counts the log port's connections
      zsh)  # test/e2e/test_completion.sh (batchctl completion zsh)
pkgs+=(chromium)  # the dashboard's browser test (test/e2e/kueue/test_dashboard.sh), headless
if [[ "${BATCHD_FUZZ:-}" == 1 ]]; then pkgs+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
