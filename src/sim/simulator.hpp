// The discrete-event simulator: the predictor. It walks a schedule on a
// machine model and returns when every op starts and ends.
//
// Resources are explicit: per rank one send port, one receive port and one
// CPU (copies, reductions). An op is posted when its dependencies complete.
// The send port starts a rank's sends in program order, each once it is
// posted and a port is free (the model's send_ports(), usually one) — the
// rule the executor follows, so the order priced is the order run. The other
// resources serve their posted ops first come, first served (ties in
// program order). A send occupies the sender's port for `send`; its message
// is at the receiver `arrive` after the send started; the receive then
// occupies the receiver's port for `recv` once the receive is posted and the
// port is free (MachineModel) — or the receiver's CPU, when the model says
// receives use it (shared memory).
#pragma once
#include <string>
#include <vector>

#include "model/machine_model.hpp"
#include "schedule/schedule.hpp"
#include "util/work_meter.hpp"

namespace hetcoll {

struct SimOptions {
  bool timeline = true;        // keep start/end of every op
  bool critical_path = false;  // split the makespan into latency/bandwidth/compute
  // Group rank → rank of the model (sub-communicators, subnets); empty means
  // the identity.
  std::vector<int> rank_map;
  // Steps of work the simulation may take (0: no limit): events, and the
  // flows and links each sharing of a network's links goes over. Past it
  // simulate() throws TooLarge. A count, not a clock: the same on every
  // machine, so a decision that limits its simulations stays a function of
  // the call.
  uint64_t work_limit = 0;
};


// The makespan split along the critical path: the size-independent part of
// every message on it (latency: α on a Hockney model), the size-dependent
// part (bandwidth: bytes·β) and local work (compute: reductions, copies).
struct CostSplit {
  double latency = 0, bandwidth = 0, compute = 0;
  uint64_t messages = 0;  // messages on the critical path
};

struct SimResult {
  std::string unit;
  double makespan = 0;               // the predicted time of the collective
  std::vector<double> rank_finish;   // per rank, when its last op ends
  std::vector<double> start, end;    // per global op id (timeline)
  CostSplit path;                    // with critical_path
  uint64_t work = 0;                 // steps of work taken (SimOptions::work_limit)
};

// Throws ScheduleError if messages do not match or the schedule cannot
// finish, TooLarge past the work limit.
SimResult simulate(const Schedule& s, const MachineModel& model, const SimOptions& opt = {});

}  // namespace hetcoll
