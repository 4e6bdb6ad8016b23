#include "exec/executor.hpp"

#include <cstring>
#include <queue>
#include <unordered_map>

#include "util/error.hpp"

namespace hetcoll {

namespace {
char* address(const Bindings& b, Buf buf, uint64_t off) {
  switch (buf) {
    case Buf::in: return const_cast<char*>(static_cast<const char*>(b.in)) + off;
    case Buf::out: return static_cast<char*>(b.out) + off;
    case Buf::tmp: return static_cast<char*>(b.tmp) + off;
  }
  return nullptr;
}
}  // namespace

void execute(const Schedule& s, int rank, const Bindings& b, ReduceFn reduce, Transport& t) {
  const size_t n = s.num_ops(rank);
  if (n == 0) return;
  const uint32_t elem = s.coll.elem_size;
  const int tag_limit = t.tag_limit();

  // Dependents and remaining dependency counts, local to this rank.
  std::vector<uint32_t> remaining(n), dep_begin(n + 1, 0), dependents;
  for (size_t i = 0; i < n; ++i) {
    remaining[i] = s.op(rank, i).dep_count;
    for (auto* d = s.deps_begin(rank, i); d != s.deps_end(rank, i); ++d) ++dep_begin[*d + 1];
  }
  for (size_t i = 0; i < n; ++i) dep_begin[i + 1] += dep_begin[i];
  dependents.resize(dep_begin[n]);
  {
    std::vector<uint32_t> fill(dep_begin.begin(), dep_begin.end() - 1);
    for (size_t i = 0; i < n; ++i)
      for (auto* d = s.deps_begin(rank, i); d != s.deps_end(rank, i); ++d) dependents[fill[*d]++] = uint32_t(i);
  }
  // Tags: per peer, the sequence number of each message in program order.
  std::vector<int> tag(n, 0);
  {
    std::unordered_map<int, uint32_t> sent, received;
    for (size_t i = 0; i < n; ++i) {
      const Op& o = s.op(rank, i);
      if (o.kind == OpKind::send) tag[i] = int(sent[o.peer]++ % uint32_t(tag_limit));
      if (o.kind == OpKind::recv) tag[i] = int(received[o.peer]++ % uint32_t(tag_limit));
    }
  }

  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> ready;
  for (size_t i = 0; i < n; ++i)
    if (remaining[i] == 0) ready.push(uint32_t(i));
  std::unordered_map<Transport::Request, uint32_t> in_flight;
  std::vector<Transport::Request> done;
  size_t completed = 0;
  auto complete = [&](uint32_t i) {
    ++completed;
    for (uint32_t k = dep_begin[i]; k < dep_begin[i + 1]; ++k)
      if (--remaining[dependents[k]] == 0) ready.push(dependents[k]);
  };

  while (completed < n) {
    while (!ready.empty()) {
      uint32_t i = ready.top();
      ready.pop();
      const Op& o = s.op(rank, i);
      switch (o.kind) {
        case OpKind::send:
          in_flight[t.isend(address(b, o.buf, o.off), o.len, o.peer, tag[i])] = i;
          break;
        case OpKind::recv:
          in_flight[t.irecv(address(b, o.buf, o.off), o.len, o.peer, tag[i])] = i;
          break;
        case OpKind::copy: {
          char* dst = address(b, o.buf, o.off);
          const char* src = address(b, o.src_buf, o.src_off);
          if (dst != src && o.len) std::memcpy(dst, src, o.len);  // in place: nothing to do
          complete(i);
          break;
        }
        case OpKind::reduce:
          if (o.len) {
            if (!reduce) throw ScheduleError(cat(s.algorithm, ": a reduction without a combining kernel"));
            reduce(address(b, o.buf, o.off), address(b, o.src_buf, o.src_off), o.len / elem);
          }
          complete(i);
          break;
      }
    }
    if (completed == n) break;
    if (in_flight.empty())
      throw ScheduleError(cat(s.algorithm, ": rank ", rank, " is stuck with ", n - completed, " ops left"));
    done.clear();
    t.wait_some(done);
    for (auto req : done) {
      auto it = in_flight.find(req);
      if (it == in_flight.end()) throw ScheduleError("transport completed an unknown request");
      uint32_t i = it->second;
      in_flight.erase(it);
      complete(i);
    }
  }
}

}  // namespace hetcoll
