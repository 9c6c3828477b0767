#include "file_io.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace topocoll::pmpi {
namespace {

// Open MPI's io components as its parameters show them: the io parameter's
// value, and whether each component registered its own parameters.
struct io_components {
  std::string chosen;
  bool ompio = false;
  bool romio = false;
};

std::string read_string(int index) {
  MPI_T_cvar_handle h{};
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &h, &count) != MPI_SUCCESS) return {};
  std::vector<char> v(static_cast<std::size_t>(std::max(count, 4096)) + 1, '\0');
  const bool read = MPI_T_cvar_read(h, v.data()) == MPI_SUCCESS;
  MPI_T_cvar_handle_free(&h);
  return read ? std::string(v.data()) : std::string{};
}

io_components read_io_components() {
  io_components io;
  int provided = 0, n = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return io;
  MPI_T_cvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    char name[256];
    int len = sizeof name, verbosity = 0, desc_len = 0, bind = 0, scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum values{};
    if (MPI_T_cvar_get_info(i, name, &len, &verbosity, &type, &values, nullptr, &desc_len, &bind,
                            &scope) != MPI_SUCCESS)
      continue;
    const std::string_view v(name);
    io.ompio = io.ompio || v.starts_with("io_ompio_");
    io.romio = io.romio || v.starts_with("io_romio");
    if (v == "io" && type == MPI_CHAR) io.chosen = read_string(i);
  }
  MPI_T_finalize();
  return io;
}

// Whether a component list ("a,b", or "^a,b" for all but those) admits OMPIO.
bool admits_ompio(std::string_view list) {
  const bool excluding = list.starts_with('^');
  if (excluding) list.remove_prefix(1);
  bool named = false;
  while (!named && !list.empty()) {
    const std::size_t comma = list.find(',');
    named = list.substr(0, comma) == "ompio";
    list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
  }
  return named != excluding;
}

// Why OMPIO may still open files; empty where it may not.
std::string ompio_stays;

}  // namespace

void keep_file_io_off_ompio() {
  const io_components io = read_io_components();
  if (!io.ompio) return;
  if (!io.chosen.empty()) {
    if (admits_ompio(io.chosen)) ompio_stays = "the io parameter is \"" + io.chosen + "\"";
    return;
  }
  if (!io.romio) {
    ompio_stays = "Open MPI has no ROMIO component";
    return;
  }
  ::setenv("OMPI_MCA_io", "^ompio", 1);
}

void warn_where_ompio_stays(int rank) {
  if (rank != 0 || ompio_stays.empty()) return;
  std::fprintf(stderr,
               "topocoll-pmpi: TOPOCOLL_PMPI_PROGRESS=thread with Open MPI's OMPIO, as %s: OMPIO "
               "completes nonblocking file requests without a lock, and the progress thread is a "
               "second thread inside MPI, so a program with one outstanding may crash\n",
               ompio_stays.c_str());
  std::fflush(stderr);
}

}  // namespace topocoll::pmpi
