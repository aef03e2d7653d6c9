#include <boost/test/unit_test.hpp>

#include <string>

#include "ftmpi/base/params.hpp"
#include "ftmpi/coll/tuning.hpp"
#include "printing.hpp"

using namespace ftmpi::coll;
using ftmpi::base::Errc;
using ftmpi::base::ParamScope;
using ftmpi::base::ParamSet;

namespace {

constexpr Collective kAll[] = {
    Collective::barrier,        Collective::bcast,     Collective::reduce,    Collective::allreduce,
    Collective::gather,         Collective::gatherv,   Collective::scatter,   Collective::scatterv,
    Collective::allgather,      Collective::allgatherv, Collective::alltoall, Collective::alltoallv,
    Collective::reduce_scatter, Collective::reduce_scatter_block, Collective::scan, Collective::exscan,
};

ParamSet coll_param_set() {
  ParamSet params;
  BOOST_TEST_REQUIRE(params.add_table(coll_params()).is_ok());
  return params;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_collective_has_an_algorithm_row_listing_its_algorithms) {
  ParamSet params = coll_param_set();
  for (Collective c : kAll) {
    BOOST_TEST_CONTEXT(to_string(c)) {
      const std::string name = "coll." + std::string(to_string(c)) + ".algorithm";
      const auto* row = params.find(name);
      BOOST_TEST_REQUIRE(row != nullptr);
      BOOST_TEST(row->name == algorithm_param(c).name);
      BOOST_TEST(row->default_value == "auto");
      BOOST_TEST((row->scope == ParamScope::job));  // every rank must choose alike
      BOOST_TEST(!algorithms_of(c).empty());
      for (Algorithm a : algorithms_of(c)) {
        BOOST_TEST(params.set(name, to_string(a)).is_ok(), to_string(a));
        BOOST_TEST(parse_algorithm(c, to_string(a)).value() == a);
      }
      BOOST_TEST(parse_algorithm(c, "auto").value() == Algorithm::automatic);
    }
  }
  for (const auto& row : coll_params()) BOOST_TEST((row.scope == ParamScope::job), row.name);
}

BOOST_AUTO_TEST_CASE(unknown_algorithm_name_is_a_clear_error) {
  auto parsed = parse_algorithm(Collective::bcast, "fastest");
  BOOST_TEST(parsed.code() == Errc::invalid_argument);
  const std::string message = parsed.status().message();
  BOOST_TEST(message.find("coll.bcast.algorithm") != std::string::npos, message);
  BOOST_TEST(message.find("'fastest'") != std::string::npos, message);
  BOOST_TEST(message.find("scatter_allgather") != std::string::npos, message);
  // An algorithm of another collective is unknown here too.
  BOOST_TEST(parse_algorithm(Collective::barrier, "ring").code() == Errc::invalid_argument);

  Tuning tuning = default_tuning();
  BOOST_TEST(tuning.force(Collective::allreduce, "bruck").code() == Errc::invalid_argument);
  BOOST_TEST(tuning.forced(Collective::allreduce) == Algorithm::automatic);

  ParamSet params = coll_param_set();
  BOOST_TEST(params.set("coll.allreduce.algorithm", "bogus").code() == Errc::invalid_argument);
}

BOOST_AUTO_TEST_CASE(tuning_reads_overrides_from_the_param_set) {
  ParamSet params = coll_param_set();
  BOOST_TEST_REQUIRE(params.set("coll.bcast.algorithm", "pipeline").is_ok());
  BOOST_TEST_REQUIRE(params.set("coll.segment_size", "1k").is_ok());
  BOOST_TEST_REQUIRE(params.set("coll.alltoallv.linear_max_ranks", "3").is_ok());
  auto tuning = tuning_from(params);
  BOOST_TEST_REQUIRE(tuning.is_ok());
  BOOST_TEST(tuning->forced(Collective::bcast) == Algorithm::pipeline);
  BOOST_TEST(tuning->forced(Collective::reduce) == Algorithm::automatic);
  BOOST_TEST(tuning->segment_size == 1024U);
  BOOST_TEST(tuning->alltoallv_linear_max_ranks == 3);
  // The defaults come from the rows, not from a second copy.
  const Tuning defaults = default_tuning();
  BOOST_TEST(defaults.segment_size == ftmpi::base::parse_size(params.find("coll.segment_size")->default_value).value());
  BOOST_TEST(defaults.bcast_short_max > 0U);
}

BOOST_AUTO_TEST_CASE(auto_follows_the_size_thresholds) {
  Tuning t = default_tuning();
  t.bcast_short_max = 1000;
  t.bcast_pipeline_min = 100'000;
  BOOST_TEST(choose(t, Collective::bcast, {8, 1000}) == Algorithm::binomial);
  BOOST_TEST(choose(t, Collective::bcast, {8, 1001}) == Algorithm::scatter_allgather);
  BOOST_TEST(choose(t, Collective::bcast, {8, 100'000}) == Algorithm::pipeline);
  BOOST_TEST(choose(t, Collective::bcast, {2, 1 << 20}) == Algorithm::binomial);
  // Small communicators stay on the tree at every size (coll.bcast.tree_max_ranks, 7 by default).
  BOOST_TEST(choose(t, Collective::bcast, {7, 1 << 20}) == Algorithm::binomial);
  t.bcast_tree_max_ranks = 3;
  BOOST_TEST(choose(t, Collective::bcast, {4, 1 << 20}) == Algorithm::pipeline);
  BOOST_TEST(choose(t, Collective::bcast, {3, 1 << 20}) == Algorithm::binomial);

  t.allreduce_short_max = 64;
  BOOST_TEST(choose(t, Collective::allreduce, {8, 64, 16, true}) == Algorithm::recursive_doubling);
  BOOST_TEST(choose(t, Collective::allreduce, {8, 800, 200, true}) == Algorithm::rabenseifner);
  BOOST_TEST(choose(t, Collective::allreduce, {6, 800, 200, true}) == Algorithm::ring);
  BOOST_TEST(choose(t, Collective::allreduce, {6, 800, 200, false}) == Algorithm::rabenseifner);
  BOOST_TEST(choose(t, Collective::allreduce, {8, 800, 4, true}) == Algorithm::recursive_doubling);

  t.allgather_short_max = 4096;
  BOOST_TEST(choose(t, Collective::allgather, {8, 4096}) == Algorithm::recursive_doubling);
  BOOST_TEST(choose(t, Collective::allgather, {7, 4096}) == Algorithm::bruck);
  BOOST_TEST(choose(t, Collective::allgather, {7, 4097}) == Algorithm::ring);

  t.reduce_scatter_short_max = 4096;
  BOOST_TEST(choose(t, Collective::reduce_scatter, {5, 100, 25, true}) == Algorithm::recursive_halving);
  BOOST_TEST(choose(t, Collective::reduce_scatter, {5, 100, 25, false}) == Algorithm::pairwise);

  t.alltoallv_linear_max_ranks = 4;
  BOOST_TEST(choose(t, Collective::alltoallv, {4, 1 << 20}) == Algorithm::linear);
  BOOST_TEST(choose(t, Collective::alltoallv, {5, 0}) == Algorithm::pairwise);
}

BOOST_AUTO_TEST_CASE(a_forced_algorithm_runs_unless_it_cannot) {
  Tuning t = default_tuning();
  BOOST_TEST_REQUIRE(t.force(Collective::bcast, "pipeline").is_ok());
  BOOST_TEST(choose(t, Collective::bcast, {3, 1}) == Algorithm::pipeline);

  BOOST_TEST_REQUIRE(t.force(Collective::allgather, "recursive_doubling").is_ok());
  BOOST_TEST(choose(t, Collective::allgather, {8, 10}) == Algorithm::recursive_doubling);
  BOOST_TEST(choose(t, Collective::allgather, {6, 10}) != Algorithm::recursive_doubling);

  BOOST_TEST_REQUIRE(t.force(Collective::allreduce, "ring").is_ok());
  BOOST_TEST(choose(t, Collective::allreduce, {4, 1 << 20, 1 << 18, true}) == Algorithm::ring);
  BOOST_TEST(choose(t, Collective::allreduce, {4, 1 << 20, 1 << 18, false}) != Algorithm::ring);

  BOOST_TEST_REQUIRE(t.force(Collective::reduce_scatter_block, "recursive_halving").is_ok());
  BOOST_TEST(choose(t, Collective::reduce_scatter_block, {4, 16, 4, false}) == Algorithm::pairwise);
}

BOOST_AUTO_TEST_CASE(choose_never_answers_auto_and_stays_within_the_list) {
  const Tuning t = default_tuning();
  for (Collective c : kAll) {
    for (int ranks : {1, 2, 3, 8, 13}) {
      for (std::size_t bytes : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 30}) {
        for (bool commutative : {true, false}) {
          const Shape shape{ranks, bytes, bytes / 4, commutative};
          const Algorithm a = choose(t, c, shape);
          BOOST_TEST(a != Algorithm::automatic);
          BOOST_TEST(applicable(c, a, shape), to_string(c) << " " << to_string(a));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(shared_memory_bcast_takes_the_pair_limit_on_two_ranks) {
  Tuning t = default_tuning();
  BOOST_TEST_REQUIRE(t.bcast_shm_pair_max < t.bcast_shm_max);
  BOOST_TEST(use_shm_bcast(t, 2, t.bcast_shm_pair_max));
  BOOST_TEST(!use_shm_bcast(t, 2, t.bcast_shm_pair_max + 1));
  BOOST_TEST(use_shm_bcast(t, 3, t.bcast_shm_max));
  BOOST_TEST(use_shm_bcast(t, 8, t.bcast_shm_pair_max + 1));
  BOOST_TEST(!use_shm_bcast(t, 4, t.bcast_shm_max + 1));
  BOOST_TEST(!use_shm_bcast(t, 1, 8));
  BOOST_TEST_REQUIRE(t.force(Collective::bcast, "shm").is_ok());
  BOOST_TEST(use_shm_bcast(t, 2, t.bcast_shm_max + 1));
  BOOST_TEST_REQUIRE(t.force(Collective::bcast, "binomial").is_ok());
  BOOST_TEST(!use_shm_bcast(t, 4, 8));
}

BOOST_AUTO_TEST_CASE(shared_memory_barrier_and_allreduce_follow_the_algorithm_rows) {
  Tuning t = default_tuning();
  BOOST_TEST(use_shm_barrier(t, 2));
  BOOST_TEST(!use_shm_barrier(t, 1));
  BOOST_TEST(use_shm_allreduce(t, 4, t.allreduce_shm_max));
  BOOST_TEST(!use_shm_allreduce(t, 4, t.allreduce_shm_max + 1));
  BOOST_TEST(!use_shm_allreduce(t, 1, 8));
  // A schedule never runs shm: a forced shm outside the region's reach falls back to auto.
  BOOST_TEST_REQUIRE(t.force(Collective::allreduce, "shm").is_ok());
  BOOST_TEST(use_shm_allreduce(t, 2, 8));
  BOOST_TEST(choose(t, Collective::allreduce, {2, 1 << 20, 1 << 17, true}) != Algorithm::shm);
  BOOST_TEST_REQUIRE(t.force(Collective::allreduce, "recursive_doubling").is_ok());
  BOOST_TEST(!use_shm_allreduce(t, 2, 8));
  BOOST_TEST_REQUIRE(t.force(Collective::barrier, "dissemination").is_ok());
  BOOST_TEST(!use_shm_barrier(t, 4));
  BOOST_TEST_REQUIRE(t.force(Collective::barrier, "shm").is_ok());
  BOOST_TEST(use_shm_barrier(t, 4));
  BOOST_TEST(choose(t, Collective::barrier, {4, 0}) == Algorithm::dissemination);

  ParamSet params = coll_param_set();
  BOOST_TEST_REQUIRE(params.set("coll.shm_sync.flat_max", "0").is_ok());
  BOOST_TEST(tuning_from(params).code() == Errc::invalid_argument);
}
