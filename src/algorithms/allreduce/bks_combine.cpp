// bks_combine — global combine (allreduce) in the postal model, after
// Bar-Noy, Kipnis and Schieber, as described by Bruck et al. §3.
//
// Integer λ = L, n = N_{L,ε}(t) with t = T_L(n) and a deficiency sequence ε
// (§3.1). Each node i keeps T_i (the combination of M(r) consecutive inputs
// starting at d_i) and S_i (M(r)-1 inputs starting at d_{i+1}), where
// M(r) = M(r-1) + M(r-L) - ε_{r-L}. In round r node j sends T_j (ε = 0) or
// S_j (ε = 1), as they were after round r-1, to node j - M(r+L-2) + ε; in
// round r ≥ L node i receives that value from i + M(r-1) - ε_{r-L} and adds
// it to T_i (and to S_i while S is still needed). After t rounds T_i is the
// combination of all n inputs. A send of an empty S is skipped.
// Steps: t = T_L(n) rounds, one send and one receive per node per round, each
//        of the full vector m; reductions of m per round.
// Real λ (§3.2-3.3): delay-receive runs the ⌈λ⌉ schedule (time T_⌈λ⌉(n) when
// every receive idles to the round boundary), delay-send the ⌊λ⌋ schedule
// (time (λ/⌊λ⌋)·T_⌊λ⌋(n) when every send idles); bks_combine picks by the
// break-even rule (Table 2). Every rank combines in its own order, so
// floating-point results differ in the last bits between ranks.
// Cost of bks_combine: T_ceil(lambda)(p) (delay-receive) or (lambda/floor(lambda)) T_floor(lambda)(p) (delay-send)
// Cost of bks_delay_receive: T_ceil(lambda)(p)
// Cost of bks_delay_send: (lambda/floor(lambda)) T_floor(lambda)(p)
#include <cmath>

#include "algorithms/all.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/registry.hpp"
#include "schedule/builder.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {
// The model's λ as the rounds are built with it: at most kMaxLambda (a slow
// receiver's λ can be far beyond; the rounds stay valid, the prediction is
// the simulator's).
double model_lambda(const MachineModel& m, uint64_t bytes) { return std::min(m.postal_lambda(bytes), kMaxLambda); }
}  // namespace

namespace {

enum class Variant { Auto, DelayReceive, DelaySend };

int rounds_lambda(Variant v, double lambda) {
  if (v == Variant::Auto) v = postal::prefer_delay_send(lambda) ? Variant::DelaySend : Variant::DelayReceive;
  double L = v == Variant::DelaySend ? std::floor(lambda + postal::kEps) : std::ceil(lambda - postal::kEps);
  return std::max(1, int(L));
}

Schedule bks_schedule(const GenContext& ctx, const std::string& name, int L) {
  const Collective& c = ctx.coll;
  const int n = c.nranks;
  const uint64_t m = c.count * c.elem_size;
  Builder b = make_builder(ctx, name);
  const Slice in{Buf::in, 0, m}, T{Buf::out, 0, m};
  if (n == 1) {
    b.copy(0, T, in);
    return b.finish();
  }
  postal::Deficiency d = postal::deficiency(L, uint64_t(n));
  const int t = d.t;
  auto M = [&](int r) { return d.M[size_t(r)]; };
  auto eps = [&](int j) { return int(d.eps[size_t(j)]); };
  // S after round r is needed if some later send carries S (ε_j = 1, j ≥ r).
  std::vector<bool> need_S(static_cast<size_t>(t) + 2, false);
  for (int r = t - L; r >= 0; --r) need_S[size_t(r)] = need_S[size_t(r) + 1] || eps(r);

  for (int i = 0; i < n; ++i) {
    if (!b.wants(i)) continue;
    // L receive slots: a message is in flight for L-1 rounds, and reusing a
    // slot sooner would make a send wait (rendezvous) for a receive that
    // waits for that send: a cycle the validator reports as a deadlock.
    const uint64_t S_off = b.alloc_tmp(i, m), slot_off = b.alloc_tmp(i, uint64_t(L) * m);
    const Slice S{Buf::tmp, S_off, m};
    bool S_empty = true;
    b.copy(i, T, in);
    for (int r = 1; r <= t; ++r) {
      if (r <= t - L + 1) {
        // Send the state after round r-1, received in round r+L-1.
        int e = eps(r - 1);
        bool empty = e && M(r - 1) == 1;
        if (!empty) {
          int to = int((uint64_t(i) + uint64_t(n) - M(r + L - 2) % uint64_t(n) + uint64_t(e)) % uint64_t(n));
          b.send(i, to, e ? S : T);
        }
      }
      if (r >= L) {
        int e = eps(r - L);
        if (e && M(r - L) == 1) continue;  // the sender's S was empty
        int from = int((uint64_t(i) + M(r - 1) - uint64_t(e)) % uint64_t(n));
        Slice slot{Buf::tmp, slot_off + uint64_t(r % L) * m, m};
        b.recv(i, from, slot);
        b.reduce(i, T, slot);
        if (need_S[size_t(r)]) {
          if (S_empty) b.copy(i, S, slot); else b.reduce(i, S, slot);
          S_empty = false;
        }
      }
    }
  }
  return b.finish();
}

// The schedule is named with its L, and that name is a spec that rebuilds it.
Schedule generate_variant(const GenContext& ctx, Variant v, const char* name) {
  int L;
  if (ctx.params.count("L")) {
    L = param_int(ctx, "L", 1);
  } else {
    double lambda = ctx.params.count("lambda") ? param_real(ctx, "lambda", 1.0)
                                               : model_lambda(ctx.model, ctx.coll.count * ctx.coll.elem_size);
    L = rounds_lambda(v, lambda);
  }
  return bks_schedule(ctx, cat(name, "[L=", L, "]"), L);
}

Schedule generate_auto(const GenContext& ctx) { return generate_variant(ctx, Variant::Auto, "bks_combine"); }
Schedule generate_receive(const GenContext& ctx) {
  return generate_variant(ctx, Variant::DelayReceive, "bks_delay_receive");
}
Schedule generate_send(const GenContext& ctx) { return generate_variant(ctx, Variant::DelaySend, "bks_delay_send"); }

// For an integer λ both variants are the automatic one.
bool fractional_lambda(const Collective& c, const MachineModel& m) {
  double lam = model_lambda(m, c.count * c.elem_size);
  return std::fabs(lam - std::round(lam)) > postal::kEps;
}

Algorithm bks_base(Generator g) {
  Algorithm a{{CollOp::allreduce}, g};
  a.params = {{"lambda", ParamKind::real, 1, postal::kMaxLambda, false, "the postal latency to schedule for (default: the model's)"},
              {"L", ParamKind::integer, 1, postal::kMaxLambda, false, "the integer round length, instead of lambda"}};
  a.rank_consistent = false;
  return a;
}

}  // namespace

Algorithm bks_combine_algorithm() { return bks_base(generate_auto); }
Algorithm bks_delay_receive_algorithm() {
  Algorithm a = bks_base(generate_receive);
  a.distinct = fractional_lambda;
  return a;
}
Algorithm bks_delay_send_algorithm() {
  Algorithm a = bks_base(generate_send);
  a.distinct = fractional_lambda;
  return a;
}

}  // namespace hetcoll
