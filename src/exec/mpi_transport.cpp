#include "exec/mpi_transport.hpp"

#include <mutex>

#include <algorithm>
#include <climits>

#include "util/error.hpp"

namespace hetcoll {

namespace {
// The send port (exec/executor.hpp) holds a send until MPI completes it. A
// real NIC sends queued messages one after another, so an eager send that
// completes at once still leaves in order. SimGrid instead lets every
// started message share the link at once: with one port (a model without a
// network) a send must hold the port until its data has arrived, which a
// synchronous send does (the receives are posted early, so it costs no
// extra wait). With many ports (a model whose topology shares the links, as
// SimGrid does) sends are ordinary: a synchronous one would hold its rank
// for the acknowledgement's trip back, which no model prices.
int isend(bool sync, const void* b, int n, int peer, int tag, MPI_Comm c, MPI_Request* r) {
#ifdef HETCOLL_SMPI
  if (sync) return PMPI_Issend(b, n, MPI_BYTE, peer, tag, c, r);
#endif
  (void)sync;
  return PMPI_Isend(b, n, MPI_BYTE, peer, tag, c, r);
}
int send(bool sync, const void* b, int n, int peer, int tag, MPI_Comm c) {
#ifdef HETCOLL_SMPI
  if (sync) return PMPI_Ssend(b, n, MPI_BYTE, peer, tag, c);
#endif
  (void)sync;
  return PMPI_Send(b, n, MPI_BYTE, peer, tag, c);
}
}  // namespace

namespace {
constexpr size_t kChunk = size_t(1) << 30;  // bytes per MPI message, < INT_MAX
}  // namespace

void throw_mpi_error(int rc, const char* what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (PMPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
  throw MpiError(rc, cat(what, " failed: ", len ? std::string(msg, size_t(len)) : cat("MPI error ", rc)));
}

MpiTransport::CommInfo MpiTransport::query(MPI_Comm comm) {
  CommInfo info;
  check_mpi(PMPI_Comm_rank(comm, &info.rank), "MPI_Comm_rank");
  check_mpi(PMPI_Comm_size(comm, &info.size), "MPI_Comm_size");
  void* ub_attr = nullptr;
  int flag = 0;
  check_mpi(PMPI_Comm_get_attr(comm, MPI_TAG_UB, &ub_attr, &flag), "MPI_Comm_get_attr(MPI_TAG_UB)");
  // Tags 0 .. ub: up to 23 bits of sequence number (no pair exchanges 8M
  // messages in one collective: the planner builds at most 4M ops; more
  // wrap around, in order), the rest regions — at least 64 where the upper
  // bound allows (MPICH 4.0's is 2^28 − 1: 22 bits of sequence then; MPI
  // promises only 32767: 2^3 regions and 12 bits), half for the ordered
  // collectives, half (at most 64) for persistent ones.
  int ub = flag && ub_attr ? *static_cast<int*>(ub_attr) : 32767;
  int bits = 0;
  while (bits < 30 && (int64_t(1) << (bits + 1)) - 1 <= int64_t(ub)) ++bits;
  const int region_bits = std::max(bits - 23, std::min(6, bits - 12));
  info.tag_limit = 1 << (bits - region_bits);
  const int regions = 1 << region_bits;
  info.epochs = std::max(1, regions / 2);
  info.persistent_slots = std::min(regions - info.epochs, 64);
  return info;
}

MpiTransport::MpiTransport(MPI_Comm comm, const CommInfo& info)
    : comm_(comm), rank_(info.rank), size_(info.size), tag_limit_(info.tag_limit),
      regions_(info.epochs + info.persistent_slots) {}

MpiTransport::~MpiTransport() { reset(); }

void MpiTransport::reset(WaitLog* log, const int* world_ranks, int region) {
  tag_base_ = (region >= 0 && region < regions_ ? region : 0) * tag_limit_;
  deferred_ = MPI_SUCCESS;
  log_ = log;
  world_ = world_ranks;
  if (log_) log_->clear();
  // Requests left behind only after an error: cancel and free them.
  for (MPI_Request& r : active_)
    if (r != MPI_REQUEST_NULL) {
      PMPI_Cancel(&r);
      PMPI_Request_free(&r);
    }
  active_.clear();
  owner_.clear();
  chunks_left_.clear();
  next_ = 0;
}

template <class Post>
Transport::Request MpiTransport::post(size_t bytes, Post&& chunk) {
  Request id = next_++;
  uint32_t n = 0;
  size_t off = 0;
  do {  // zero-byte messages still go: they carry synchronisation
    size_t len = std::min(kChunk, bytes - off);
    MPI_Request r;
    chunk(off, len, &r);
    active_.push_back(r);
    owner_.push_back(id);
    ++n;
    off += len;
  } while (off < bytes);
  chunks_left_.push_back(n);
  return id;
}

// The wait log's view of a message (the watchdog's only).
#define HC_LOG_POSTED(id, recv, peer) \
  if (log_) log_->posted(id, recv, peer, world_ ? world_[peer] : -1)

Transport::Request MpiTransport::isend(const void* buf, size_t bytes, int peer, int tag) {
  const char* p = static_cast<const char*>(buf);
  Request id = post(bytes, [&](size_t off, size_t len, MPI_Request* r) {
    check_mpi(hetcoll::isend(synchronous_, p + off, int(len), peer, tag_base_ + tag, comm_, r), "MPI_Isend");
  });
  HC_LOG_POSTED(id, false, peer);
  return id;
}

Transport::Request MpiTransport::irecv(void* buf, size_t bytes, int peer, int tag) {
  char* p = static_cast<char*>(buf);
  Request id = post(bytes, [&](size_t off, size_t len, MPI_Request* r) {
    check_mpi(PMPI_Irecv(p + off, int(len), MPI_BYTE, peer, tag_base_ + tag, comm_, r), "MPI_Irecv");
  });
  HC_LOG_POSTED(id, true, peer);
  return id;
}

// A blocking send or receive is request `next_` for the wait log; the
// request number is spent so the log's entries stay distinct.
void MpiTransport::send(const void* buf, size_t bytes, int peer, int tag) {
  const Request id = next_++;
  chunks_left_.push_back(0);
  HC_LOG_POSTED(id, false, peer);
  const char* p = static_cast<const char*>(buf);
  size_t off = 0;
  do {
    size_t len = std::min(kChunk, bytes - off);
    check_mpi(hetcoll::send(synchronous_, p + off, int(len), peer, tag_base_ + tag, comm_), "MPI_Send");
    off += len;
  } while (off < bytes);
  if (log_) log_->completed(id);
}

void MpiTransport::recv(void* buf, size_t bytes, int peer, int tag) {
  const Request id = next_++;
  chunks_left_.push_back(0);
  HC_LOG_POSTED(id, true, peer);
  char* p = static_cast<char*>(buf);
  size_t off = 0;
  do {
    size_t len = std::min(kChunk, bytes - off);
    check_mpi(defer_truncation(PMPI_Recv(p + off, int(len), MPI_BYTE, peer, tag_base_ + tag, comm_, MPI_STATUS_IGNORE)),
              "MPI_Recv");
    off += len;
  } while (off < bytes);
  if (log_) log_->completed(id);
}

int MpiTransport::defer_truncation(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS && PMPI_Error_class(rc, &cls) == MPI_SUCCESS && cls == MPI_ERR_TRUNCATE) {
    if (deferred_ == MPI_SUCCESS) deferred_ = rc;
    return MPI_SUCCESS;
  }
  return rc;
}

// MPICH raises an error of MPI_Waitsome (a truncated message: the user's
// mismatch) on MPI_COMM_WORLD's handler, not on the requests' communicator
// (hetcoll's duplicate, which returns errors): fatal by default. Return it
// to us meanwhile; the handler in effect on the user's communicator
// decides later, as with any other MPI. Threads waiting at once share one
// swap: the first saves the handler, the last puts it back.
#ifdef MPICH_VERSION
namespace {
std::mutex g_swap_mu;
int g_waiting = 0;
MPI_Errhandler g_saved = MPI_ERRHANDLER_NULL;
}  // namespace
WorldErrorsReturned::WorldErrorsReturned() {
  std::lock_guard<std::mutex> lock(g_swap_mu);
  if (g_waiting++ == 0 && PMPI_Comm_get_errhandler(MPI_COMM_WORLD, &g_saved) == MPI_SUCCESS)
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
WorldErrorsReturned::~WorldErrorsReturned() {
  std::lock_guard<std::mutex> lock(g_swap_mu);
  if (--g_waiting == 0 && g_saved != MPI_ERRHANDLER_NULL) {
    PMPI_Comm_set_errhandler(MPI_COMM_WORLD, g_saved);
    PMPI_Errhandler_free(&g_saved);
    g_saved = MPI_ERRHANDLER_NULL;
  }
}
#else
WorldErrorsReturned::WorldErrorsReturned() {}
WorldErrorsReturned::~WorldErrorsReturned() {}
#endif

void MpiTransport::wait_some(std::vector<Request>& done) { complete_some(done, true); }

void MpiTransport::poll(std::vector<Request>& done) {
  if (active_.empty()) return;
  indices_.resize(active_.size());
  statuses_.resize(active_.size());
  int outcount = 0;
  int rc;
  {
    WorldErrorsReturned returned;
    rc = PMPI_Testsome(int(active_.size()), active_.data(), &outcount, indices_.data(), statuses_.data());
  }
  finish_some(rc, outcount, done);
}

void MpiTransport::absorb(size_t k, int rc, std::vector<Request>& done) {
  if (k >= active_.size()) throw ScheduleError("a completed request the transport does not have");
  active_[k] = MPI_REQUEST_NULL;
  check_mpi(defer_truncation(rc), "MPI_Waitany");
  const Request id = owner_[k];
  if (--chunks_left_[id] == 0) {
    done.push_back(id);
    if (log_) log_->completed(id);
  }
  active_.erase(active_.begin() + long(k));
  owner_.erase(owner_.begin() + long(k));
}

void MpiTransport::test_some(std::vector<Request>& done) {
#ifndef HETCOLL_SMPI  // a poll costs simulated time there unless smpi/test is 0
  if (!active_.empty()) complete_some(done, false);
#else
  (void)done;
#endif
}

void MpiTransport::complete_some(std::vector<Request>& done, bool block) {
  if (active_.empty()) throw ScheduleError("wait on a transport with nothing posted");
  indices_.resize(active_.size());
  statuses_.resize(active_.size());
  int outcount = 0;
  auto some = [&] {
    return block ? PMPI_Waitsome(int(active_.size()), active_.data(), &outcount, indices_.data(), statuses_.data())
                 : PMPI_Testsome(int(active_.size()), active_.data(), &outcount, indices_.data(), statuses_.data());
  };
#ifdef HETCOLL_SMPI
  // SimGrid 3.32's MPI_Waitsome polls, advancing simulated time by ~100 µs
  // a round: a pipeline of small messages would crawl. MPI_Waitany blocks
  // in the simulation kernel and costs nothing.
  (void)some;
  (void)block;  // test_some never gets here under SMPI
  int index = MPI_UNDEFINED;
  int rc = PMPI_Waitany(int(active_.size()), active_.data(), &index, &statuses_[0]);
  if (index != MPI_UNDEFINED) {
    outcount = 1;
    indices_[0] = index;
  }
  if (rc != MPI_SUCCESS && index != MPI_UNDEFINED) {  // as Waitsome reports a failed request
    statuses_[0].MPI_ERROR = rc;
    rc = MPI_ERR_IN_STATUS;
  }
#else
  WorldErrorsReturned returned;
  int rc = some();
#endif
  finish_some(rc, outcount, done);
}

// After a Waitsome or Testsome: the errors, the completed requests.
void MpiTransport::finish_some(int rc, int outcount, std::vector<Request>& done) {
  if (outcount == MPI_UNDEFINED) outcount = 0;  // nothing active (cannot happen: checked above)
  if (rc == MPI_ERR_IN_STATUS) {  // the errors of the requests that failed
    rc = MPI_SUCCESS;
    for (int k = 0; k < outcount && rc == MPI_SUCCESS; ++k)
      if (statuses_[size_t(k)].MPI_ERROR != MPI_SUCCESS) rc = defer_truncation(statuses_[size_t(k)].MPI_ERROR);
  }
  check_mpi(rc, "MPI_Waitsome");
  for (int k = 0; k < outcount; ++k) {
    Request id = owner_[size_t(indices_[size_t(k)])];
    if (--chunks_left_[id] == 0) {
      done.push_back(id);
      if (log_) log_->completed(id);
    }
  }
  // Drop the finished requests (Waitsome set them to MPI_REQUEST_NULL).
  size_t keep = 0;
  for (size_t i = 0; i < active_.size(); ++i)
    if (active_[i] != MPI_REQUEST_NULL) {
      active_[keep] = active_[i];
      owner_[keep] = owner_[i];
      ++keep;
    }
  active_.resize(keep);
  owner_.resize(keep);
}

}  // namespace hetcoll
