// The engine: what every intercepted MPI_File_* call turns into.
//
// The interpose layer (src/interpose/) decides nothing: for each call it fills an AccessCall or
// calls one of the functions below, passing along the PMPI call it stands for. The engine
// decides whether the file is stagio's (opened while stagio was active, not in sequential mode)
// and whether this call takes stagio's path or goes to PMPI after a flush and invalidate
// (shared pointer and ordered calls, atomic mode, non-native data representations).
//
// Every function returns an MPI error code. Errors are raised through the file's error handler
// (MPI_File_call_errhandler) before they are returned, exactly as MPI-IO itself does.
// All functions are called on the application thread.
#pragma once

#include <mpi.h>

#include "common/function_ref.h"

namespace stagio::engine {

enum class Direction { kRead, kWrite };
enum class Positioning { kExplicit, kIndividual, kShared, kOrdered };
enum class Completion { kBlocking, kNonblocking, kSplitBegin };

struct AccessCall {
  const char* kind;          // function name without "MPI_File_": "read_at_all", "iwrite_c", ...
  Direction direction;
  Positioning positioning;
  Completion completion;
  bool collective;
  MPI_File file;
  MPI_Offset offset;         // kExplicit only, in etypes of the current view
  void* buffer;              // writes never write through it (const_cast'ed by the wrapper)
  MPI_Count count;
  MPI_Datatype datatype;
  MPI_Status* status;        // kBlocking; may be MPI_STATUS_IGNORE
  MPI_Request* request;      // kNonblocking
};

using PmpiCall = FunctionRef<int()>;

// True once stagio is initialized and not disabled (STAGIO_DISABLE=1). While false, wrappers
// call PMPI directly.
bool Active();

// Called by the MPI_Init/MPI_Init_thread wrappers after PMPI succeeded, and by MPI_Finalize
// before PMPI_Finalize (flushes every open file, writes stats, stops the I/O thread).
// `required` is the level the application asked for, `provided` what MPI gave stagio's
// request; AfterInit never lowers it.
void AfterInit(int required, int* provided);
// The thread level the init wrappers ask MPI for: `required`, raised to MPI_THREAD_MULTIPLE when
// the collective cache is enabled, because its server thread calls MPI. Reads only the
// environment and hints file (MPI is not running yet); their warnings come later, once.
int ThreadLevelToRequest(int required);
void BeforeFinalize();

// Data access: all read/write/iread/iwrite/_begin variants, plain and _c.
int Access(const AccessCall& call, PmpiCall pmpi);
// The _end half of a split collective. `pmpi` calls the matching PMPI_..._end.
int SplitEnd(const char* kind, MPI_File file, void* buffer, MPI_Status* status, PmpiCall pmpi);

int Open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* file);
int Close(MPI_File* file);
int Sync(MPI_File file);
int SetSize(MPI_File file, MPI_Offset size);
int Preallocate(MPI_File file, MPI_Offset size);
int GetSize(MPI_File file, MPI_Offset* size);
int SetView(MPI_File file, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
            const char* datarep, MPI_Info info);
int SetInfo(MPI_File file, MPI_Info info);
int GetInfo(MPI_File file, MPI_Info* info_used);
int SetAtomicity(MPI_File file, int flag);
int Seek(MPI_File file, MPI_Offset offset, int whence);
int SeekShared(MPI_File file, MPI_Offset offset, int whence);
int GetPosition(MPI_File file, MPI_Offset* offset);
int GetByteOffset(MPI_File file, MPI_Offset offset, MPI_Offset* disp);

}  // namespace stagio::engine
