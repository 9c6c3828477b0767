! The PMPI adapter under a Fortran program using the `use mpi` bindings (the
! mpif.h symbols, mpi_allreduce_ and friends): every served collective with
! INTEGER and DOUBLE PRECISION data, MPI_IN_PLACE where MPI allows it, count 0
! and a root other than 0. Each result is compared with the value MPI defines
! (closed forms of the sums, the values each rank put in). A wrong value
! prints "FAILED: <what> on rank r of p".
!
! With the argument "userop" it runs only reductions with an operation made
! by MPI_Op_create from Fortran, which the adapter leaves to MPI (fallback).
program fortran_test
  use mpi
  use fortran_check
  implicit none
  integer :: ierr
  character(len=16) :: mode

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  mode = ''
  if (command_argument_count() > 0) call get_command_argument(1, mode)
  if (mode == 'userop') then
    call user_operation()
  else
    call bcast()
    call reduce()
    call allreduce()
    call reduce_scatter()
    call scans()
    call scatter_gather()
    call allgather()
    call alltoall()
    call alltoallv()
  end if
  if (rank == 0) write (*, '(a,i0,a)') 'fortran_test: ', p, ' ranks done'
  call MPI_Finalize(ierr)
  if (failures > 0) error stop 1

contains

  subroutine bcast()
    integer :: a(5), i, root
    double precision :: d(3)
    root = p - 1
    a = -1
    if (rank == root) a = [(1000*root + i, i=1, 5)]
    call MPI_Bcast(a, 5, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check('MPI_Bcast INTEGER', all(a == [(1000*root + i, i=1, 5)]) .and. ierr == MPI_SUCCESS)
    root = mod(1, p)
    d = -1d0
    if (rank == root) d = [(root + 0.5d0*i, i=1, 3)]
    call MPI_Bcast(d, 3, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
    call check('MPI_Bcast DOUBLE PRECISION', all(d == [(root + 0.5d0*i, i=1, 3)]))
    a = -7
    if (rank == root) a = 7
    call MPI_Bcast(a, 0, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check('MPI_Bcast count 0', all(a == merge(7, -7, rank == root)))
  end subroutine bcast

  subroutine reduce()
    integer :: s(4), r(4), i, root
    double precision :: x(3), y(3)
    root = p - 1
    s = [((rank + 1)*i, i=1, 4)]
    r = -1
    call MPI_Reduce(s, r, 4, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      call check('MPI_Reduce INTEGER MPI_SUM', all(r == [(i*p*(p + 1)/2, i=1, 4)]))
    else
      call check('MPI_Reduce leaves a non-root recvbuf', all(r == -1))
    end if
    root = mod(1, p)
    x = [(rank + 0.25d0*i, i=1, 3)]
    if (rank == root) then
      call MPI_Reduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_MAX, root, MPI_COMM_WORLD, ierr)
      call check('MPI_Reduce MPI_IN_PLACE MPI_MAX', all(x == [(p - 1 + 0.25d0*i, i=1, 3)]))
    else
      call MPI_Reduce(x, y, 3, MPI_DOUBLE_PRECISION, MPI_MAX, root, MPI_COMM_WORLD, ierr)
    end if
    r = -1
    call MPI_Reduce(s, r, 0, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce count 0', all(r == -1))
  end subroutine reduce

  subroutine allreduce()
    integer :: s(4), r(4), i, loc(2), best(2)
    double precision :: x(3)
    logical :: flag
    s = [(rank*i, i=1, 4)]
    call MPI_Allreduce(s, r, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce INTEGER MPI_SUM', all(r == [(i*p*(p - 1)/2, i=1, 4)]))
    x = [(rank + 1d0*i, i=1, 3)]
    call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce MPI_IN_PLACE DOUBLE PRECISION', &
               all(x == [(p*(p - 1)/2 + p*1d0*i, i=1, 3)]))
    r = -1
    call MPI_Allreduce(s, r, 0, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce count 0', all(r == -1))
    loc = [mod(rank + 1, p), rank]
    call MPI_Allreduce(loc, best, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce MPI_2INTEGER MPI_MINLOC', all(best == [0, p - 1]))
    flag = rank /= 3
    call MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce MPI_LOGICAL MPI_LAND', flag .eqv. (p <= 3))
  end subroutine allreduce

  ! Each rank puts rank + j at position j; block r sums to p(p-1)/2 + p*j.
  subroutine reduce_scatter()
    integer, parameter :: k = 2
    integer :: s(k*p), r(k), counts(p), i
    double precision :: x(k*p)
    s = [(rank + i, i=1, k*p)]
    call MPI_Reduce_scatter_block(s, r, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce_scatter_block INTEGER', &
               all(r == [(p*(p - 1)/2 + p*(rank*k + i), i=1, k)]))
    x = [(rank + 1d0*i, i=1, k*p)]
    call MPI_Reduce_scatter_block(MPI_IN_PLACE, x, k, MPI_DOUBLE_PRECISION, MPI_SUM, &
                                  MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce_scatter_block MPI_IN_PLACE', &
               all(x(1:k) == [(p*(p - 1)/2 + p*1d0*(rank*k + i), i=1, k)]))
    counts = k
    r = -1
    call MPI_Reduce_scatter(s, r, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce_scatter INTEGER', all(r == [(p*(p - 1)/2 + p*(rank*k + i), i=1, k)]))
    x = [(rank + 1d0*i, i=1, k*p)]
    call MPI_Reduce_scatter(MPI_IN_PLACE, x, counts, MPI_DOUBLE_PRECISION, MPI_SUM, &
                            MPI_COMM_WORLD, ierr)
    call check('MPI_Reduce_scatter MPI_IN_PLACE', &
               all(x(1:k) == [(p*(p - 1)/2 + p*1d0*(rank*k + i), i=1, k)]))
  end subroutine reduce_scatter

  ! Rank q contributes (q+1)*i: the inclusive prefix is (r+1)(r+2)/2 * i, the
  ! exclusive one r(r+1)/2 * i (undefined on rank 0).
  subroutine scans()
    integer :: s(3), r(3), i
    double precision :: x(3)
    s = [((rank + 1)*i, i=1, 3)]
    call MPI_Scan(s, r, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Scan INTEGER', all(r == [((rank + 1)*(rank + 2)/2*i, i=1, 3)]))
    x = [((rank + 1)*1d0*i, i=1, 3)]
    call MPI_Scan(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Scan MPI_IN_PLACE', all(x == [((rank + 1)*(rank + 2)/2*1d0*i, i=1, 3)]))
    call MPI_Exscan(s, r, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank > 0) call check('MPI_Exscan INTEGER', all(r == [(rank*(rank + 1)/2*i, i=1, 3)]))
    x = [((rank + 1)*1d0*i, i=1, 3)]
    call MPI_Exscan(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank > 0) call check('MPI_Exscan MPI_IN_PLACE', all(x == [(rank*(rank + 1)/2*1d0*i, i=1, 3)]))
    r = -1
    call MPI_Scan(s, r, 0, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check('MPI_Scan count 0', all(r == -1))
  end subroutine scans

  ! Block j of the root's buffer is 100*j + i (i = 1..k).
  subroutine scatter_gather()
    integer, parameter :: k = 3
    integer :: all_blocks(k, 0:p - 1), mine(k), i, j, root
    double precision :: d(k, 0:p - 1)
    root = p - 1
    all_blocks = -1
    if (rank == root) all_blocks = reshape([((100*j + i, i=1, k), j=0, p - 1)], [k, p])
    call MPI_Scatter(all_blocks, k, MPI_INTEGER, mine, k, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check('MPI_Scatter INTEGER', all(mine == [(100*rank + i, i=1, k)]))
    d = reshape([((100d0*j + i, i=1, k), j=0, p - 1)], [k, p])
    if (rank == root) then
      call MPI_Scatter(d, k, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, root, &
                       MPI_COMM_WORLD, ierr)
    else
      d = -1
      call MPI_Scatter(d, k, MPI_DOUBLE_PRECISION, d(:, rank), k, MPI_DOUBLE_PRECISION, root, &
                       MPI_COMM_WORLD, ierr)
    end if
    call check('MPI_Scatter MPI_IN_PLACE', all(d(:, rank) == [(100d0*rank + i, i=1, k)]))
    root = mod(1, p)
    all_blocks = -1
    call MPI_Gather(mine, k, MPI_INTEGER, all_blocks, k, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    if (rank == root) call check('MPI_Gather INTEGER', &
                                 all(all_blocks == reshape([((100*j + i, i=1, k), j=0, p - 1)], [k, p])))
    d = -1
    d(:, rank) = [(100d0*rank + i, i=1, k)]
    if (rank == root) then
      call MPI_Gather(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, root, &
                      MPI_COMM_WORLD, ierr)
      call check('MPI_Gather MPI_IN_PLACE', all(d == reshape([((100d0*j + i, i=1, k), j=0, p - 1)], [k, p])))
    else
      call MPI_Gather(d(:, rank), k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, root, &
                      MPI_COMM_WORLD, ierr)
    end if
  end subroutine scatter_gather

  subroutine allgather()
    integer, parameter :: k = 2
    integer :: got(k, 0:p - 1), mine(k), i, j
    double precision :: d(k, 0:p - 1)
    mine = [(10*rank + i, i=1, k)]
    call MPI_Allgather(mine, k, MPI_INTEGER, got, k, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check('MPI_Allgather INTEGER', all(got == reshape([((10*j + i, i=1, k), j=0, p - 1)], [k, p])))
    d = -1
    d(:, rank) = [(10d0*rank + i, i=1, k)]
    call MPI_Allgather(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, ierr)
    call check('MPI_Allgather MPI_IN_PLACE', all(d == reshape([((10d0*j + i, i=1, k), j=0, p - 1)], [k, p])))
    got = -1
    call MPI_Allgather(mine, 0, MPI_INTEGER, got, 0, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check('MPI_Allgather count 0', all(got == -1))
  end subroutine allgather

  ! Block j sent by rank q is 1000*q + 10*j + i.
  subroutine alltoall()
    integer, parameter :: k = 2
    integer :: s(k, 0:p - 1), r(k, 0:p - 1), i, j
    double precision :: d(k, 0:p - 1)
    s = reshape([((1000*rank + 10*j + i, i=1, k), j=0, p - 1)], [k, p])
    call MPI_Alltoall(s, k, MPI_INTEGER, r, k, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoall INTEGER', all(r == reshape([((1000*j + 10*rank + i, i=1, k), j=0, p - 1)], [k, p])))
    d = reshape([((1000d0*rank + 10*j + i, i=1, k), j=0, p - 1)], [k, p])
    call MPI_Alltoall(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, &
                      MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoall MPI_IN_PLACE', &
               all(d == reshape([((1000d0*j + 10*rank + i, i=1, k), j=0, p - 1)], [k, p])))
    r = -1
    call MPI_Alltoall(s, 0, MPI_INTEGER, r, 0, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoall count 0', all(r == -1))
  end subroutine alltoall

  ! The exchange of alltoallv_blocks (fortran_check).
  subroutine alltoallv()
    integer :: counts(0:p - 1), displs(0:p - 1), s(4*p), r(4*p), want(4*p)
    double precision :: d(4*p)
    call alltoallv_blocks(counts, displs, s, want)
    r = -1
    call MPI_Alltoallv(s, counts, displs, MPI_INTEGER, r, counts, displs, MPI_INTEGER, &
                       MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoallv INTEGER', all(r == want))
    d = dble(s)
    call MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_DOUBLE_PRECISION, d, counts, displs, &
                       MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
    call check('MPI_Alltoallv MPI_IN_PLACE', all(d == dble(want)))
  end subroutine alltoallv

  ! An operation from Fortran's MPI_Op_create: MPI calls it with Fortran
  ! arguments, so the adapter (which sees C operations only) leaves it to MPI
  ! on every rank alike.
  subroutine user_operation()
    integer :: op, s(3), r(3), i
    external :: add_integers
    call MPI_Op_create(add_integers, .false., op, ierr)
    s = [((rank + 1)*i, i=1, 3)]
    call MPI_Allreduce(s, r, 3, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call check('MPI_Allreduce Fortran user operation', all(r == [(i*p*(p + 1)/2, i=1, 3)]))
    call MPI_Scan(s, r, 3, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
    call check('MPI_Scan Fortran user operation', all(r == [((rank + 1)*(rank + 2)/2*i, i=1, 3)]))
    call MPI_Op_free(op, ierr)
  end subroutine user_operation

end program fortran_test

! MPI hands a Fortran operation the Fortran handle of the datatype.
subroutine add_integers(invec, inoutvec, len, datatype)
  use mpi, only: MPI_INTEGER
  implicit none
  integer, intent(in) :: len, datatype
  integer, intent(in) :: invec(len)
  integer, intent(inout) :: inoutvec(len)
  inoutvec = inoutvec + invec
  if (datatype /= MPI_INTEGER) inoutvec = -1
end subroutine add_integers
