// Fluent builders for test fixtures (STYLE.md practice 12):
//   MakeJob("j", "ns").Label("a", "b").Command({"sh", "-c", "true"}).Obj()
//   MakePod("p").Label("kueue.x-k8s.io/queue-name", "lq").Request("cpu", "1").Obj()
// Header-only; tests only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace batchd::api::testing {

using Json = nlohmann::json;

class JobBuilder {
 public:
  JobBuilder(std::string name, std::string ns) {
    obj_ = {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", std::move(name)}, {"namespace", std::move(ns)}}},
            {"spec",
             {{"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"containers",
                   {{{"name", "main"}, {"image", "busybox"}, {"command", {"true"}}}}}}}}}}}};
  }
  JobBuilder& Label(const std::string& k, const std::string& v) {
    obj_["metadata"]["labels"][k] = v;
    return *this;
  }
  JobBuilder& Annotation(const std::string& k, const std::string& v) {
    obj_["metadata"]["annotations"][k] = v;
    return *this;
  }
  JobBuilder& Finalizer(const std::string& f) {
    obj_["metadata"]["finalizers"].push_back(f);
    return *this;
  }
  JobBuilder& GenerateName(const std::string& prefix) {
    obj_["metadata"].erase("name");
    obj_["metadata"]["generateName"] = prefix;
    return *this;
  }
  JobBuilder& Parallelism(int n) {
    obj_["spec"]["parallelism"] = n;
    return *this;
  }
  JobBuilder& Completions(int n) {
    obj_["spec"]["completions"] = n;
    return *this;
  }
  JobBuilder& Suspend(bool s) {
    obj_["spec"]["suspend"] = s;
    return *this;
  }
  JobBuilder& Command(std::vector<std::string> cmd) {
    obj_["spec"]["template"]["spec"]["containers"][0]["command"] = std::move(cmd);
    return *this;
  }
  JobBuilder& Image(const std::string& image) {
    obj_["spec"]["template"]["spec"]["containers"][0]["image"] = image;
    return *this;
  }
  JobBuilder& Set(const Json::json_pointer& ptr, Json v) {
    obj_[ptr] = std::move(v);
    return *this;
  }
  Json Obj() const { return obj_; }

 private:
  Json obj_;
};

inline JobBuilder MakeJob(std::string name, std::string ns = "default") {
  return JobBuilder(std::move(name), std::move(ns));
}

class PodBuilder {
 public:
  PodBuilder(std::string name, std::string ns) {
    obj_ = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", std::move(name)}, {"namespace", std::move(ns)}}},
            {"spec",
             {{"restartPolicy", "Never"},
              {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
  }
  PodBuilder& Label(const std::string& k, const std::string& v) {
    obj_["metadata"]["labels"][k] = v;
    return *this;
  }
  PodBuilder& Annotation(const std::string& k, const std::string& v) {
    obj_["metadata"]["annotations"][k] = v;
    return *this;
  }
  // A resource request of the first container, e.g. Request("cpu", "500m").
  PodBuilder& Request(const std::string& resource, const std::string& quantity) {
    obj_["spec"]["containers"][0]["resources"]["requests"][resource] = quantity;
    return *this;
  }
  PodBuilder& Owner(const Json& owner_reference) {
    obj_["metadata"]["ownerReferences"].push_back(owner_reference);
    return *this;
  }
  PodBuilder& Set(const Json::json_pointer& ptr, Json v) {
    obj_[ptr] = std::move(v);
    return *this;
  }
  Json Obj() const { return obj_; }

 private:
  Json obj_;
};

inline PodBuilder MakePod(std::string name, std::string ns = "default") {
  return PodBuilder(std::move(name), std::move(ns));
}

inline Json MakeNamespace(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

}  // namespace batchd::api::testing
