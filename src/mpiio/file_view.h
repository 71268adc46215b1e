// FileView: where the bytes of a view's data stream live in the file.
//
// An MPI file view is (displacement, etype, filetype): the filetype is tiled from the
// displacement, copy i at disp + i * extent(filetype), and only the bytes in its typemap are
// visible. The view's data stream is those bytes in order. Offsets and file pointers count
// etypes of that stream. MPI requires the filetype's displacements to be non-negative and
// monotonically non-decreasing, so stream order is file order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "mpiio/flatten.h"

namespace stagio {

class FileView {
 public:
  // The default view: displacement 0, etype and filetype MPI_BYTE.
  FileView();
  FileView(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype);

  uint64_t etype_size() const { return etype_size_; }
  MPI_Offset displacement() const { return displacement_; }
  bool is_contiguous() const;  // the stream is the file from the displacement on

  // Appends to *out the file extents (absolute file offsets, in file order, adjacent ones
  // merged) that hold stream bytes [stream_begin, stream_begin + length).
  void MapStreamRange(uint64_t stream_begin, uint64_t length, std::vector<Extent>* out) const;

  // True if every stream byte before `stream_end` lies at a file offset MPI_Offset can hold
  // (the filetype's holes spread the stream out, so this is more than stream_end fitting).
  bool CanMap(uint64_t stream_end) const;

  // The absolute file offset of stream byte `stream_offset` (MPI_File_get_byte_offset);
  // if that byte is the end of a filetype copy, the start of the next visible byte.
  MPI_Offset ByteOffsetOfStream(uint64_t stream_offset) const;

 private:
  MPI_Offset displacement_ = 0;
  uint64_t etype_size_ = 1;
  // Flattened filetype; its `prefix` (stream bytes before each extent) locates stream offsets.
  std::shared_ptr<const FlatType> filetype_;
};

}  // namespace stagio
