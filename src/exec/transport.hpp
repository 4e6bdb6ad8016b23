// The executor's view of a network: non-blocking point-to-point messages
// between the ranks of one group, matched by (peer, tag), and a way to wait
// for some of them to finish. The MPI transport (mpi_transport.hpp) is one
// implementation; tests use an in-process one.
#pragma once
#include <cstddef>
#include <vector>

namespace hetcoll {

class Transport {
 public:
  using Request = size_t;  // consecutive numbers in posting order
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Tags 0 .. tag_limit()-1 are free for the executor.
  virtual int tag_limit() const = 0;
  virtual Request isend(const void* buf, size_t bytes, int peer, int tag) = 0;
  virtual Request irecv(void* buf, size_t bytes, int peer, int tag) = 0;
  // Blocks until at least one posted request has completed; appends the
  // completed ones to `done`. Each request completes exactly once.
  virtual void wait_some(std::vector<Request>& done) = 0;
  // The same without blocking: appends what has completed, maybe nothing.
  // The executor asks before it blocks while a send waits for the port
  // (an eager send is usually done by then). The default asks nothing.
  virtual void test_some(std::vector<Request>&) {}
  // A whole send or receive, for when the executor has nothing else to do
  // meanwhile (no request in flight): the same as posting it and waiting,
  // which is the default; a transport may do it more cheaply.
  virtual void send(const void* buf, size_t bytes, int peer, int tag);
  virtual void recv(void* buf, size_t bytes, int peer, int tag);
};

}  // namespace hetcoll
