#include "ui/ui.h"

#include <gtest/gtest.h>

namespace batchd::ui {
namespace {

using apiserver::BufferWriter;
using apiserver::HttpRequest;

HttpRequest Get(std::string path, std::string method = "GET") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

TEST(DashboardTest, LeavesOtherPathsToTheApi) {
  for (const char* p : {"/", "/api", "/uix", "/apis/ui", "/metrics"}) {
    BufferWriter w;
    EXPECT_FALSE(ServeDashboard(Get(p), w)) << p;
    EXPECT_EQ(w.code(), 0) << p;
  }
}

TEST(DashboardTest, RedirectsTheBarePrefix) {
  BufferWriter w;
  ASSERT_TRUE(ServeDashboard(Get("/ui"), w));
  EXPECT_EQ(w.code(), 301);
  EXPECT_EQ(w.Header("Location"), "/ui/");
}

TEST(DashboardTest, ServesThePageAndItsFiles) {
  BufferWriter page;
  ASSERT_TRUE(ServeDashboard(Get("/ui/"), page));
  EXPECT_EQ(page.code(), 200);
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body().find("/ui/app.js"), std::string::npos);
  EXPECT_NE(page.Header("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  BufferWriter js;
  ASSERT_TRUE(ServeDashboard(Get("/ui/app.js"), js));
  EXPECT_EQ(js.code(), 200);
  EXPECT_EQ(js.Header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_NE(js.body().find("sessionStorage"), std::string::npos);
  BufferWriter css;
  ASSERT_TRUE(ServeDashboard(Get("/ui/style.css"), css));
  EXPECT_EQ(css.Header("Content-Type"), "text/css; charset=utf-8");
  // The whole file, byte for byte: the embedding keeps its length.
  BufferWriter head;
  ASSERT_TRUE(ServeDashboard(Get("/ui/app.js", "HEAD"), head));
  EXPECT_EQ(head.code(), 200);
  EXPECT_TRUE(head.body().empty());
  EXPECT_EQ(head.Header("ETag"), js.Header("ETag"));
}

TEST(DashboardTest, RevalidatesWithEtag) {
  BufferWriter first;
  ASSERT_TRUE(ServeDashboard(Get("/ui/app.js"), first));
  std::string etag = first.Header("ETag");
  ASSERT_FALSE(etag.empty());
  HttpRequest again = Get("/ui/app.js");
  again.headers["if-none-match"] = etag;
  BufferWriter second;
  ASSERT_TRUE(ServeDashboard(again, second));
  EXPECT_EQ(second.code(), 304);
  EXPECT_TRUE(second.body().empty());
  again.headers["if-none-match"] = "\"stale\"";
  BufferWriter third;
  ASSERT_TRUE(ServeDashboard(again, third));
  EXPECT_EQ(third.code(), 200);
}

TEST(DashboardTest, UnknownFileIsAClearNotFoundPage) {
  BufferWriter w;
  ASSERT_TRUE(ServeDashboard(Get("/ui/no-such-page<script>"), w));
  EXPECT_EQ(w.code(), 404);
  EXPECT_EQ(w.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(w.body().find("Not found"), std::string::npos);
  // The requested name is never echoed into the page.
  EXPECT_EQ(w.body().find("<script>"), std::string::npos);
  BufferWriter dir;
  ASSERT_TRUE(ServeDashboard(Get("/ui/../etc/passwd"), dir));
  EXPECT_EQ(dir.code(), 404);
}

TEST(DashboardTest, RefusesWrites) {
  for (const char* m : {"POST", "PUT", "DELETE", "PATCH"}) {
    BufferWriter w;
    ASSERT_TRUE(ServeDashboard(Get("/ui/app.js", m), w)) << m;
    EXPECT_EQ(w.code(), 405) << m;
    EXPECT_EQ(w.Header("Allow"), "GET, HEAD") << m;
  }
}

}  // namespace
}  // namespace batchd::ui
