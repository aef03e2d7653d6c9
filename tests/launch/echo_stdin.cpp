// Rank 0 prints every line of its stdin as "echo: <line>"; other ranks check theirs is empty.
#include <iostream>
#include <string>

#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

int main(int, char**, char** envp) {
  rte::Client client = launch_test::start_rank(envp);
  std::string line;
  if (client.rank() == 0) {
    while (std::getline(std::cin, line)) std::cout << "echo: " << line << std::endl;
  } else if (std::getline(std::cin, line)) {
    std::cout << "rank " << client.rank() << " got stdin: " << line << std::endl;
  }
  if (base::Status s = client.finalize(); !s) die(s.to_string());
  return 0;
}
