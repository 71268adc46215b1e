// The direct path: a data-access call handed to MPI-IO itself, so that its bytes move between
// the application and storage at the device's speed, with the file's tiers kept coherent
// around it. Which calls take it is DirectPolicy's decision (direct_policy.h).
//
// Coherence, with as little work per call as MPI's semantics allow:
//  - A read must see this rank's own writes. If this rank wrote through the cache since its
//    tiers were last flushed for the direct path (OpenFile::cached_writes), they are flushed
//    first. Other ranks' writes need not be seen before sync-barrier-sync, whose sync writes
//    them back.
//  - Before a write, the tiers forget its bytes, dirty or not, once no write-back carrying
//    them is on its way (TierChain::ForgetRange). A flush would not do: a write-back that
//    finds its block written again meanwhile (by another rank of the node, or by an owner's
//    server thread) keeps the whole block dirty, the bytes it just wrote included, and
//    writes them again later: the differential tests caught such a late copy overwriting
//    a direct write.
//  - A write leaves copies of the old bytes in the tiers (this rank's cache, the node's, the
//    owners'), and a prefetch on its way may land more. They are invalidated once, before the
//    file's next call that goes through the cache (CatchUpWithDirectWrites; sync and close
//    invalidate anyway), not after every direct write: a stream of direct writes would pay a
//    scan of the cache each.
//  - The file's known size grows to the write's end.
// If the flush or the forgetting fails, the call goes through the cache, which still holds the
// bytes: nothing is lost and the failure is reported at the next sync or close, as write-back
// failures are.
//
// A call goes direct as what it is for this rank alone: the independent blocking MPI-IO call
// at its explicit offset (a nonblocking one completes before it returns, as stagio's own do).
// So collective calls go direct only where stagio serves them rank by rank (no collective cache
// across nodes). Writes go direct only when they cover one contiguous range of the file (see
// ChooseDirectPath for why), and not while owners on other nodes may hold this rank's
// unwritten bytes (OpenFile::wrote_to_owners), which its own tiers cannot take back. Split
// collectives, and files whose storage is not the one MPI-IO writes (an I/O-node daemon, the
// fault-injecting driver), always go through the cache.
#pragma once

#include <cstdint>

#include "direct/direct_policy.h"
#include "mpiio/engine.h"
#include "mpiio/flatten.h"
#include "mpiio/open_file.h"

namespace stagio {

class Runtime;

namespace engine {

// Asks the file's DirectPolicy about a valid call moving `bytes`, if the call can go direct:
// why it takes the direct path, or DirectReason::kCached if it does not. For a write it
// takes, *written is the one file range the write covers.
DirectReason ChooseDirectPath(Runtime& runtime, OpenFile& file, const AccessCall& call,
                              uint64_t bytes, Extent* written);

// Performs a call ChooseDirectPath sent direct (`written` as it set it, for a write); returns
// its MPI error code (raised through the file's error handler by MPI-IO). Sets *through_cache
// instead, doing nothing, when the flush or forgetting that must come first failed: the
// caller then serves the call through the cache.
int DirectAccess(OpenFile& file, const AccessCall& call, uint64_t bytes, const Extent& written,
                 bool* through_cache);

// Before a call goes through the cache: invalidates the tiers if a direct write left them
// holding old bytes.
void CatchUpWithDirectWrites(OpenFile& file);

}  // namespace engine
}  // namespace stagio
