// The path driver registry: its kinds and parameters, the kinds parser ftrun and the engine share, and
// the generic start-up (publish, fence, connect, fence, finish) run for real by two ranks on threads of
// this process: shared memory and UDP over loopback, then a frame each way on each.
#include <boost/test/unit_test.hpp>

#include <barrier>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "ftmpi/path/params.hpp"
#include "ftmpi/path/registry.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;

namespace {

// The launcher's key-value store for ranks on threads: a fence is a barrier.
class ThreadExchange {
 public:
  explicit ThreadExchange(std::ptrdiff_t ranks) : barrier_(ranks) {}

  class ForRank final : public AddressExchange {
   public:
    ForRank(ThreadExchange& shared, Rank rank) : shared_(shared), rank_(rank) {}
    base::Status put(std::string_view key, std::string_view value) override {
      std::lock_guard lock(shared_.mutex_);
      shared_.values_[{rank_, std::string(key)}] = std::string(value);
      return {};
    }
    base::Status fence() override {
      shared_.barrier_.arrive_and_wait();
      ++fences;
      return {};
    }
    base::Result<std::string> get(Rank rank, std::string_view key) override {
      std::lock_guard lock(shared_.mutex_);
      auto it = shared_.values_.find({rank, std::string(key)});
      if (it == shared_.values_.end()) return base::Status(base::Errc::not_found, "no " + std::string(key));
      return it->second;
    }
    int fences = 0;

   private:
    ThreadExchange& shared_;
    Rank rank_;
  };

 private:
  std::barrier<> barrier_;
  std::mutex mutex_;
  std::map<std::pair<Rank, std::string>, std::string> values_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(path_registry)

BOOST_AUTO_TEST_CASE(the_registry_lists_each_driver_with_its_capabilities_and_parameters) {
  std::vector<std::string> kinds;
  for (const Driver* d : drivers()) kinds.emplace_back(d->kind());
  BOOST_TEST((kinds == std::vector<std::string>{"shm", "udp", "verbs"}));
  BOOST_TEST(driver_kinds() == "shm, udp, verbs");
  BOOST_REQUIRE(find_driver("shm") != nullptr);
  BOOST_TEST(find_driver("shm")->caps().host_local);
  BOOST_TEST(!find_driver("shm")->caps().rails);
  BOOST_TEST(!find_driver("udp")->caps().host_local);
  BOOST_TEST(find_driver("udp")->caps().rails);
  BOOST_TEST(!find_driver("verbs")->caps().host_local);
  BOOST_TEST(find_driver("verbs")->caps().rails);
  BOOST_TEST(find_driver("tcp") == nullptr);
  // The library's parameter table is its own rows plus every driver's, each once.
  std::set<std::string> names;
  for (const base::ParamRow& row : path_params()) BOOST_TEST(names.insert(std::string(row.name)).second, row.name);
  for (const Driver* d : drivers()) {
    BOOST_TEST(!d->params().empty());
    for (const base::ParamRow& row : d->params()) BOOST_TEST(names.count(std::string(row.name)) == 1u, row.name);
  }
  BOOST_TEST(names.count("path.kinds") == 1u);
  BOOST_TEST(names.count("path.shm.slots") == 1u);
  BOOST_TEST(names.count("path.rails") == 1u);
}

BOOST_AUTO_TEST_CASE(kinds_parse_into_registry_order_and_refuse_what_is_unknown_or_repeated) {
  auto both = parse_driver_kinds("udp,shm");
  BOOST_REQUIRE(both.is_ok());
  BOOST_TEST(both->size() == 2u);
  BOOST_TEST((*both)[0]->kind() == "shm");
  BOOST_TEST((*both)[1]->kind() == "udp");
  auto unknown = parse_driver_kinds("shm,tcp");
  BOOST_TEST((unknown.code() == base::Errc::invalid_argument));
  BOOST_TEST(unknown.status().message() == "unknown path kind 'tcp' (known: shm, udp, verbs)");
  BOOST_TEST(parse_driver_kinds("udp,udp").status().message() == "path kind 'udp' is given twice");
  BOOST_TEST((parse_driver_kinds("").code() == base::Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(two_ranks_start_every_driver_through_one_generic_exchange_and_talk_on_each) {
  base::ParamSet params;
  BOOST_REQUIRE(params.add_table(path_params()).is_ok());
  BOOST_REQUIRE(params.set("path.rails", "127.0.0.1").is_ok());
  BOOST_REQUIRE(params.set("path.verbs.device", "emulated").is_ok());
  const std::string prefix = "ftmpi-test-" + std::to_string(::getpid()) + "-registry-";
  ThreadExchange shared(2);
  std::vector<std::unique_ptr<Path>> paths[2];  // by rank: shm, then UDP's rail, then the verbs one
  std::string errors[2];
  int fences[2] = {0, 0};
  auto rank_main = [&](Rank r) {
    ThreadExchange::ForRank exchange(shared, r);
    JobView view;
    view.rank = r;
    view.size = 2;
    view.local = {0, 1};
    view.one_host = true;
    view.shm_prefix = prefix;
    view.params = &params;
    std::vector<DriverStart> starts;
    for (const Driver* d : drivers()) starts.push_back({d, std::vector<bool>(2, true)});
    auto started = start_drivers(starts, view, exchange);
    if (!started) {
      errors[r] = started.status().to_string();
      return;
    }
    for (auto& driver_paths : *started) {
      for (auto& p : driver_paths) paths[r].push_back(std::move(p));
    }
    fences[r] = exchange.fences;
  };
  std::thread other(rank_main, 1);
  rank_main(0);
  other.join();
  BOOST_REQUIRE_MESSAGE(errors[0].empty() && errors[1].empty(), errors[0] << errors[1]);
  BOOST_TEST(fences[0] == 2);  // two for all three drivers, the same on every rank
  BOOST_TEST(fences[1] == 2);
  // Nothing is left in /dev/shm: the segment's name went after the second fence.
  BOOST_TEST(::access(("/dev/shm/" + prefix + "shm-0").c_str(), F_OK) != 0);
  for (Rank r = 0; r < 2; ++r) {
    BOOST_REQUIRE(paths[r].size() == 3u);
    BOOST_REQUIRE(paths[r][2] != nullptr);
    BOOST_TEST((paths[r][0]->info().kind == PathKind::shm));
    BOOST_TEST((paths[r][1]->info().kind == PathKind::udp));
    BOOST_TEST((paths[r][2]->info().kind == PathKind::verbs_ud));
    BOOST_TEST(paths[r][1]->info().rail == "127.0.0.1");
    BOOST_TEST(paths[r][0]->peer_pid(1 - r).value_or(0) == ::getpid());  // what single copy needs
  }
  // A frame each way on each path.
  for (std::size_t k = 0; k < 3; ++k) {
    for (Rank from = 0; from < 2; ++from) {
      const Rank to = 1 - from;
      std::vector<std::byte> bytes(100, std::byte(0x40 + static_cast<int>(2 * k + from)));
      test::BytesFrame frame(bytes);
      BOOST_REQUIRE(paths[from][k]->send(to, frame).is_ok());
      test::CollectingSink sink;
      for (int i = 0; i < 100'000 && sink.frames.empty(); ++i) paths[to][k]->poll(sink, 8);
      BOOST_REQUIRE_MESSAGE(sink.frames.size() == 1u, paths[to][k]->info().name << " received nothing");
      BOOST_TEST((sink.frames[0] == bytes));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
