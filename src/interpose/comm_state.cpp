#include "interpose/tls.hpp"
#include "interpose/comm_state.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "interpose/watchdog.hpp"
#include "model/profile_model.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {
// Bumped when any communicator state is freed: a handle seen before may
// now name another communicator.
std::atomic<uint64_t> g_states_freed{0};

int delete_state(MPI_Comm, int, void* value, void*) {
  auto* st = static_cast<CommState*>(value);
  std::lock_guard<std::mutex> lock(watch_lock());  // the watchdog may be reading st->name
  g_states_freed.fetch_add(1, std::memory_order_acq_rel);
  st->transport.reset();
  if (st->dup != MPI_COMM_NULL) PMPI_Comm_free(&st->dup);
  delete st;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    check_mpi(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &k, nullptr), "MPI_Comm_create_keyval");
    return k;
  }();
  return key;
}

struct StateMemo {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState* state = nullptr;
  uint64_t freed = 0;
};
HETCOLL_TLS StateMemo t_memo;
}  // namespace

CommState* find_state(MPI_Comm comm) {
  const uint64_t freed = g_states_freed.load(std::memory_order_acquire);
  if (t_memo.state && t_memo.comm == comm && t_memo.freed == freed) return t_memo.state;
  void* value = nullptr;
  int flag = 0;
  check_mpi(PMPI_Comm_get_attr(comm, keyval(), &value, &flag), "MPI_Comm_get_attr");
  if (!flag) return nullptr;
  t_memo = {comm, static_cast<CommState*>(value), freed};
  return t_memo.state;
}

CommState& create_state(MPI_Comm comm) {
  auto st = std::make_unique<CommState>();
  int size = 0, level = MPI_THREAD_SINGLE;
  check_mpi(PMPI_Comm_size(comm, &size), "MPI_Comm_size");
  check_mpi(PMPI_Query_thread(&level), "MPI_Query_thread");
  st->multiple = level == MPI_THREAD_MULTIPLE;
  MPI_Group g, world;
  check_mpi(PMPI_Comm_group(comm, &g), "MPI_Comm_group");
  check_mpi(PMPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  std::vector<int> mine(static_cast<size_t>(size));
  std::iota(mine.begin(), mine.end(), 0);
  st->world_ranks.resize(mine.size());
  check_mpi(PMPI_Group_translate_ranks(g, size, mine.data(), world, st->world_ranks.data()),
            "MPI_Group_translate_ranks");
  PMPI_Group_free(&g);
  PMPI_Group_free(&world);
  for (int w : st->world_ranks) {
    if (w == MPI_UNDEFINED) st->native_only = "a communicator with processes of another MPI_COMM_WORLD";
    st->group_key = (st->group_key ^ uint64_t(w + 1)) * 0x100000001B3ull;
  }
  if (st->native_only.empty()) {
    // The duplicate is made with errors returned, not raised: when the MPI
    // library has no communicator left for it (Open MPI has some 64k), every
    // rank gets the error alike, and the communicator stays native.
    MPI_Errhandler user = MPI_ERRHANDLER_NULL;
    check_mpi(PMPI_Comm_get_errhandler(comm, &user), "MPI_Comm_get_errhandler");
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const int rc = PMPI_Comm_dup(comm, &st->dup);
    PMPI_Comm_set_errhandler(comm, user);
    PMPI_Errhandler_free(&user);
    if (rc != MPI_SUCCESS) {
      st->dup = MPI_COMM_NULL;
      st->native_only = "no private duplicate of the communicator could be made (MPI_Comm_dup failed)";
    }
  }
  if (!st->native_only.empty()) {
    st->info.size = size;
    check_mpi(PMPI_Comm_rank(comm, &st->info.rank), "MPI_Comm_rank");
    check_mpi(PMPI_Comm_set_attr(comm, keyval(), st.get()), "MPI_Comm_set_attr");
    return *st.release();
  }
  // Errors on the duplicate come back to hetcoll, which raises them on the
  // user's communicator under the handler in effect there at that time.
  check_mpi(PMPI_Comm_set_errhandler(st->dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  {
    // Every rank's host, 8 bytes a rank (for profiles: model ranks are hosts).
    char host[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int hlen = 0;
    if (PMPI_Get_processor_name(host, &hlen) != MPI_SUCCESS || hlen < 0) hlen = 0;
    st->host_name.assign(host, size_t(std::min(hlen, int(MPI_MAX_PROCESSOR_NAME))));
    const uint64_t mine = ProfileModel::host_key(st->host_name);
    st->host_keys.resize(size_t(size));
    check_mpi(PMPI_Allgather(&mine, 8, MPI_BYTE, st->host_keys.data(), 8, MPI_BYTE, st->dup), "MPI_Allgather");
  }
  st->info = MpiTransport::query(st->dup);
  st->transport = std::make_unique<MpiTransport>(st->dup, st->info);
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  if (PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS || len <= 0) len = 0;
  st->name = cat(len ? "communicator " + std::string(name, size_t(len)) : std::string("a communicator"), " (rank ",
                 st->info.rank, " of ", st->info.size, ")");
  check_mpi(PMPI_Comm_set_attr(comm, keyval(), st.get()), "MPI_Comm_set_attr");
  return *st.release();
}

}  // namespace hetcoll::mpi
