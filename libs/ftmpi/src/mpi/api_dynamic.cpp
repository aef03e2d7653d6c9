// Dynamic processes (MPI-3.1 chapter 10). ftrun starts every rank of a job at launch and the engine's
// reliability state is set up for exactly those ranks, so a job cannot grow or meet another job: no
// process here was spawned (MPI_Comm_get_parent gives MPI_COMM_NULL, which is the right answer, not a
// placeholder), and the calls that would start or connect processes fail with the class MPI gives their
// situation and a message saying why. Their arguments are checked first, as in every call.
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

constexpr std::string_view kWhy =
    "ftrun starts every rank of the job at launch; ftmpi cannot add processes to a job or connect two jobs "
    "(docs/mpi.md, Limits)";

bool check_info_or_null(Call& call, MPI_Info info) { return info == MPI_INFO_NULL || check_info(call, info) != nullptr; }

// MPI_Comm_spawn's and MPI_Comm_spawn_multiple's shared ending: no process started, every error code
// set (the root's array is the one MPI defines; others may pass MPI_ERRCODES_IGNORE too).
void refuse_spawn(Call& call, MPI_Comm* intercomm, int* errcodes, int processes) {
  *intercomm = MPI_COMM_NULL;
  if (errcodes != MPI_ERRCODES_IGNORE) {
    for (int i = 0; i < processes; ++i) errcodes[i] = MPI_ERR_SPAWN;
  }
  call.fail(MPI_ERR_SPAWN, fmt::format("no process was started: {}", kWhy));
}

int accept_or_connect(std::string_view name, const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm* newcomm) {
  return api_call(name, [&](Call& call) {
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_root(call, *c, root) || !check_arg(call, newcomm, "newcomm")) return;
    if (c->rank() == root && (!check_arg(call, port_name, "port_name") || !check_info_or_null(call, info))) return;
    *newcomm = MPI_COMM_NULL;
    call.fail(MPI_ERR_PORT, fmt::format("no port can be reached: {}", kWhy));
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Comm_spawn(const char* command, char* /*argv*/[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm* intercomm, int array_of_errcodes[]) {
  return api_call("MPI_Comm_spawn", [&](Call& call) {
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_root(call, *c, root) || !check_arg(call, intercomm, "intercomm")) return;
    if (c->rank() == root) {  // the other arguments are significant at the root only
      if (!check_arg(call, command, "command") || !check_info_or_null(call, info)) return;
      if (maxprocs <= 0) {
        call.fail(MPI_ERR_ARG, fmt::format("maxprocs is {}; it must be positive", maxprocs));
        return;
      }
    }
    refuse_spawn(call, intercomm, array_of_errcodes, c->rank() == root ? maxprocs : 0);
  });
}
#pragma weak MPI_Comm_spawn = PMPI_Comm_spawn

int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** /*array_of_argv*/[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm* intercomm, int array_of_errcodes[]) {
  return api_call("MPI_Comm_spawn_multiple", [&](Call& call) {
    Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_root(call, *c, root) || !check_arg(call, intercomm, "intercomm")) return;
    int processes = 0;
    if (c->rank() == root) {
      if (count <= 0) {
        call.fail(MPI_ERR_ARG, fmt::format("count is {}; it must be positive", count));
        return;
      }
      if (!check_arg(call, array_of_commands, "array_of_commands") ||
          !check_arg(call, array_of_maxprocs, "array_of_maxprocs") || !check_arg(call, array_of_info, "array_of_info")) {
        return;
      }
      for (int i = 0; i < count; ++i) {
        if (!check_arg(call, array_of_commands[i], "a command") || !check_info_or_null(call, array_of_info[i])) return;
        if (array_of_maxprocs[i] < 0) {
          call.fail(MPI_ERR_ARG, fmt::format("array_of_maxprocs[{}] is {}", i, array_of_maxprocs[i]));
          return;
        }
        processes += array_of_maxprocs[i];
      }
    }
    refuse_spawn(call, intercomm, array_of_errcodes, processes);
  });
}
#pragma weak MPI_Comm_spawn_multiple = PMPI_Comm_spawn_multiple

int PMPI_Comm_get_parent(MPI_Comm* parent) {
  return api_call("MPI_Comm_get_parent", [&](Call& call) {
    if (check_arg(call, parent, "parent")) *parent = MPI_COMM_NULL;  // started by ftrun, not spawned
  });
}
#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent

int PMPI_Open_port(MPI_Info info, char* port_name) {
  return api_call("MPI_Open_port", [&](Call& call) {
    if (!check_info_or_null(call, info) || !check_arg(call, port_name, "port_name")) return;
    call.fail(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("no port can be opened: {}", kWhy));
  });
}
#pragma weak MPI_Open_port = PMPI_Open_port

// No port was ever opened, so every name is one MPI_Open_port did not give (MPI_ERR_PORT).
int PMPI_Close_port(const char* port_name) {
  return api_call("MPI_Close_port", [&](Call& call) {
    if (!check_arg(call, port_name, "port_name")) return;
    call.fail(MPI_ERR_PORT, fmt::format("port \"{}\" is not open: {}", port_name, kWhy));
  });
}
#pragma weak MPI_Close_port = PMPI_Close_port

int PMPI_Comm_accept(const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  return accept_or_connect("MPI_Comm_accept", port_name, info, root, comm, newcomm);
}
#pragma weak MPI_Comm_accept = PMPI_Comm_accept

int PMPI_Comm_connect(const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm) {
  return accept_or_connect("MPI_Comm_connect", port_name, info, root, comm, newcomm);
}
#pragma weak MPI_Comm_connect = PMPI_Comm_connect

int PMPI_Publish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return api_call("MPI_Publish_name", [&](Call& call) {
    if (!check_arg(call, service_name, "service_name") || !check_info_or_null(call, info) ||
        !check_arg(call, port_name, "port_name")) {
      return;
    }
    call.fail(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("there is no name service: {}", kWhy));
  });
}
#pragma weak MPI_Publish_name = PMPI_Publish_name

// Nothing can be published, so no name is (MPI_ERR_SERVICE, MPI_ERR_NAME: the classes MPI gives).
int PMPI_Unpublish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return api_call("MPI_Unpublish_name", [&](Call& call) {
    if (!check_arg(call, service_name, "service_name") || !check_info_or_null(call, info) ||
        !check_arg(call, port_name, "port_name")) {
      return;
    }
    call.fail(MPI_ERR_SERVICE, fmt::format("service \"{}\" is not published: {}", service_name, kWhy));
  });
}
#pragma weak MPI_Unpublish_name = PMPI_Unpublish_name

int PMPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
  return api_call("MPI_Lookup_name", [&](Call& call) {
    if (!check_arg(call, service_name, "service_name") || !check_info_or_null(call, info) ||
        !check_arg(call, port_name, "port_name")) {
      return;
    }
    call.fail(MPI_ERR_NAME, fmt::format("service \"{}\" is not published: {}", service_name, kWhy));
  });
}
#pragma weak MPI_Lookup_name = PMPI_Lookup_name

int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  return api_call("MPI_Comm_join", [&](Call& call) {
    if (!check_arg(call, intercomm, "intercomm")) return;
    *intercomm = MPI_COMM_NULL;
    call.fail(MPI_ERR_UNSUPPORTED_OPERATION, fmt::format("socket {} cannot join another process: {}", fd, kWhy));
  });
}
#pragma weak MPI_Comm_join = PMPI_Comm_join

}  // extern "C"
