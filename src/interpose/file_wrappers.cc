// The MPI_File_* functions that move no data: the STAGIO_MPI_FILE_CONTROL rows of
// mpi_file_symbols.h, written by hand because their prototypes share nothing.
//
// Owner Engine: while stagio is active the engine function of the same name takes the call, and
// it goes to PMPI itself for files that are not stagio's.
//
// Owner Mpi: always PMPI. That is right because the application's MPI_File handle IS the PMPI
// handle (the engine opens the file through PMPI and keeps its state beside the handle, not in
// place of it) and the engine mirrors into that handle everything these functions read: the
// view (set_view), atomicity (set_atomicity) and error handler. Each function says why its PMPI
// answer is the application's answer.
#include <mpi.h>

#include "interpose/mpi_file_symbols.h"
#include "mpiio/engine.h"

namespace engine = stagio::engine;

// ---- Owner Engine ---------------------------------------------------------------------------

extern "C" STAGIO_EXPORT int MPI_File_open(MPI_Comm comm, const char* filename, int amode,
                                           MPI_Info info, MPI_File* fh) {
  if (!engine::Active()) return PMPI_File_open(comm, filename, amode, info, fh);
  return engine::Open(comm, filename, amode, info, fh);
}

extern "C" STAGIO_EXPORT int MPI_File_close(MPI_File* fh) {
  if (!engine::Active()) return PMPI_File_close(fh);
  return engine::Close(fh);
}

extern "C" STAGIO_EXPORT int MPI_File_sync(MPI_File fh) {
  if (!engine::Active()) return PMPI_File_sync(fh);
  return engine::Sync(fh);
}

extern "C" STAGIO_EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  if (!engine::Active()) return PMPI_File_set_size(fh, size);
  return engine::SetSize(fh, size);
}

extern "C" STAGIO_EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  if (!engine::Active()) return PMPI_File_preallocate(fh, size);
  return engine::Preallocate(fh, size);
}

extern "C" STAGIO_EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  if (!engine::Active()) return PMPI_File_get_size(fh, size);
  return engine::GetSize(fh, size);
}

extern "C" STAGIO_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                               MPI_Datatype filetype, const char* datarep,
                                               MPI_Info info) {
  if (!engine::Active()) return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  return engine::SetView(fh, disp, etype, filetype, datarep, info);
}

extern "C" STAGIO_EXPORT int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  if (!engine::Active()) return PMPI_File_set_info(fh, info);
  return engine::SetInfo(fh, info);
}

extern "C" STAGIO_EXPORT int MPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  if (!engine::Active()) return PMPI_File_get_info(fh, info_used);
  return engine::GetInfo(fh, info_used);
}

extern "C" STAGIO_EXPORT int MPI_File_set_atomicity(MPI_File fh, int flag) {
  if (!engine::Active()) return PMPI_File_set_atomicity(fh, flag);
  return engine::SetAtomicity(fh, flag);
}

extern "C" STAGIO_EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  if (!engine::Active()) return PMPI_File_seek(fh, offset, whence);
  return engine::Seek(fh, offset, whence);
}

// The shared file pointer is MPI's (the engine sends shared and ordered accesses to PMPI), but
// seeking it to the end needs every rank's cached writes on storage first.
extern "C" STAGIO_EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  if (!engine::Active()) return PMPI_File_seek_shared(fh, offset, whence);
  return engine::SeekShared(fh, offset, whence);
}

extern "C" STAGIO_EXPORT int MPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  if (!engine::Active()) return PMPI_File_get_position(fh, offset);
  return engine::GetPosition(fh, offset);
}

extern "C" STAGIO_EXPORT int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset,
                                                      MPI_Offset* disp) {
  if (!engine::Active()) return PMPI_File_get_byte_offset(fh, offset, disp);
  return engine::GetByteOffset(fh, offset, disp);
}

// ---- Owner Mpi ------------------------------------------------------------------------------

// Deleting an open file is erroneous in MPI, and close writes back everything stagio held of the
// file before it returns (ARCHITECTURE.md, Semantics), so the backing file is all there is.
// When the I/O-node tier keeps blocks of closed files, delete will need an engine hook.
extern "C" STAGIO_EXPORT int MPI_File_delete(const char* filename, MPI_Info info) {
  return PMPI_File_delete(filename, info);
}

// set_view is mirrored into the PMPI handle, so its view is the application's.
extern "C" STAGIO_EXPORT int MPI_File_get_view(MPI_File fh, MPI_Offset* disp,
                                               MPI_Datatype* etype, MPI_Datatype* filetype,
                                               char* datarep) {
  return PMPI_File_get_view(fh, disp, etype, filetype, datarep);
}

// set_atomicity is mirrored into the PMPI handle.
extern "C" STAGIO_EXPORT int MPI_File_get_atomicity(MPI_File fh, int* flag) {
  return PMPI_File_get_atomicity(fh, flag);
}

extern "C" STAGIO_EXPORT int MPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  return PMPI_File_get_position_shared(fh, offset);
}

// The extent of a datatype in the file depends only on the datatype and the view's data
// representation, which the PMPI handle has (set_view is mirrored).
extern "C" STAGIO_EXPORT int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype,
                                                      MPI_Aint* extent) {
  return PMPI_File_get_type_extent(fh, datatype, extent);
}

#if MPI_VERSION >= 4
extern "C" STAGIO_EXPORT int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype,
                                                        MPI_Count* extent) {
  return PMPI_File_get_type_extent_c(fh, datatype, extent);
}
#endif

// The PMPI handle is opened with the application's amode; stagio's storage driver opens its own
// descriptor beside it instead of changing the handle's mode.
extern "C" STAGIO_EXPORT int MPI_File_get_amode(MPI_File fh, int* amode) {
  return PMPI_File_get_amode(fh, amode);
}

// The PMPI handle is opened on the application's communicator, so it has the same group.
extern "C" STAGIO_EXPORT int MPI_File_get_group(MPI_File fh, MPI_Group* group) {
  return PMPI_File_get_group(fh, group);
}

// Error handlers live on the PMPI handle, and the engine raises its errors through the same
// handle (engine.h), so the application's handler is the one that runs. On MPI_FILE_NULL these
// set and get the default for files opened later, which the engine's PMPI opens inherit.
extern "C" STAGIO_EXPORT int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  return PMPI_File_get_errhandler(file, errhandler);
}

extern "C" STAGIO_EXPORT int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  return PMPI_File_set_errhandler(file, errhandler);
}

// Makes a handler object; it touches no file.
extern "C" STAGIO_EXPORT int MPI_File_create_errhandler(
    MPI_File_errhandler_function* file_errhandler_fn, MPI_Errhandler* errhandler) {
  return PMPI_File_create_errhandler(file_errhandler_fn, errhandler);
}

extern "C" STAGIO_EXPORT int MPI_File_call_errhandler(MPI_File fh, int errorcode) {
  return PMPI_File_call_errhandler(fh, errorcode);
}
