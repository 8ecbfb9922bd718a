#include "api/json_tree.h"

#include <cstddef>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace batchd::api {
namespace {

void Release(Json& v, int depth) noexcept {
  if (v.is_object()) {
    Json::object_t& members = *v.get_ptr<Json::object_t*>();
    if (depth < kReleaseDepth) {
      for (auto& [name, member] : members) {
        if (member.is_structured()) Release(member, depth + 1);
      }
    }
    members.clear();
  } else if (v.is_array()) {
    Json::array_t& elements = *v.get_ptr<Json::array_t*>();
    if (depth < kReleaseDepth) {
      for (Json& e : elements) {
        if (e.is_structured()) Release(e, depth + 1);
      }
    }
    elements.clear();
  }
}

// The allocator of ShareJson's control block and value: std::allocator's
// memory, and ReleaseTree before the value's destructor.
template <class T>
struct ReleasingAllocator {
  using value_type = T;
  ReleasingAllocator() = default;
  template <class U>
  ReleasingAllocator(const ReleasingAllocator<U>&) noexcept {}  // NOLINT: rebinding.
  T* allocate(size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <class U>
  void destroy(U* p) noexcept {
    if constexpr (std::is_same_v<std::remove_cv_t<U>, Json>) {
      Release(*const_cast<Json*>(p), 0);
    }
    p->~U();
  }
  template <class U>
  bool operator==(const ReleasingAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const ReleasingAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace

void ReleaseTree(Json& v) noexcept { Release(v, 0); }

std::shared_ptr<const Json> ShareJson(Json v) {
  return std::allocate_shared<Json>(ReleasingAllocator<Json>(), std::move(v));
}

}  // namespace batchd::api
