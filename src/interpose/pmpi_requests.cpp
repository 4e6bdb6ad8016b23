// The MPI functions that complete, start or free requests, and the
// blocking point-to-point calls, for requests hetcoll holds (requests.hpp):
//   - every wait and test (…all, …any, …some) takes arrays that mix
//     hetcoll's requests with the application's own, and advances hetcoll's
//     collectives in flight while it waits;
//   - MPI_Start / MPI_Startall start a persistent collective hetcoll planned;
//   - MPI_Request_free, MPI_Request_get_status, MPI_Cancel know them;
//   - a blocking send, receive or probe while hetcoll collectives are in
//     flight becomes its non-blocking form and a wait that advances them
//     (a rank blocked in the native library would not, and another rank
//     may be waiting on them to send what this one receives).
// With no hetcoll request alive, each is the native call after one atomic
// load.
#include <mpi.h>
#include <sched.h>

#include <vector>

#include "interpose/learning.hpp"
#include "interpose/progress.hpp"
#include "interpose/requests.hpp"

using namespace hetcoll::mpi;

namespace {
// A blocking call as its non-blocking form and a wait (collectives in flight).
template <class Post>
int posted_and_waited(Post&& post, MPI_Status* status) {
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = post(&r);
  if (rc != MPI_SUCCESS) return rc;
  return wait_requests(1, &r, status);
}

// Polls `probe` (MPI_Iprobe, MPI_Improbe), advancing the collectives in flight.
template <class Probe>
int probe_loop(Probe&& probe) {
  for (;;) {
    int flag = 0;
    const int rc = probe(&flag);
    if (rc != MPI_SUCCESS || flag) return rc;
    poll_collectives();
    sched_yield();
  }
}
}  // namespace

extern "C" {

// The progress thread needs MPI_THREAD_MULTIPLE (progress.hpp); it stops
// before the library does.
int MPI_Init(int* argc, char*** argv) {
  const int level = thread_level_to_request(MPI_THREAD_SINGLE);
  if (level == MPI_THREAD_SINGLE) return PMPI_Init(argc, argv);
  int provided = 0;
  return PMPI_Init_thread(argc, argv, level, &provided);
}
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return PMPI_Init_thread(argc, argv, thread_level_to_request(required), provided);
}
int MPI_Finalize() {
  progress_stop();
  save_learned();
  return PMPI_Finalize();
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) { return wait_requests(1, request, status); }
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) { return test_requests(1, request, flag, status); }
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  return wait_requests(count, requests, statuses);
}
int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  return test_requests(count, requests, flag, statuses);
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  return wait_any(count, requests, index, status);
}
int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return test_any(count, requests, index, flag, status);
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return wait_some(incount, requests, outcount, indices, statuses);
}
int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  return test_some(incount, requests, outcount, indices, statuses);
}
int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return request_get_status(request, flag, status);
}
int MPI_Request_free(MPI_Request* request) { return request_free(request); }
int MPI_Cancel(MPI_Request* request) { return cancel(request); }
int MPI_Start(MPI_Request* request) { return start(request); }
int MPI_Startall(int count, MPI_Request requests[]) { return start_all(count, requests); }

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!collectives_in_flight()) return PMPI_Send(buf, count, type, dest, tag, comm);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Isend(buf, count, type, dest, tag, comm, r); },
                           MPI_STATUS_IGNORE);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!collectives_in_flight()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Issend(buf, count, type, dest, tag, comm, r); },
                           MPI_STATUS_IGNORE);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!collectives_in_flight()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Irsend(buf, count, type, dest, tag, comm, r); },
                           MPI_STATUS_IGNORE);
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!collectives_in_flight()) return PMPI_Bsend(buf, count, type, dest, tag, comm);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Ibsend(buf, count, type, dest, tag, comm, r); },
                           MPI_STATUS_IGNORE);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!collectives_in_flight()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Irecv(buf, count, type, source, tag, comm, r); },
                           status);
}
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!collectives_in_flight())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&r[0]);
    PMPI_Request_free(&r[0]);
    return rc;
  }
  MPI_Status st[2];
  rc = wait_requests(2, r, st);
  if (status != MPI_STATUS_IGNORE) *status = st[0];
  return rc == MPI_ERR_IN_STATUS ? (st[0].MPI_ERROR != MPI_SUCCESS ? st[0].MPI_ERROR : st[1].MPI_ERROR) : rc;
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status) {
  if (!collectives_in_flight())
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  // The outgoing data packed aside, so that the receive may land in buf.
  int bytes = 0;
  int rc = PMPI_Pack_size(count, type, comm, &bytes);
  if (rc != MPI_SUCCESS) return rc;
  std::vector<char> packed(size_t(bytes) + 1);
  int position = 0;
  rc = PMPI_Pack(buf, count, type, packed.data(), bytes, &position, comm);
  if (rc != MPI_SUCCESS) return rc;
  return MPI_Sendrecv(packed.data(), position, MPI_PACKED, dest, sendtag, buf, count, type, source, recvtag, comm,
                      status);
}
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
#ifdef HETCOLL_SMPI  // a polling loop advances no simulated time there: SimGrid's blocking probe
  return PMPI_Probe(source, tag, comm, status);
#endif
  if (!collectives_in_flight()) return PMPI_Probe(source, tag, comm, status);
  return probe_loop([&](int* flag) { return PMPI_Iprobe(source, tag, comm, flag, status); });
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  poll_collectives();
  return PMPI_Iprobe(source, tag, comm, flag, status);
}
#ifndef HETCOLL_SMPI  // SimGrid 3.32 has no matched probes
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!collectives_in_flight()) return PMPI_Mprobe(source, tag, comm, message, status);
  return probe_loop([&](int* flag) { return PMPI_Improbe(source, tag, comm, flag, message, status); });
}
int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  poll_collectives();
  return PMPI_Improbe(source, tag, comm, flag, message, status);
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!collectives_in_flight()) return PMPI_Mrecv(buf, count, type, message, status);
  return posted_and_waited([&](MPI_Request* r) { return PMPI_Imrecv(buf, count, type, message, r); }, status);
}
#endif

}  // extern "C"
