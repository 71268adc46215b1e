"""mpi4py's MPI.File, as a Python application uses it.

    mpi4py_file.py FILE

Every rank writes its block with Write_at_all, then records interleaved with the other ranks'
through a vector file view (Set_view, Write_all), and a last block with Iwrite_at. Then each
rank reads its neighbour's block (Read_at_all), its own records through the view (Read_all),
and the last block with Iread_at, and checks every byte. Rank 0 prints a digest of what each
rank read, in rank order. No numpy: buffers are bytearrays, with MPI.BYTE.
"""

import hashlib
import sys

from mpi4py import MPI

BLOCK = 3 * 65536 + 100      # a rank's block: straddles stagio's cache blocks
RECORD = 4096                # the view's record, one per rank in turn
RECORDS = 24


def pattern(rank, length, salt):
    return bytes((rank * 131 + i * 7 + salt) % 251 for i in range(length))


def main(path):
    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    neighbour = (rank + 1) % ranks
    blocks_end = BLOCK * ranks
    records_end = blocks_end + RECORD * RECORDS * ranks

    handle = MPI.File.Open(comm, path, MPI.MODE_CREATE | MPI.MODE_RDWR)
    handle.Write_at_all(BLOCK * rank, [pattern(rank, BLOCK, 1), MPI.BYTE])

    # Records interleaved: rank r's k-th record at blocks_end + (k * ranks + r) * RECORD.
    filetype = MPI.BYTE.Create_vector(RECORDS, RECORD, RECORD * ranks).Commit()
    handle.Set_view(blocks_end + RECORD * rank, MPI.BYTE, filetype)
    handle.Write_all([pattern(rank, RECORD * RECORDS, 2), MPI.BYTE])
    handle.Set_view(0, MPI.BYTE, MPI.BYTE)

    request = handle.Iwrite_at(records_end + BLOCK * rank, [pattern(rank, BLOCK, 3), MPI.BYTE])
    request.Wait()
    handle.Sync()
    comm.Barrier()
    handle.Sync()

    read = []
    neighbours_block = bytearray(BLOCK)
    handle.Read_at_all(BLOCK * neighbour, [neighbours_block, MPI.BYTE])
    read.append(("neighbour's block", neighbours_block, pattern(neighbour, BLOCK, 1)))

    records = bytearray(RECORD * RECORDS)
    handle.Set_view(blocks_end + RECORD * rank, MPI.BYTE, filetype)
    handle.Read_all([records, MPI.BYTE])
    read.append(("records through the view", records, pattern(rank, RECORD * RECORDS, 2)))
    handle.Set_view(0, MPI.BYTE, MPI.BYTE)

    last = bytearray(BLOCK)
    status = MPI.Status()
    handle.Iread_at(records_end + BLOCK * neighbour, [last, MPI.BYTE]).Wait(status)
    read.append(("last block (Iread_at)", last, pattern(neighbour, BLOCK, 3)))
    if status.Get_count(MPI.BYTE) != BLOCK:
        read.append(("Iread_at's count", status.Get_count(MPI.BYTE), BLOCK))
    handle.Close()
    filetype.Free()

    wrong = [what for what, seen, expected in read if bytes(seen) != bytes(expected)]
    digest = hashlib.sha256(b"".join(bytes(seen) for _, seen, _ in read[:3])).hexdigest()[:16]
    everything = comm.gather((wrong, digest), root=0)
    if rank == 0:
        failures = [f"rank {r}: {what}" for r, (w, _) in enumerate(everything) for what in w]
        print(f"mpi4py_file: {ranks} ranks, digests {' '.join(d for _, d in everything)}")
        for failure in failures:
            print(f"mpi4py_file: wrong: {failure}")
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mpi4py_file.py FILE")
    status = main(sys.argv[1])
    # Every rank exits with rank 0's verdict.
    sys.exit(MPI.COMM_WORLD.bcast(status, root=0))
