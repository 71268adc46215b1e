// FileView: maps a view's data stream to absolute file extents by tiling the flattened filetype.
#include "mpiio/file_view.h"

#include <utility>

namespace stagio {

namespace {

// MPI_BYTE flattened by hand, so a default view can be made before MPI_Init (a default-
// constructed member of a static object, say) without asking MPI anything.
std::shared_ptr<const FlatType> ByteType() {
  static const std::shared_ptr<const FlatType> byte_type = [] {
    FlatType flat;
    flat.extents = {{0, 1}};
    flat.size = 1;
    flat.lb = 0;
    flat.extent = 1;
    flat.BuildPrefix();
    return std::make_shared<const FlatType>(std::move(flat));
  }();
  return byte_type;
}

}  // namespace

FileView::FileView() : displacement_(0), etype_size_(1), filetype_(ByteType()) {}

FileView::FileView(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype)
    : displacement_(displacement), filetype_(Flatten(filetype)) {
  MPI_Count etype_size = 0;
  PMPI_Type_size_x(etype, &etype_size);
  etype_size_ = etype_size > 0 ? static_cast<uint64_t>(etype_size) : 1;
}

bool FileView::is_contiguous() const { return filetype_->contiguous() && filetype_->lb == 0; }

bool FileView::CanMap(uint64_t stream_end) const {
  const FlatType& flat = *filetype_;
  if (stream_end == 0 || flat.size == 0) return true;
  // The copy of the filetype that holds the last byte, and where that copy's data ends.
  const int64_t copy = static_cast<int64_t>((stream_end - 1) / flat.size);
  const Extent& last = flat.extents.back();
  int64_t start = 0;
  int64_t end = 0;
  return !__builtin_mul_overflow(copy, flat.extent, &start) &&
         !__builtin_add_overflow(start, static_cast<int64_t>(displacement_), &start) &&
         !__builtin_add_overflow(start, last.offset + static_cast<int64_t>(last.length), &end);
}

void FileView::MapStreamRange(uint64_t stream_begin, uint64_t length,
                              std::vector<Extent>* out) const {
  const int64_t displacement = static_cast<int64_t>(displacement_);
  // ForEachStreamPiece already merges pieces that touch, and for a contiguous filetype yields a
  // single piece for any length.
  ForEachStreamPiece(*filetype_, stream_begin, length, [&](int64_t offset, uint64_t piece) {
    out->push_back({displacement + offset, piece});
  });
}

MPI_Offset FileView::ByteOffsetOfStream(uint64_t stream_offset) const {
  const FlatType& flat = *filetype_;
  if (flat.size == 0) return displacement_;  // an empty filetype has no visible byte
  // An offset at the end of a copy lands on within == 0 of the next copy: its first extent,
  // which is where the next visible byte is.
  const uint64_t copy = stream_offset / flat.size;
  const StreamPosition position = flat.Locate(stream_offset % flat.size);
  const Extent& extent = flat.extents[position.extent_index];
  return displacement_ + static_cast<MPI_Offset>(copy) * flat.extent + extent.offset +
         static_cast<MPI_Offset>(position.offset_in_extent);
}

}  // namespace stagio
