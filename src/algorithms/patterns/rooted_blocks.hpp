// Gather and scatter as one shape each, the direction a parameter: a
// gather's (gatherv's) blocks travel to the root, every rank's `in` into
// the root's `out` at the block's offset; a scatter's (scatterv's) travel
// the same edges the other way, from the root's `in` into every rank's
// `out`. The direction is the call's: towards_root(c).
//
// Two shapes: the star (sequential tree: star_gather, star_scatter) and
// InterCom's MST over contiguous ranges of blocks (binomial_gather,
// binomial_scatter). Each gives its generator and its closed form, the
// star also its rounds.
#pragma once
#include <optional>
#include <vector>

#include "algorithms/patterns/common.hpp"

namespace hetcoll {

// True for gather and gatherv (blocks to the root), false for scatter and
// scatterv (blocks from it).
bool towards_root(const Collective& c);

// The star: ranks in order after the root, blocks straight between
// `out`/`in` and the ranks; the root's own block copied.
Schedule star_blocks(const GenContext& ctx, const char* name);
// Its cost for equal blocks of b bytes: (p-1)(α + bβ).
std::optional<Terms> star_blocks_terms(const GenContext& ctx, const HockneyParams&);
// One round: every rank's block to the root (or from it), the root taking
// (sending) them one after another; the root's own block copied.
std::vector<Round> star_blocks_rounds(const GenContext& ctx);
// The registry's facts of a star algorithm beside its generator: its
// closed form, its rounds, and that a rank needs only its own counts.
void star_blocks_entry(Algorithm& a);

// InterCom's MST (§4.1): the holder of blocks [lo, hi) keeps the half with
// itself and exchanges the other half with a leader there, one contiguous
// message; ranks that pass blocks on stage them in scratch. Where the
// displacements are not in rank order, the root's blocks are packed into
// scratch first (scatter) or unpacked from it at the end (gather).
Schedule mst_blocks(const GenContext& ctx, const char* name);
// Its cost for equal blocks in rank order: ⌈log2 p⌉α + (p-1)bβ.
std::optional<Terms> mst_blocks_terms(const GenContext& ctx, const HockneyParams&);

}  // namespace hetcoll
