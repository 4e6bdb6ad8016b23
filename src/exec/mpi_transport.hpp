// The MPI transport: PMPI_Isend / PMPI_Irecv on a communicator (the PMPI
// layer's private duplicate, which returns errors instead of aborting) and
// PMPI_Waitsome. Messages longer than INT_MAX bytes go as several chunks
// with the same tag, in order. A failed MPI call throws MpiError with the
// MPI error code (the per-request code for MPI_ERR_IN_STATUS).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/transport.hpp"
#include "exec/wait_log.hpp"

namespace hetcoll {

class MpiError : public std::runtime_error {
 public:
  MpiError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};
// Throws MpiError("<what> failed: <MPI's message>") unless rc is MPI_SUCCESS.
[[noreturn]] void throw_mpi_error(int rc, const char* what);
inline void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw_mpi_error(rc, what);
}

// While it lives, MPI_COMM_WORLD's error handler returns errors (MPICH
// raises a failed request of a wait there, not on the request's
// communicator); elsewhere it does nothing. Threads share one swap.
class WorldErrorsReturned {
 public:
  WorldErrorsReturned();
  ~WorldErrorsReturned();
  WorldErrorsReturned(const WorldErrorsReturned&) = delete;
  WorldErrorsReturned& operator=(const WorldErrorsReturned&) = delete;
};

class MpiTransport : public Transport {
 public:
  // rank, size and tags of `comm` (one query per communicator). A tag is
  // a region above the message's sequence number between its two ranks
  // (modulo `tag_limit`). The regions are of two kinds:
  //   - `epochs` regions for the collectives ordered by their calls
  //     (blocking, non-blocking): the epoch (which one on the
  //     communicator) modulo `epochs` — messages a failed collective left
  //     behind cannot match the next `epochs - 1`;
  //   - `persistent_slots` regions, each held by one persistent collective
  //     from its initialization to MPI_Request_free: its starts may come in
  //     any order on the ranks (MPI 4.0, 6.13), and its messages still meet
  //     only its own.
  struct CommInfo {
    int rank = 0, size = 0;
    int tag_limit = 32768;  // sequence numbers: the executor's tag limit
    int epochs = 1;
    int persistent_slots = 0;
    int region_of_epoch(uint64_t epoch) const { return int(epoch % uint64_t(epochs)); }
    int region_of_slot(int slot) const { return epochs + slot; }
  };
  static CommInfo query(MPI_Comm comm);

  MpiTransport(MPI_Comm comm, const CommInfo& info);
  ~MpiTransport() override;
  // Ready for the next collective: requests a failed one left behind are
  // cancelled and freed; the memory stays for reuse. `log` (may be null)
  // records what the collective waits for; world_ranks (may be null) maps
  // the communicator's ranks to MPI_COMM_WORLD's for it.
  // The collective's tag `region` (CommInfo::region_of_*) sets its tags.
  void reset(WaitLog* log = nullptr, const int* world_ranks = nullptr, int region = 0);
  // A message longer than its receive (ranks passed different counts: the
  // user's error) does not stop the collective — the bytes that fit are
  // there and go on, as with the native library, so that the other ranks
  // are not left waiting. The first such error, reported after the
  // collective (MPI_SUCCESS: none).
  int deferred_error() const { return deferred_; }
  // The collective's send ports (its program's): with one, sends under
  // SimGrid are synchronous (mpi_transport.cpp says why).
  void set_send_ports(int ports) { synchronous_ = ports <= 1; }
  // Made for this communicator as `info` describes it (a transport kept for reuse).
  bool serves(MPI_Comm comm, const CommInfo& info) const {
    return comm == comm_ && info.rank == rank_ && info.size == size_ && info.tag_limit == tag_limit_ &&
           info.epochs + info.persistent_slots == regions_;
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int tag_limit() const override { return tag_limit_; }
  Request isend(const void* buf, size_t bytes, int peer, int tag) override;
  Request irecv(void* buf, size_t bytes, int peer, int tag) override;
  void wait_some(std::vector<Request>& done) override;
  void test_some(std::vector<Request>& done) override;
  // What has completed, asked of MPI even under SimGrid (where test_some
  // asks nothing): the progress engine of non-blocking collectives.
  void poll(std::vector<Request>& done);
  // The MPI requests in flight, for a wait over several transports' at
  // once (interpose/requests.cpp): the one at index k of requests()
  // completed with the return code rc of the MPI wait (MPI has set the
  // caller's copy to MPI_REQUEST_NULL). Throws MpiError for a failure.
  const std::vector<MPI_Request>& requests() const { return active_; }
  void absorb(size_t k, int rc, std::vector<Request>& done);

 private:
  // Waitsome (block) or Testsome, and the bookkeeping of what completed.
  void complete_some(std::vector<Request>& done, bool block);
  void finish_some(int rc, int outcount, std::vector<Request>& done);

 public:
  void send(const void* buf, size_t bytes, int peer, int tag) override;  // PMPI_Send
  void recv(void* buf, size_t bytes, int peer, int tag) override;        // PMPI_Recv

 private:
  template <class Post>
  Request post(size_t bytes, Post&& chunk);

  MPI_Comm comm_;
  int rank_ = 0, size_ = 0, tag_limit_ = 32768, regions_ = 1;
  int tag_base_ = 0;
  int deferred_ = MPI_SUCCESS;
  bool synchronous_ = true;
  // rc, unless it is a truncation (deferred): then MPI_SUCCESS.
  int defer_truncation(int rc);
  std::vector<MPI_Request> active_;   // posted MPI requests
  std::vector<Request> owner_;        // the transport request of each
  std::vector<uint32_t> chunks_left_; // per transport request
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
  Request next_ = 0;
  WaitLog* log_ = nullptr;
  const int* world_ = nullptr;
};

}  // namespace hetcoll
