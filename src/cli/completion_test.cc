#include "cli/completion.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace batchd::cli {
namespace {

// A toy command tree shaped like batchctl's: a global valued flag that falls
// through, a subcommand with an alias, a nested subcommand, flags of each kind.
struct Toy {
  CLI::App app{"toy"};
  std::string server, ns, kind, name;
  bool all = false;
  Toy() {
    app.fallthrough();
    app.add_option("-s,--server", server);
    auto* list = app.add_subcommand("list");
    list->add_option("kind", kind);
    list->add_option("-n,--namespace", ns);
    list->add_flag("-A,--all-namespaces", all);
    auto* create = app.add_subcommand("create");
    auto* cq = create->add_subcommand("clusterqueue")->alias("cq");
    cq->add_option("name", name);
    cq->add_option("--cohort", ns);
  }
};

TEST(Completion, BashTablesFollowTheCommandTree) {
  Toy t;
  auto s = CompletionScript(t.app, "bash", {{"list", {"clusterqueues", "workloads"}}});
  ASSERT_TRUE(s.ok()) << s.status();
  // Subcommands per path, aliases included.
  EXPECT_NE(s->find("['.']='list create'"), std::string::npos) << *s;
  EXPECT_NE(s->find("['create']='clusterqueue cq'"), std::string::npos) << *s;
  // A command's flags: its own, help, and the parent's that fall through.
  EXPECT_NE(s->find("['list']='-h --help -n --namespace -A --all-namespaces -s --server'"),
            std::string::npos)
      << *s;
  // Only flags that take a value are "valued" (the word after them is a value).
  EXPECT_NE(s->find("['list']='-n --namespace -s --server'"), std::string::npos) << *s;
  // Choices reach the command and its aliases' paths.
  EXPECT_NE(s->find("['list']='clusterqueues workloads'"), std::string::npos) << *s;
  EXPECT_NE(s->find("['create cq']='-h --help --cohort -s --server'"), std::string::npos) << *s;
  EXPECT_NE(s->find("complete -o default -F _batchctl batchctl"), std::string::npos);
  EXPECT_EQ(s->find("bashcompinit"), std::string::npos);
}

TEST(Completion, ZshLoadsTheBashFunctionThroughBashcompinit) {
  Toy t;
  auto s = CompletionScript(t.app, "zsh");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rfind("#compdef batchctl\n", 0), 0u);
  EXPECT_NE(s->find("bashcompinit"), std::string::npos);
  EXPECT_NE(s->find("complete -o default -F _batchctl batchctl"), std::string::npos);
}

TEST(Completion, OtherShellsAreRefused) {
  Toy t;
  auto s = CompletionScript(t.app, "fish");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("want bash or zsh"), std::string_view::npos);
}

TEST(Completion, WordsAShellWouldInterpretAreLeftOut) {
  CLI::App app{"odd"};
  std::string v;
  app.add_subcommand("ok");
  auto s = CompletionScript(app, "bash", {{"ok", {"fine", "$(rm -rf /)", "a'b"}}});
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->find("['ok']='fine'"), std::string::npos) << *s;
  EXPECT_EQ(s->find("rm -rf"), std::string::npos);
  EXPECT_EQ(s->find("a'b"), std::string::npos);
}

}  // namespace
}  // namespace batchd::cli
