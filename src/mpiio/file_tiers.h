// The tier chain of an open file (tiers/tier_chain.h), built from what the open decided:
// remote owners (collective cache) → block cache (this rank's, or the node's shared table) →
// storage driver (POSIX, or the iond client and its daemons).
#pragma once

#include "mpiio/open_file.h"
#include "tiers/tier.h"

namespace stagio {

class Runtime;

// Builds file.tiers; called at open, once the cache mode and the backend are known.
void BuildTiers(Runtime& runtime, OpenFile& file);

// Invalidates the file's tiers. A failure (a daemon that could not drop its copies) is kept
// for the next sync or close, which report it, as write-back failures are.
void InvalidateTiers(OpenFile& file, Callers callers, Staleness why);

}  // namespace stagio
