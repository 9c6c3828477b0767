! The PMPI adapter under a Fortran program using `use mpi_f08`, whose
! MPI_Allreduce and friends call Open MPI's ompi_allreduce_f: a rooted call
! (root p-1), reductions with MPI_IN_PLACE, a personalized exchange with
! uneven counts and count 0; then MPI_Ibcast, MPI_Iallreduce and MPI_Igather
! (ompi_ibcast_f, ...), whose type(MPI_Request) requests complete by MPI_Wait
! and MPI_Waitall. Each result is compared with the value MPI defines; a
! wrong one prints "FAILED: <what> on rank r of p".
program fortran_f08_test
  use mpi_f08
  use fortran_check
  implicit none
  integer :: provided, i, j
  integer :: a(4), counts(0:7), displs(0:7), s(16), r(16), want(16)
  double precision :: x(3)
  ! MPI writes these after the nonblocking calls return, until they complete.
  integer, asynchronous :: b(4), mine(2), g(2, 0:7)
  double precision, asynchronous :: y(3)
  type(MPI_Request) :: request, requests(2)
  integer :: ierr

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, p)
  call check('MPI_Init_thread', provided >= MPI_THREAD_SINGLE .and. provided <= MPI_THREAD_MULTIPLE)

  a = -1
  if (rank == p - 1) a = [(10*i, i=1, 4)]
  call MPI_Bcast(a, 4, MPI_INTEGER, p - 1, MPI_COMM_WORLD)
  call check('MPI_Bcast', all(a == [(10*i, i=1, 4)]))

  x = [(rank + 1d0*i, i=1, 3)]
  call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call check('MPI_Allreduce MPI_IN_PLACE', all(x == [(p*(p - 1)/2 + p*1d0*i, i=1, 3)]))

  a = [((rank + 1)*i, i=1, 4)]
  call MPI_Scan(MPI_IN_PLACE, a, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check('MPI_Scan MPI_IN_PLACE', all(a == [((rank + 1)*(rank + 2)/2*i, i=1, 4)]))

  ! Ranks q and j exchange mod(q + j, 3) integers (0 included), packed.
  counts(0:p - 1) = [(mod(rank + j, 3), j=0, p - 1)]
  displs(0:p - 1) = [(sum(counts(0:j - 1)), j=0, p - 1)]
  do j = 0, p - 1
    s(displs(j) + 1:displs(j) + counts(j)) = [(1000*rank + 10*j + i, i=1, counts(j))]
    want(displs(j) + 1:displs(j) + counts(j)) = [(1000*j + 10*rank + i, i=1, counts(j))]
  end do
  call MPI_Alltoallv(s, counts, displs, MPI_INTEGER, r, counts, displs, MPI_INTEGER, MPI_COMM_WORLD)
  call check('MPI_Alltoallv', all(r(1:sum(counts(0:p - 1))) == want(1:sum(counts(0:p - 1)))))

  r = -1
  call MPI_Allgather(s, 0, MPI_INTEGER, r, 0, MPI_INTEGER, MPI_COMM_WORLD)
  call check('MPI_Allgather count 0', all(r == -1))

  ! MPI_Ibcast from root p-1, completed by MPI_Wait.
  b = -1
  if (rank == p - 1) b = [(20*i, i=1, 4)]
  call MPI_Ibcast(b, 4, MPI_INTEGER, p - 1, MPI_COMM_WORLD, request, ierr)
  call check('MPI_Ibcast returns MPI_SUCCESS', ierr == MPI_SUCCESS)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check('MPI_Wait on MPI_Ibcast', ierr == MPI_SUCCESS .and. request == MPI_REQUEST_NULL)
  call check('MPI_Ibcast', all(b == [(20*i, i=1, 4)]))

  ! MPI_Iallreduce with MPI_IN_PLACE and MPI_Igather at root p-1 (MPI_IN_PLACE
  ! there) outstanding together, completed by MPI_Waitall.
  y = [(rank + 0.5d0*i, i=1, 3)]
  call MPI_Iallreduce(MPI_IN_PLACE, y, 3, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, requests(1), ierr)
  call check('MPI_Iallreduce returns MPI_SUCCESS', ierr == MPI_SUCCESS)
  mine = [(10*rank + i, i=1, 2)]
  g = -1
  if (rank == p - 1) then
    g(:, rank) = mine
    call MPI_Igather(MPI_IN_PLACE, 2, MPI_INTEGER, g, 2, MPI_INTEGER, p - 1, MPI_COMM_WORLD, &
                     requests(2), ierr)
  else
    call MPI_Igather(mine, 2, MPI_INTEGER, g, 2, MPI_INTEGER, p - 1, MPI_COMM_WORLD, requests(2), ierr)
  end if
  call check('MPI_Igather returns MPI_SUCCESS', ierr == MPI_SUCCESS)
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  call check('MPI_Waitall on MPI_Iallreduce and MPI_Igather', &
             ierr == MPI_SUCCESS .and. all(requests == MPI_REQUEST_NULL))
  call check('MPI_Iallreduce MPI_IN_PLACE MPI_MAX', all(y == [(p - 1 + 0.5d0*i, i=1, 3)]))
  if (rank == p - 1) then
    call check('MPI_Igather MPI_IN_PLACE', &
               all(g(:, 0:p - 1) == reshape([((10*j + i, i=1, 2), j=0, p - 1)], [2, p])) .and. &
               all(g(:, p:7) == -1))
  else
    call check('MPI_Igather leaves a non-root recvbuf', all(g == -1))
  end if

  if (rank == 0) write (*, '(a,i0,a)') 'fortran_f08_test: ', p, ' ranks done'
  call MPI_Finalize()
  if (failures > 0) error stop 1

end program fortran_f08_test
