// The machine model: one interface that every cost model implements.
//
// A message of m bytes from rank i to rank j is described by three numbers
// (MessageCost), which the simulator uses with explicit resources:
//
//   sender's send port   busy during [s, s + send]
//   message available    at the receiver from s + arrive
//   receiver's recv port busy during [r, r + recv],  r = max(s + arrive,
//                        recv port free, receive posted)
//   data usable          at r + recv
//
// Each rank has one send port (or send_ports(); sends start in program
// order), one receive port and one CPU (copies and reductions), all usable
// at the same time (the postal / one-port assumption) — unless the model says receives use the CPU
// (receive_uses_cpu: shared memory, where the receiver copies the data), in
// which case receives, copies and reductions of a rank share one queue.
// Instances:
//
//   postal        send = t0, arrive = (λ-1)·t0, recv = t0: data usable λ·t0
//                 after the send starts, one message per t0 in each direction
//                 (Bruck et al. §1); λ and t0 may depend on the size.
//   hockney       send = recv = α + mβ, arrive = 0: a transfer occupies both
//                 ports for α + mβ (InterCom §2); reduction mγ.
//   loggp         send = max(o_s + (m-1)G, g), arrive = o_s + (m-1)G + L,
//                 recv = o_r.
//   heterogeneous send = S_c(i) + S_m(i)·m, arrive = send + X_c(i,j) + X_m(i,j)·m,
//                 recv = R_c(j) + R_m(j)·m (Banikazemi et al. eqs. 1-4);
//                 reduction γ(i)·m.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/topology.hpp"
#include "util/json.hpp"

namespace hetcoll {

struct MessageCost {
  double send = 0;    // sender's send port busy
  double arrive = 0;  // from send start until the message is at the receiver
  double recv = 0;    // receiver's receive port busy
  // The part of `send` that moves the bytes at the message's own rate (for
  // models with a topology: the simulator replaces it by the time the
  // bytes take through links shared with other messages, and holds the
  // send port until they are through).
  double wire = 0;
  double total() const { return arrive + recv; }
};

class MachineModel {
 public:
  virtual ~MachineModel() = default;

  // "postal", "hockney", "loggp", "heterogeneous".
  virtual std::string kind() const = 0;
  // Canonical spec; parse_model(spec()) rebuilds an equal model. It is also
  // the model's identity in decision caches.
  virtual std::string spec() const = 0;
  // "steps" (postal model time units) or "s".
  virtual std::string unit() const = 0;

  virtual MessageCost message(int src, int dst, uint64_t bytes) const = 0;
  virtual double reduce_time(int rank, uint64_t bytes) const = 0;
  virtual double copy_time(int rank, uint64_t bytes) const = 0;

  // The number of ranks a model with per-node data describes; 0 when the
  // model is the same for any number of ranks.
  virtual int ranks() const { return 0; }
  // The model's ranks are hosts (a probed profile): the runtime maps each
  // rank of a communicator to its host's index, and two ranks of one host
  // are the pair (h, h).
  virtual bool maps_hosts() const { return false; }
  // For such a model: the model rank (host) of each rank 0 … n-1 of a job
  // when no one says otherwise (the command line): laid out as the ranks of
  // the job that measured it, again from the start past its last rank.
  virtual std::vector<int> default_rank_map(int n) const {
    (void)n;
    return {};
  }
  // Receiving keeps the receiver's CPU busy (shared memory: the receiver
  // copies the message), so receives do not overlap copies and reductions.
  virtual bool receive_uses_cpu() const { return false; }
  // How many of a rank's sends may be in flight at once. A rank's sends
  // leave in program order; the next starts when a port is free. One port
  // is the postal / Hockney assumption and what a NIC does (concurrent
  // sends share its bandwidth); the simulator and the executor both follow
  // this number.
  virtual int send_ports() const { return 1; }
  // Messages smaller than this are eager: on a model with a topology, the
  // send is done (its port free) once the overheads are paid, while its
  // bytes still cross the network — as an MPI library's eager protocol (and
  // SimGrid's detached sends) behave. Larger ones are a rendezvous: they
  // move once their receive is posted, and the send is done when they have
  // arrived. 0: no eager protocol (a send holds its port until its bytes
  // are out).
  virtual uint64_t eager_bytes() const { return 0; }
  // Where the model's ranks sit (hosts, subnets) and the links their
  // messages share; nullptr for a model without structure.
  virtual TopologyPtr topology() const { return nullptr; }

  virtual json::Value to_json() const = 0;
  // A digest of everything the model says (not of where it was read from):
  // two models with the same digest price every schedule alike. By default
  // FNV-1a of to_json(); a profile's is that of its file's text.
  virtual uint64_t content_digest() const;

  // Bruck's λ seen by a message of this size from src to dst: the time until
  // the data is usable, in units of the sender's busy time.
  // (dst < 0: a rank other than src where the model has one.)
  double postal_lambda(uint64_t bytes, int src = 0, int dst = -1) const;
  // A rank to stand for "another rank" in size-only questions: 1, or 0 in a
  // model of one rank.
  int other_rank() const { return ranks() == 1 ? 0 : 1; }
};

using ModelPtr = std::shared_ptr<const MachineModel>;

// The model seen by a group whose rank i is the model's rank map[i] (a
// sub-communicator, the ranks of a job laid out on a profile's hosts, one
// subnet): messages, reductions and the topology are the base model's for
// the mapped ranks. An empty map returns the base itself.
ModelPtr map_model(ModelPtr base, std::vector<int> map);
// The model a group of n ranks plans and generates with: mapped by
// rank_map when given, else, for a model of hosts, laid out as the job that
// measured it (default_rank_map); else the model itself.
ModelPtr group_model(ModelPtr base, const std::vector<int>& rank_map, int n);

// Parses "postal:lambda=1.8", "hockney:alpha=20us,beta=1ns,gamma=0.5ns",
// "loggp:L=5us,o=1us,g=2us,G=0.1ns", "hetero:nodes=F,F,S,S",
// "hetero:file=machine.json", "profile:PROFILE.json". Throws InputError naming the problem.
ModelPtr parse_model(const std::string& spec);

// Builds a model from its JSON form (the to_json() of any model, or a
// heterogeneous machine description).
ModelPtr model_from_json(const json::Value& v);

// HETCOLL_PROFILE's forms: a spec (it has a ':') or the path of a JSON
// model file.
ModelPtr load_model(const std::string& spec_or_path);

// Model files larger than this are refused before they are read (a
// mistaken path, /dev/zero): no model is that large.
constexpr uint64_t kMaxModelFileBytes = uint64_t(64) << 20;
// The text of a model file (or of another input file: `kind` names it in
// errors — "decision table"), bounded by kMaxModelFileBytes. Throws
// InputError naming the file.
std::string read_model_file(const std::string& path, const char* kind = "model file");

// The forms parse_model accepts, one per line (for error messages and --help).
std::string model_spec_help();

}  // namespace hetcoll
