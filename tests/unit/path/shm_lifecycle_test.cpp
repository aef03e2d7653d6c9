#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "ftmpi/path/shm.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using ftmpi::path::test::ShmName;

namespace {

constexpr ShmGeometry kSmall{8, 256};

ShmConfig config_for(const ShmName& name, std::uint32_t local_rank, std::vector<Rank> world_ranks,
                     ShmGeometry geometry = kSmall) {
  return ShmConfig{name.str(), local_rank, std::move(world_ranks), geometry};
}

bool mentions(const base::Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shm_lifecycle)

BOOST_AUTO_TEST_CASE(create_attach_unlink_leaves_no_name_and_the_segment_keeps_working) {
  ShmName name("life");
  const ShmConfig config = config_for(name, 0, {7});
  BOOST_REQUIRE(ShmPath::create(config).is_ok());
  BOOST_TEST(name.exists());
  auto path = ShmPath::attach(config);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  BOOST_TEST((*path)->unlink_name().is_ok());
  BOOST_TEST(!name.exists());

  const std::vector<std::byte> bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  test::BytesFrame frame(bytes);
  BOOST_TEST((*path)->send(7, frame).is_ok());
  test::CollectingSink sink;
  BOOST_TEST((*path)->poll(sink, 8) == 1u);
  BOOST_TEST((sink.frames.at(0) == bytes));

  const base::Status again = (*path)->unlink_name();
  BOOST_TEST((again.code() == base::Errc::not_found));
  auto late = ShmPath::attach(config);
  BOOST_TEST((late.code() == base::Errc::not_found));
}

BOOST_AUTO_TEST_CASE(info_reports_a_reliable_shm_path_with_single_copy_reads) {
  ShmName name("info");
  const ShmConfig config = config_for(name, 0, {3, 5});
  BOOST_REQUIRE(ShmPath::create(config).is_ok());
  auto path = ShmPath::attach(config);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  const PathInfo& info = (*path)->info();
  BOOST_TEST((info.kind == PathKind::shm));
  BOOST_TEST(info.reliable);
  BOOST_TEST(!info.gathers);  // every frame is copied whole into the FIFO
  BOOST_TEST(info.max_frame == 256u - kShmSlotHeaderSize);
  BOOST_TEST(info.bandwidth_hint > 0);
  BOOST_TEST_MESSAGE("single-copy reads: " << info.single_copy_read);
  BOOST_TEST(info.single_copy_read, "process_vm_readv is expected to work on the test machines");
  BOOST_TEST((*path)->reaches(3));
  BOOST_TEST((*path)->reaches(5));
  BOOST_TEST(!(*path)->reaches(4));  // a gap between local ranks' world ranks
  BOOST_TEST(!(*path)->reaches(2));
  BOOST_TEST(!(*path)->reaches(6));
  BOOST_TEST((*path)->peer_pid(3).value_or(0) == ::getpid());
  BOOST_TEST(!(*path)->peer_pid(5).has_value());  // local rank 1 has not attached
  BOOST_TEST((*path)->unlink_name().is_ok());
}

BOOST_AUTO_TEST_CASE(attach_before_create_fails_with_not_found) {
  ShmName name("early");
  auto path = ShmPath::attach(config_for(name, 0, {0, 1}));
  BOOST_TEST((path.code() == base::Errc::not_found));
  BOOST_TEST(mentions(path.status(), name.str()));
  BOOST_TEST(mentions(path.status(), "before its unlink_name"));
}

BOOST_AUTO_TEST_CASE(double_create_fails_and_keeps_the_first_segment) {
  ShmName name("twice");
  const ShmConfig config = config_for(name, 0, {0, 1});
  BOOST_REQUIRE(ShmPath::create(config).is_ok());
  const base::Status second = ShmPath::create(config);
  BOOST_TEST((second.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(second, "already exists"));
  auto path = ShmPath::attach(config);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  BOOST_TEST((*path)->unlink_name().is_ok());
  BOOST_TEST(!name.exists());
}

BOOST_AUTO_TEST_CASE(attach_refuses_a_segment_made_for_other_ranks_or_geometry) {
  ShmName name("mismatch");
  BOOST_REQUIRE(ShmPath::create(config_for(name, 0, {0, 1})).is_ok());

  auto wrong_size = ShmPath::attach(config_for(name, 1, {0, 1, 2}));
  BOOST_TEST((wrong_size.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(wrong_size.status(), "made for 2 local ranks, this rank expects 3"));

  auto wrong_ranks = ShmPath::attach(config_for(name, 1, {0, 5}));
  BOOST_TEST((wrong_ranks.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(wrong_ranks.status(), "world rank 1 as local rank 1"));

  auto wrong_geometry = ShmPath::attach(config_for(name, 1, {0, 1}, ShmGeometry{16, 256}));
  BOOST_TEST((wrong_geometry.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(wrong_geometry.status(), "path.shm.* must be equal on every rank"));

  auto right = ShmPath::attach(config_for(name, 1, {0, 1}));
  BOOST_REQUIRE_MESSAGE(right.is_ok(), right.status().to_string());
  BOOST_TEST((*right)->unlink_name().is_ok());
}

BOOST_AUTO_TEST_CASE(attach_refuses_a_name_that_is_not_an_ftmpi_segment) {
  ShmName name("foreign");
  const int fd = ::shm_open(name.str().c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  BOOST_REQUIRE(fd >= 0);
  BOOST_REQUIRE(::ftruncate(fd, 1 << 20) == 0);
  ::close(fd);
  auto path = ShmPath::attach(config_for(name, 0, {0}));
  BOOST_TEST((path.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(path.status(), "not an initialized ftmpi segment"));
  BOOST_TEST(::shm_unlink(name.str().c_str()) == 0);
}

BOOST_AUTO_TEST_CASE(bad_configurations_are_refused_before_touching_dev_shm) {
  ShmName name("config");
  auto refused = [&](ShmConfig config, std::string_view text) {
    const base::Status created = ShmPath::create(config);
    BOOST_TEST_CONTEXT("create with " << text) {
      BOOST_TEST((created.code() == base::Errc::invalid_argument));
      BOOST_TEST(mentions(created, text), created.message());
    }
  };
  refused(config_for(name, 1, {0, 1}), "only local rank 0");
  refused(config_for(name, 2, {0, 1}), "not below the local size");
  refused(config_for(name, 0, {4, 4}), "not distinct");
  const base::Status sparse = ShmPath::create(config_for(name, 0, {0, 1u << 30}));
  BOOST_TEST((sparse.code() == base::Errc::unsupported));
  refused(config_for(name, 0, {}), "local size 0");
  refused(config_for(name, 0, {0}, ShmGeometry{3, 256}), "power of two");
  refused(ShmConfig{"no-slash", 0, {0}, kSmall}, "must be '/'");
  BOOST_TEST(!name.exists());
}

BOOST_AUTO_TEST_SUITE_END()
