// Measured decisions into a profile, one way for both who measure them:
// hetcoll tune (timed before the job) and a job that learned
// (HETCOLL_LEARN_SAVE: what HETCOLL_LEARN settled on, timed in the job).
// Decisions accumulate: for the layout measured, the (collective, size)
// pairs measured again replace the old ones, the others stay, and the size
// classes are shared out again over all of them.
#pragma once
#include <string>
#include <vector>

#include "model/profile.hpp"

namespace hetcoll {

// Size classes, per collective: each measured size decides the classes
// nearer to it than to its neighbours; below the smallest down to 0 B; none
// beyond the largest (the model decides there); a decision learned in a job
// (kTimingLearned) decides its own class alone. Orders them by collective
// (in order of first appearance), then size.
void assign_size_classes(std::vector<TunedEntry>& entries);

// `layout` merged into `p`: its entries, and the profile's earlier ones for
// the same hosts that it does not measure again. Returns how many earlier
// entries were kept. The oldest layout goes when there are kMaxTunedLayouts.
size_t merge_tuned(Profile& p, TunedLayout layout);

// `p` written to `path` through a temporary file renamed over it (a reader
// never sees half a file), after checking that the text reads back. Throws
// std::runtime_error naming the file.
void write_profile_file(const Profile& p, const std::string& path);
// Throws, as write_profile_file would, when `path` cannot be written (its
// temporary beside it cannot be made): said before anything is gathered.
void check_profile_writable(const std::string& path);

// Now, as the profile's dates are written (ISO 8601 UTC).
std::string utc_now();

}  // namespace hetcoll
