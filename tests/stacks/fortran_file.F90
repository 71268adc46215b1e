! MPI-IO from Fortran, with `use mpi` or, built with -DUSE_MPI_F08, `use mpi_f08`.
!
!   fortran_file FILE
!
! Every rank writes its block of integers with MPI_File_write_at_all, then records interleaved
! with the other ranks' through a vector file view (MPI_File_write_all). Then each rank reads
! its neighbour's block (MPI_File_read_at_all) and its own records through the view
! (MPI_File_read_all), and checks every value. Rank 0 prints each rank's sum of what it read.
program fortran_file
#ifdef USE_MPI_F08
  use mpi_f08
#else
  use mpi
#endif
  implicit none
  integer, parameter :: block = 70000, record = 1000, records = 24
#ifdef USE_MPI_F08
  type(MPI_File) :: handle
  type(MPI_Datatype) :: filetype
#else
  integer :: handle, filetype
#endif
  integer :: ierr, rank, ranks, neighbour, i, wrong, all_wrong
  integer(kind=MPI_OFFSET_KIND) :: offset, blocks_end
  integer, allocatable :: mine(:), theirs(:), recs(:), seen(:)
  integer(kind=8) :: total
  integer(kind=8), allocatable :: totals(:)
  character(len=256) :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, ranks, ierr)
  call get_command_argument(1, path)
  neighbour = mod(rank + 1, ranks)
  allocate(mine(block), theirs(block), recs(record * records), seen(record * records))
  allocate(totals(ranks))
  mine = [(value(rank, i, 1), i = 1, block)]
  recs = [(value(rank, i, 2), i = 1, record * records)]

  call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, handle, ierr)
  call check(ierr, 'open')
  offset = int(block, MPI_OFFSET_KIND) * 4 * rank
  call MPI_File_write_at_all(handle, offset, mine, block, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_at_all')

  ! Rank r's k-th record of `record` integers at blocks_end + (k * ranks + r) * record * 4.
  blocks_end = int(block, MPI_OFFSET_KIND) * 4 * ranks
  call MPI_Type_vector(records, record, record * ranks, MPI_INTEGER, filetype, ierr)
  call MPI_Type_commit(filetype, ierr)
  call MPI_File_set_view(handle, blocks_end + int(record, MPI_OFFSET_KIND) * 4 * rank, &
                         MPI_INTEGER, filetype, 'native', MPI_INFO_NULL, ierr)
  call check(ierr, 'set_view')
  call MPI_File_write_all(handle, recs, record * records, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'write_all')
  call MPI_File_sync(handle, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(handle, ierr)

  call MPI_File_seek(handle, 0_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_File_read_all(handle, seen, record * records, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'read_all')
  call MPI_File_set_view(handle, 0_MPI_OFFSET_KIND, MPI_BYTE, MPI_BYTE, 'native', &
                         MPI_INFO_NULL, ierr)
  offset = int(block, MPI_OFFSET_KIND) * 4 * neighbour
  call MPI_File_read_at_all(handle, offset, theirs, block, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call check(ierr, 'read_at_all')
  call MPI_File_close(handle, ierr)
  call MPI_Type_free(filetype, ierr)

  wrong = count(theirs /= [(value(neighbour, i, 1), i = 1, block)]) + count(seen /= recs)
  total = sum(int(theirs, 8)) + sum(int(seen, 8) * 3)
  call MPI_Reduce(wrong, all_wrong, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Gather(total, 1, MPI_INTEGER8, totals, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a, i0, a, i0, a, *(1x, i0))', 'fortran_file: ', ranks, ' ranks, ', all_wrong, &
          ' wrong values, sums', totals
  end if
  call MPI_Bcast(all_wrong, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (all_wrong /= 0) error stop 1

contains

  integer function value(owner, i, salt)
    integer, intent(in) :: owner, i, salt
    value = owner * 1000003 + i * 7 + salt * 100000007
  end function

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= MPI_SUCCESS) then
      print '(a, a, a, i0)', 'fortran_file: ', what, ' failed: ', status
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine
end program
