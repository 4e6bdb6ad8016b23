// An in-process network for executor tests: p endpoints, eager sends,
// receives matched by (source, tag) in send order (as MPI does).
#pragma once
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "exec/transport.hpp"

namespace hetcoll::testing {

class LocalFabric {
 public:
  explicit LocalFabric(int p) : ranks_(static_cast<size_t>(p)) {
    for (int r = 0; r < p; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
  }
  Transport& endpoint(int r) { return *endpoints_[size_t(r)]; }

 private:
  struct Message {
    int src, tag;
    std::vector<char> data;
  };
  struct PostedRecv {
    int src, tag;
    void* buf;
    size_t bytes;
    Transport::Request req;
  };
  struct RankState {
    std::deque<Message> unexpected;
    std::deque<PostedRecv> posted;
    std::vector<Transport::Request> completed;
    Transport::Request next = 0;
  };

  class Endpoint : public Transport {
   public:
    Endpoint(LocalFabric& f, int r) : f_(f), r_(r) {}
    int rank() const override { return r_; }
    int size() const override { return int(f_.ranks_.size()); }
    int tag_limit() const override { return 32768; }
    Request isend(const void* buf, size_t bytes, int peer, int tag) override {
      std::lock_guard<std::mutex> lock(f_.mu_);
      RankState& me = f_.ranks_[size_t(r_)];
      RankState& dst = f_.ranks_[size_t(peer)];
      Request req = me.next++;
      for (auto it = dst.posted.begin(); it != dst.posted.end(); ++it)
        if (it->src == r_ && it->tag == tag) {
          if (it->bytes != bytes) throw std::runtime_error("message size mismatch");
          if (bytes) std::memcpy(it->buf, buf, bytes);
          dst.completed.push_back(it->req);
          dst.posted.erase(it);
          me.completed.push_back(req);
          f_.cv_.notify_all();
          return req;
        }
      const char* p = static_cast<const char*>(buf);
      dst.unexpected.push_back({r_, tag, std::vector<char>(p, p + bytes)});
      me.completed.push_back(req);  // eager
      f_.cv_.notify_all();
      return req;
    }
    Request irecv(void* buf, size_t bytes, int peer, int tag) override {
      std::lock_guard<std::mutex> lock(f_.mu_);
      RankState& me = f_.ranks_[size_t(r_)];
      Request req = me.next++;
      for (auto it = me.unexpected.begin(); it != me.unexpected.end(); ++it)
        if (it->src == peer && it->tag == tag) {
          if (it->data.size() != bytes) throw std::runtime_error("message size mismatch");
          if (bytes) std::memcpy(buf, it->data.data(), bytes);
          me.unexpected.erase(it);
          me.completed.push_back(req);
          return req;
        }
      me.posted.push_back({peer, tag, buf, bytes, req});
      return req;
    }
    void wait_some(std::vector<Request>& done) override {
      std::unique_lock<std::mutex> lock(f_.mu_);
      RankState& me = f_.ranks_[size_t(r_)];
      f_.cv_.wait(lock, [&] { return !me.completed.empty(); });
      done.insert(done.end(), me.completed.begin(), me.completed.end());
      me.completed.clear();
    }

    void test_some(std::vector<Request>& done) override {
      std::lock_guard<std::mutex> lock(f_.mu_);
      RankState& me = f_.ranks_[size_t(r_)];
      done.insert(done.end(), me.completed.begin(), me.completed.end());
      me.completed.clear();
    }

   private:
    LocalFabric& f_;
    int r_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<RankState> ranks_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace hetcoll::testing
