#include "interpose/comm_setup.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "config/agreement.hpp"
#include "interpose/engine.hpp"
#include "interpose/runtime.hpp"
#include "model/profile_model.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {

// A step of setting up a state, collective over the communicator: in its
// non-blocking form, waited for by the progress engine (engine.hpp) —
// hetcoll collectives may be in flight on other communicators, and another
// rank may wait on them before it gets here; the blocking form where
// SimGrid has no non-blocking one. Throws MpiError when `what` names the
// call, else returns the error code.
template <class NonBlocking, class Blocking>
int collective_step(NonBlocking&& nb, Blocking&& blocking, const char* what) {
#ifdef HETCOLL_SMPI
  (void)nb;
  const int rc = blocking();
#else
  (void)blocking;
  MPI_Request r = MPI_REQUEST_NULL;
  int rc = nb(&r);
  if (rc == MPI_SUCCESS) rc = wait_native(&r);
#endif
  if (what) check_mpi(rc, what);
  return rc;
}

// What each rank tells the others when a communicator is set up: its host
// (for profiles: model ranks are hosts) and its configuration's digest.
struct Announcement {
  uint64_t host;
  uint64_t config;
};
static_assert(sizeof(Announcement) == 16, "16 bytes a rank");

// Parts a rank sends when the digests differ: at most this many bytes each
// (a fingerprint's text is a few hundred), and not at all where the
// communicator is so large that rank 0 would gather more than
// kMaxGatheredBytes — then the line names the groups of ranks alone.
constexpr int kMaxPartsBytes = 2048;
constexpr uint64_t kMaxGatheredBytes = uint64_t(1) << 28;
// The line every rank keeps (rank 0 makes it and sends it to all).
constexpr int kLineBytes = 2048;

// The communicator as messages name it: "MPI_COMM_WORLD (3 ranks)".
std::string comm_label(MPI_Comm comm, int size) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  if (PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS || len <= 0) len = 0;
  return cat(len ? std::string(name, size_t(len)) : std::string("a communicator"), " (", size,
             size == 1 ? " rank)" : " ranks)");
}

// The ranks' digests differ: rank 0 gathers their parts, says which
// setting differs between which ranks, and sends that line to everyone.
std::string describe_differences(const CommState& st, MPI_Comm comm, const std::vector<Announcement>& all,
                                 const Fingerprint& mine) {
  const int p = st.info.size, me = st.info.rank;
  bool identity = true;
  for (int r = 0; r < p; ++r) identity &= st.world_ranks[size_t(r)] == r;
  const std::vector<int> world = identity ? std::vector<int>{} : st.world_ranks;
  std::string what;
  if (uint64_t(p) * kMaxPartsBytes <= kMaxGatheredBytes) {
    std::string text = mine.encode();
    if (text.size() > size_t(kMaxPartsBytes)) text.resize(size_t(kMaxPartsBytes));
    int len = int(text.size());
    std::vector<int> lens(me == 0 ? size_t(p) : 0), displs(lens.size());
    check_mpi(PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, st.dup), "MPI_Gather");
    int total = 0;
    for (size_t r = 0; r < lens.size(); ++r) {
      displs[r] = total;
      total += lens[r];
    }
    std::vector<char> texts(size_t(total) + 1);
    check_mpi(PMPI_Gatherv(text.data(), len, MPI_CHAR, texts.data(), lens.data(), displs.data(), MPI_CHAR, 0, st.dup),
              "MPI_Gatherv");
    if (me == 0) {
      std::vector<Fingerprint> by_rank;
      for (int r = 0; r < p; ++r)
        by_rank.push_back(Fingerprint::decode(std::string_view(texts.data() + displs[size_t(r)], size_t(lens[size_t(r)]))));
      what = describe_disagreement(by_rank, world);
    }
  }
  if (me == 0 && what.empty()) {
    // Too many ranks to gather their parts: the groups of equal digests.
    std::vector<std::pair<uint64_t, std::vector<int>>> groups;
    for (int r = 0; r < p; ++r) {
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == all[size_t(r)].config; });
      if (g == groups.end()) {
        groups.push_back({all[size_t(r)].config, {}});
        g = groups.end() - 1;
      }
      g->second.push_back(r);
    }
    what = "the HETCOLL_* settings, the files they name or the hetcoll version differ between";
    for (size_t i = 0; i < groups.size() && i < 4; ++i) what += (i ? " | ranks " : " ranks ") + rank_ranges(groups[i].second);
    if (groups.size() > 4) what += cat(" | and ", groups.size() - 4, " other groups");
  }
  char line[kLineBytes] = {0};
  if (me == 0) {
    const std::string full = cat("the ranks of ", comm_label(comm, p),
                                 " are configured differently, so it runs the native MPI's collectives: ", what);
    std::snprintf(line, sizeof line, "%s", full.c_str());
    say_once(line, true);
  }
  check_mpi(PMPI_Bcast(line, kLineBytes, MPI_CHAR, 0, st.dup), "MPI_Bcast");
  line[kLineBytes - 1] = 0;
  return line;
}

// Every rank's host key and configuration digest, on the state's
// duplicate; the verdict ("" or what differs). The host keys are kept when
// the state is new (they do not change after).
std::string agree(CommState& st, MPI_Comm comm, bool keep_hosts) {
  const Fingerprint mine = fingerprint();
  const Announcement me{ProfileModel::host_key(st.host_name), mine.digest()};
  std::vector<Announcement> all(size_t(st.info.size));
  collective_step(
      [&](MPI_Request* r) {
        return PMPI_Iallgather(&me, int(sizeof me), MPI_BYTE, all.data(), int(sizeof me), MPI_BYTE, st.dup, r);
      },
      [&] { return PMPI_Allgather(&me, int(sizeof me), MPI_BYTE, all.data(), int(sizeof me), MPI_BYTE, st.dup); },
      "MPI_Allgather");
  if (keep_hosts) {
    st.host_keys.resize(all.size());
    for (size_t r = 0; r < all.size(); ++r) st.host_keys[r] = all[r].host;
  }
  bool same = true;
  for (const Announcement& a : all) same &= a.config == all[0].config;
  return same ? std::string() : describe_differences(st, comm, all, mine);
}
}  // namespace

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
    int rc;
    try {
      rc = collective_step([&](MPI_Request* r) { return PMPI_Comm_idup(comm, &st->dup, r); },
                           [&] { return PMPI_Comm_dup(comm, &st->dup); }, nullptr);
    } catch (...) {
      PMPI_Comm_set_errhandler(comm, user);
      PMPI_Errhandler_free(&user);
      throw;
    }
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
    attach_state(comm, st.get());
    return *st.release();
  }
  // Errors on the duplicate come back to hetcoll, which raises them on the
  // user's communicator under the handler in effect there at that time.
  check_mpi(PMPI_Comm_set_errhandler(st->dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(PMPI_Comm_rank(comm, &st->info.rank), "MPI_Comm_rank");
  st->info.size = size;
  {
    char host[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int hlen = 0;
    if (PMPI_Get_processor_name(host, &hlen) != MPI_SUCCESS || hlen < 0) hlen = 0;
    st->host_name.assign(host, size_t(std::min(hlen, int(MPI_MAX_PROCESSOR_NAME))));
  }
  // Configurations compared (HETCOLL_DISABLE takes part): as of this epoch.
  st->agreement_epoch = runtime().agreement_epoch.load(std::memory_order_acquire);
  st->disagreement = agree(*st, comm, true);
  if (st->disagreement.empty() && runtime().settings.disable) {
    // Every rank is disabled, for good (the environment does not change):
    // the duplicate goes back to the MPI library.
    PMPI_Comm_free(&st->dup);
    st->dup = MPI_COMM_NULL;
    st->native_only = "HETCOLL_DISABLE is set";
    attach_state(comm, st.get());
    return *st.release();
  }
  st->info = MpiTransport::query(st->dup);
  st->transport = std::make_unique<MpiTransport>(st->dup, st->info);
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  if (PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS || len <= 0) len = 0;
  st->comm_name = std::string(name, size_t(len));
  st->name = cat(len ? "communicator " + st->comm_name : std::string("a communicator"), " (rank ", st->info.rank, " of ",
                 st->info.size, ")");
  attach_state(comm, st.get());
  return *st.release();
}

std::string compare_configurations(CommState& st, MPI_Comm comm) { return agree(st, comm, false); }

int reserve_persistent_slot(CommState& st) {
  const int slots = std::min(st.info.persistent_slots, 64);
  if (slots <= 0) return -1;
  if (st.agreed_free_slots == 0) {
    // Which slots are free on every rank now: the OR of the ranks' slots in
    // use. Until this pool is spent, initializations take from it without
    // a word (all ranks take the same: they initialize in the same order).
    const uint64_t mine = st.persistent_slots.load(std::memory_order_acquire);
    unsigned long long used = mine, everywhere = 0;
    collective_step([&](MPI_Request* r) {
          return PMPI_Iallreduce(&used, &everywhere, 1, MPI_UNSIGNED_LONG_LONG, MPI_BOR, st.dup, r);
        },
        [&] { return PMPI_Allreduce(&used, &everywhere, 1, MPI_UNSIGNED_LONG_LONG, MPI_BOR, st.dup); },
        "MPI_Allreduce (agreeing on persistent collectives' tags)");
    const uint64_t all = slots == 64 ? ~uint64_t(0) : (uint64_t(1) << slots) - 1;
    st.agreed_free_slots = ~uint64_t(everywhere) & all;
    if (st.agreed_free_slots == 0) return -1;
  }
  const int slot = __builtin_ctzll(st.agreed_free_slots);
  st.agreed_free_slots &= st.agreed_free_slots - 1;
  st.persistent_slots.fetch_or(uint64_t(1) << slot, std::memory_order_acq_rel);
  return slot;
}

MPI_Comm duplicate_for_request(CommState& st) {
  MPI_Comm c = MPI_COMM_NULL;  // errors returned: st.dup's handler is inherited
  const int rc = collective_step([&](MPI_Request* r) { return PMPI_Comm_idup(st.dup, &c, r); },
                                 [&] { return PMPI_Comm_dup(st.dup, &c); }, nullptr);
  return rc == MPI_SUCCESS ? c : MPI_COMM_NULL;
}

}  // namespace hetcoll::mpi
