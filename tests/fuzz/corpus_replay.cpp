// Runs a libFuzzer entry point over every file of a corpus directory: the fuzzer's findings and seeds
// become a regression test that any compiler can build (no libFuzzer needed).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  std::error_code error;
  std::size_t replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1], error)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++replayed;
  }
  if (error || replayed == 0) {
    // An empty or missing corpus would pass silently and test nothing.
    std::fprintf(stderr, "%s: error: no corpus in %s%s%s\n", argv[0], argv[1], error ? ": " : "",
                 error ? error.message().c_str() : "");
    return 1;
  }
  std::printf("%zu inputs replayed from %s\n", replayed, argv[1]);
  return 0;
}
