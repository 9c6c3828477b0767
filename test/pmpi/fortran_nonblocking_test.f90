! The PMPI adapter's nonblocking collectives under a Fortran program using the
! `use mpi` bindings (the mpif.h symbols, mpi_iallreduce_ and friends): every
! served nonblocking collective with INTEGER and DOUBLE PRECISION data,
! MPI_IN_PLACE where MPI allows it, count 0 and a root other than 0, several
! outstanding at once on MPI_COMM_WORLD. The requests complete through MPI's
! own completion functions: MPI_Wait, loops of MPI_Test, MPI_Waitany and
! MPI_Testall, and MPI_Waitall, once on an array that also holds a message
! to each neighbour and MPI_REQUEST_NULL. Each result is compared with the
! value MPI defines (closed forms of the sums, the values each rank put in).
! A wrong value prints "FAILED: <what> on rank r of p".
!
! The buffers are ASYNCHRONOUS: MPI writes them after the call that starts a
! collective returns, until the request completes.
program fortran_nonblocking_test
  use mpi
  use fortran_check
  implicit none
  ! How complete() finishes an array of requests.
  integer, parameter :: by_wait = 1, by_test = 2, by_waitall = 3, by_waitany = 4, by_testall = 5
  integer :: ierr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  call ibcast()
  call ireduce()
  call iallreduce()
  call ireduce_scatter()
  call iscans()
  call iscatter_igather()
  call iallgather()
  call ialltoall()
  call ialltoallv()
  if (rank == 0) write (*, '(a,i0,a)') 'fortran_nonblocking_test: ', p, ' ranks done'
  call MPI_Finalize(ierr)
  if (failures > 0) error stop 1

contains

  ! The call that starts what returned MPI_SUCCESS.
  subroutine started(what)
    character(*), intent(in) :: what
    call check(what//' returns MPI_SUCCESS', ierr == MPI_SUCCESS)
  end subroutine started

  ! Completes every request in reqs: MPI_Wait on each (by_wait), MPI_Test on
  ! each until it is done (by_test), MPI_Waitall, MPI_Waitany until it answers
  ! MPI_UNDEFINED (once per request), or MPI_Testall until it is true. Each
  ! call returns MPI_SUCCESS and leaves MPI_REQUEST_NULL in place of the
  ! requests it completed.
  subroutine complete(what, reqs, how)
    character(*), intent(in) :: what
    integer, intent(inout) :: reqs(:)
    integer, intent(in) :: how
    integer :: i, index, done
    logical :: flag
    select case (how)
    case (by_wait)
      do i = 1, size(reqs)
        call MPI_Wait(reqs(i), MPI_STATUS_IGNORE, ierr)
        call check(what//': MPI_Wait returns MPI_SUCCESS', ierr == MPI_SUCCESS)
      end do
    case (by_test)
      do i = 1, size(reqs)
        flag = .false.
        do while (.not. flag)
          call MPI_Test(reqs(i), flag, MPI_STATUS_IGNORE, ierr)
          call check(what//': MPI_Test returns MPI_SUCCESS', ierr == MPI_SUCCESS)
          if (ierr /= MPI_SUCCESS) exit
        end do
      end do
    case (by_waitall)
      call MPI_Waitall(size(reqs), reqs, MPI_STATUSES_IGNORE, ierr)
      call check(what//': MPI_Waitall returns MPI_SUCCESS', ierr == MPI_SUCCESS)
    case (by_waitany)
      do done = 0, size(reqs)
        call MPI_Waitany(size(reqs), reqs, index, MPI_STATUS_IGNORE, ierr)
        call check(what//': MPI_Waitany returns MPI_SUCCESS', ierr == MPI_SUCCESS)
        if (index == MPI_UNDEFINED .or. ierr /= MPI_SUCCESS) exit
        call check(what//': MPI_Waitany gives the index of a completed request', &
                   index >= 1 .and. index <= size(reqs))
        if (index >= 1 .and. index <= size(reqs)) &
          call check(what//': MPI_Waitany frees the completed request', reqs(index) == MPI_REQUEST_NULL)
      end do
      call check(what//': MPI_Waitany completes each request once', done == size(reqs))
    case (by_testall)
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(size(reqs), reqs, flag, MPI_STATUSES_IGNORE, ierr)
        call check(what//': MPI_Testall returns MPI_SUCCESS', ierr == MPI_SUCCESS)
        if (ierr /= MPI_SUCCESS) exit
      end do
    end select
    call check(what//': the requests are MPI_REQUEST_NULL', all(reqs == MPI_REQUEST_NULL))
  end subroutine complete

  subroutine ibcast()
    integer, asynchronous :: a(5), b(2)
    double precision, asynchronous :: d(3)
    integer :: reqs(3), i, root, root2
    root = p - 1
    a = -1
    if (rank == root) a = [(1000*root + i, i=1, 5)]
    call MPI_Ibcast(a, 5, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Ibcast INTEGER')
    root2 = mod(1, p)
    d = -1d0
    if (rank == root2) d = [(root2 + 0.5d0*i, i=1, 3)]
    call MPI_Ibcast(d, 3, MPI_DOUBLE_PRECISION, root2, MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Ibcast DOUBLE PRECISION')
    b = merge(7, -7, rank == root2)
    call MPI_Ibcast(b, 0, MPI_INTEGER, root2, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Ibcast count 0')
    call complete('MPI_Ibcast', reqs, by_wait)
    call check('MPI_Ibcast INTEGER', all(a == [(1000*root + i, i=1, 5)]))
    call check('MPI_Ibcast DOUBLE PRECISION', all(d == [(root2 + 0.5d0*i, i=1, 3)]))
    call check('MPI_Ibcast count 0', all(b == merge(7, -7, rank == root2)))
  end subroutine ibcast

  subroutine ireduce()
    integer, asynchronous :: s(4), r(4), z(2)
    double precision, asynchronous :: x(3), y(3)
    integer :: reqs(3), i, root, root2
    root = p - 1
    s = [((rank + 1)*i, i=1, 4)]
    r = -1
    call MPI_Ireduce(s, r, 4, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Ireduce INTEGER MPI_SUM')
    root2 = mod(1, p)
    x = [(rank + 0.25d0*i, i=1, 3)]
    if (rank == root2) then
      call MPI_Ireduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_MAX, root2, MPI_COMM_WORLD, &
                       reqs(2), ierr)
    else
      call MPI_Ireduce(x, y, 3, MPI_DOUBLE_PRECISION, MPI_MAX, root2, MPI_COMM_WORLD, reqs(2), ierr)
    end if
    call started('MPI_Ireduce MPI_IN_PLACE MPI_MAX')
    z = -1
    call MPI_Ireduce(s, z, 0, MPI_INTEGER, MPI_SUM, root2, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Ireduce count 0')
    call complete('MPI_Ireduce', reqs, by_test)
    if (rank == root) then
      call check('MPI_Ireduce INTEGER MPI_SUM', all(r == [(i*p*(p + 1)/2, i=1, 4)]))
    else
      call check('MPI_Ireduce leaves a non-root recvbuf', all(r == -1))
    end if
    if (rank == root2) call check('MPI_Ireduce MPI_IN_PLACE MPI_MAX', all(x == [(p - 1 + 0.25d0*i, i=1, 3)]))
    call check('MPI_Ireduce count 0', all(z == -1))
  end subroutine ireduce

  ! The collectives complete in one MPI_Waitall with a message from the left
  ! neighbour, one to the right neighbour and MPI_REQUEST_NULL.
  subroutine iallreduce()
    integer, parameter :: tag = 17
    integer, asynchronous :: s(4), r(4), z(2), loc(2), best(2), msg(3), got(3)
    double precision, asynchronous :: x(3)
    integer :: reqs(7), statuses(MPI_STATUS_SIZE, 7), i, n, left, right
    left = mod(rank + p - 1, p)
    right = mod(rank + 1, p)
    got = -1
    call MPI_Irecv(got, 3, MPI_INTEGER, left, tag, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Irecv')
    s = [(rank*i, i=1, 4)]
    call MPI_Iallreduce(s, r, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Iallreduce INTEGER MPI_SUM')
    reqs(3) = MPI_REQUEST_NULL
    x = [(rank + 1d0*i, i=1, 3)]
    call MPI_Iallreduce(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
    call started('MPI_Iallreduce MPI_IN_PLACE DOUBLE PRECISION')
    msg = [(100*rank + i, i=1, 3)]
    call MPI_Isend(msg, 3, MPI_INTEGER, right, tag, MPI_COMM_WORLD, reqs(5), ierr)
    call started('MPI_Isend')
    z = -1
    call MPI_Iallreduce(s, z, 0, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(6), ierr)
    call started('MPI_Iallreduce count 0')
    loc = [mod(rank + 1, p), rank]
    call MPI_Iallreduce(loc, best, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, reqs(7), ierr)
    call started('MPI_Iallreduce MPI_2INTEGER MPI_MINLOC')
    call MPI_Waitall(7, reqs, statuses, ierr)
    call check('MPI_Waitall of collectives, messages and MPI_REQUEST_NULL', &
               ierr == MPI_SUCCESS .and. all(reqs == MPI_REQUEST_NULL))
    call MPI_Get_count(statuses(:, 1), MPI_INTEGER, n, ierr)
    call check('MPI_Irecv beside the collectives', all(got == [(100*left + i, i=1, 3)]) .and. n == 3 .and. &
               statuses(MPI_SOURCE, 1) == left .and. statuses(MPI_TAG, 1) == tag)
    call check('MPI_Iallreduce INTEGER MPI_SUM', all(r == [(i*p*(p - 1)/2, i=1, 4)]))
    call check('MPI_Iallreduce MPI_IN_PLACE DOUBLE PRECISION', all(x == [(p*(p - 1)/2 + p*1d0*i, i=1, 3)]))
    call check('MPI_Iallreduce count 0', all(z == -1))
    call check('MPI_Iallreduce MPI_2INTEGER MPI_MINLOC', all(best == [0, p - 1]))
  end subroutine iallreduce

  ! Each rank puts rank + j at position j; block r sums to p(p-1)/2 + p*j.
  subroutine ireduce_scatter()
    integer, parameter :: k = 2
    integer, asynchronous :: s(k*p), r(k), r2(k), counts(p)
    double precision, asynchronous :: x(k*p), y(k*p)
    integer :: reqs(4), i
    s = [(rank + i, i=1, k*p)]
    call MPI_Ireduce_scatter_block(s, r, k, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Ireduce_scatter_block INTEGER')
    x = [(rank + 1d0*i, i=1, k*p)]
    call MPI_Ireduce_scatter_block(MPI_IN_PLACE, x, k, MPI_DOUBLE_PRECISION, MPI_SUM, &
                                   MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Ireduce_scatter_block MPI_IN_PLACE')
    counts = k
    r2 = -1
    call MPI_Ireduce_scatter(s, r2, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Ireduce_scatter INTEGER')
    y = [(rank + 1d0*i, i=1, k*p)]
    call MPI_Ireduce_scatter(MPI_IN_PLACE, y, counts, MPI_DOUBLE_PRECISION, MPI_SUM, &
                             MPI_COMM_WORLD, reqs(4), ierr)
    call started('MPI_Ireduce_scatter MPI_IN_PLACE')
    call complete('MPI_Ireduce_scatter', reqs, by_waitany)
    call check('MPI_Ireduce_scatter_block INTEGER', &
               all(r == [(p*(p - 1)/2 + p*(rank*k + i), i=1, k)]))
    call check('MPI_Ireduce_scatter_block MPI_IN_PLACE', &
               all(x(1:k) == [(p*(p - 1)/2 + p*1d0*(rank*k + i), i=1, k)]))
    call check('MPI_Ireduce_scatter INTEGER', all(r2 == [(p*(p - 1)/2 + p*(rank*k + i), i=1, k)]))
    call check('MPI_Ireduce_scatter MPI_IN_PLACE', &
               all(y(1:k) == [(p*(p - 1)/2 + p*1d0*(rank*k + i), i=1, k)]))
  end subroutine ireduce_scatter

  ! Rank q contributes (q+1)*i: the inclusive prefix is (r+1)(r+2)/2 * i, the
  ! exclusive one r(r+1)/2 * i (undefined on rank 0).
  subroutine iscans()
    integer, asynchronous :: s(3), r(3), e(3), z(3)
    double precision, asynchronous :: x(3), y(3)
    integer :: reqs(5), i
    s = [((rank + 1)*i, i=1, 3)]
    call MPI_Iscan(s, r, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Iscan INTEGER')
    x = [((rank + 1)*1d0*i, i=1, 3)]
    call MPI_Iscan(MPI_IN_PLACE, x, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Iscan MPI_IN_PLACE')
    call MPI_Iexscan(s, e, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Iexscan INTEGER')
    y = [((rank + 1)*1d0*i, i=1, 3)]
    call MPI_Iexscan(MPI_IN_PLACE, y, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
    call started('MPI_Iexscan MPI_IN_PLACE')
    z = -1
    call MPI_Iscan(s, z, 0, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(5), ierr)
    call started('MPI_Iscan count 0')
    call complete('MPI_Iscan and MPI_Iexscan', reqs, by_testall)
    call check('MPI_Iscan INTEGER', all(r == [((rank + 1)*(rank + 2)/2*i, i=1, 3)]))
    call check('MPI_Iscan MPI_IN_PLACE', all(x == [((rank + 1)*(rank + 2)/2*1d0*i, i=1, 3)]))
    if (rank > 0) call check('MPI_Iexscan INTEGER', all(e == [(rank*(rank + 1)/2*i, i=1, 3)]))
    if (rank > 0) call check('MPI_Iexscan MPI_IN_PLACE', all(y == [(rank*(rank + 1)/2*1d0*i, i=1, 3)]))
    call check('MPI_Iscan count 0', all(z == -1))
  end subroutine iscans

  ! Block j of the root's buffer is 100*j + i (i = 1..k): scattered from root
  ! p-1, then gathered back at root 1 (0 on one rank).
  subroutine iscatter_igather()
    integer, parameter :: k = 3
    integer, asynchronous :: blocks(k, 0:p - 1), mine(k), gathered(k, 0:p - 1)
    double precision, asynchronous :: d(k, 0:p - 1), mine_d(k), e(k, 0:p - 1)
    integer :: reqs(2), i, j, root
    root = p - 1
    blocks = -1
    if (rank == root) blocks = reshape([((100*j + i, i=1, k), j=0, p - 1)], [k, p])
    mine = -1
    call MPI_Iscatter(blocks, k, MPI_INTEGER, mine, k, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Iscatter INTEGER')
    d = reshape([((100d0*j + i, i=1, k), j=0, p - 1)], [k, p])
    mine_d = -1
    if (rank == root) then
      call MPI_Iscatter(d, k, MPI_DOUBLE_PRECISION, MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, root, &
                        MPI_COMM_WORLD, reqs(2), ierr)
    else
      call MPI_Iscatter(d, k, MPI_DOUBLE_PRECISION, mine_d, k, MPI_DOUBLE_PRECISION, root, &
                        MPI_COMM_WORLD, reqs(2), ierr)
    end if
    call started('MPI_Iscatter MPI_IN_PLACE')
    call complete('MPI_Iscatter', reqs, by_wait)
    call check('MPI_Iscatter INTEGER', all(mine == [(100*rank + i, i=1, k)]))
    if (rank == root) then
      call check('MPI_Iscatter MPI_IN_PLACE leaves the root''s buffer', &
                 all(d == reshape([((100d0*j + i, i=1, k), j=0, p - 1)], [k, p])))
    else
      call check('MPI_Iscatter MPI_IN_PLACE', all(mine_d == [(100d0*rank + i, i=1, k)]))
    end if

    root = mod(1, p)
    gathered = -1
    call MPI_Igather(mine, k, MPI_INTEGER, gathered, k, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Igather INTEGER')
    e = -1
    mine_d = [(100d0*rank + i, i=1, k)]
    if (rank == root) then
      e(:, rank) = mine_d
      call MPI_Igather(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, e, k, MPI_DOUBLE_PRECISION, root, &
                       MPI_COMM_WORLD, reqs(2), ierr)
    else
      call MPI_Igather(mine_d, k, MPI_DOUBLE_PRECISION, e, k, MPI_DOUBLE_PRECISION, root, &
                       MPI_COMM_WORLD, reqs(2), ierr)
    end if
    call started('MPI_Igather MPI_IN_PLACE')
    call complete('MPI_Igather', reqs, by_waitany)
    if (rank == root) then
      call check('MPI_Igather INTEGER', all(gathered == reshape([((100*j + i, i=1, k), j=0, p - 1)], [k, p])))
      call check('MPI_Igather MPI_IN_PLACE', all(e == reshape([((100d0*j + i, i=1, k), j=0, p - 1)], [k, p])))
    else
      call check('MPI_Igather leaves a non-root recvbuf', all(gathered == -1) .and. all(e == -1))
    end if
  end subroutine iscatter_igather

  subroutine iallgather()
    integer, parameter :: k = 2
    integer, asynchronous :: got(k, 0:p - 1), none(k, 0:p - 1), mine(k)
    double precision, asynchronous :: d(k, 0:p - 1)
    integer :: reqs(3), i, j
    mine = [(10*rank + i, i=1, k)]
    call MPI_Iallgather(mine, k, MPI_INTEGER, got, k, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Iallgather INTEGER')
    d = -1
    d(:, rank) = [(10d0*rank + i, i=1, k)]
    call MPI_Iallgather(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, &
                        MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Iallgather MPI_IN_PLACE')
    none = -1
    call MPI_Iallgather(mine, 0, MPI_INTEGER, none, 0, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Iallgather count 0')
    call complete('MPI_Iallgather', reqs, by_test)
    call check('MPI_Iallgather INTEGER', all(got == reshape([((10*j + i, i=1, k), j=0, p - 1)], [k, p])))
    call check('MPI_Iallgather MPI_IN_PLACE', all(d == reshape([((10d0*j + i, i=1, k), j=0, p - 1)], [k, p])))
    call check('MPI_Iallgather count 0', all(none == -1))
  end subroutine iallgather

  ! Block j sent by rank q is 1000*q + 10*j + i.
  subroutine ialltoall()
    integer, parameter :: k = 2
    integer, asynchronous :: s(k, 0:p - 1), r(k, 0:p - 1), z(k, 0:p - 1)
    double precision, asynchronous :: d(k, 0:p - 1)
    integer :: reqs(3), i, j
    s = reshape([((1000*rank + 10*j + i, i=1, k), j=0, p - 1)], [k, p])
    call MPI_Ialltoall(s, k, MPI_INTEGER, r, k, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Ialltoall INTEGER')
    d = reshape([((1000d0*rank + 10*j + i, i=1, k), j=0, p - 1)], [k, p])
    call MPI_Ialltoall(MPI_IN_PLACE, k, MPI_DOUBLE_PRECISION, d, k, MPI_DOUBLE_PRECISION, &
                       MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Ialltoall MPI_IN_PLACE')
    z = -1
    call MPI_Ialltoall(s, 0, MPI_INTEGER, z, 0, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
    call started('MPI_Ialltoall count 0')
    call complete('MPI_Ialltoall', reqs, by_testall)
    call check('MPI_Ialltoall INTEGER', all(r == reshape([((1000*j + 10*rank + i, i=1, k), j=0, p - 1)], [k, p])))
    call check('MPI_Ialltoall MPI_IN_PLACE', &
               all(d == reshape([((1000d0*j + 10*rank + i, i=1, k), j=0, p - 1)], [k, p])))
    call check('MPI_Ialltoall count 0', all(z == -1))
  end subroutine ialltoall

  ! The exchange of alltoallv_blocks (fortran_check).
  subroutine ialltoallv()
    integer, asynchronous :: counts(0:p - 1), displs(0:p - 1), s(4*p), r(4*p)
    double precision, asynchronous :: d(4*p)
    integer :: reqs(2), want(4*p)
    call alltoallv_blocks(counts, displs, s, want)
    r = -1
    call MPI_Ialltoallv(s, counts, displs, MPI_INTEGER, r, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, reqs(1), ierr)
    call started('MPI_Ialltoallv INTEGER')
    d = dble(s)
    call MPI_Ialltoallv(MPI_IN_PLACE, counts, displs, MPI_DOUBLE_PRECISION, d, counts, displs, &
                        MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, reqs(2), ierr)
    call started('MPI_Ialltoallv MPI_IN_PLACE')
    call complete('MPI_Ialltoallv', reqs, by_waitall)
    call check('MPI_Ialltoallv INTEGER', all(r == want))
    call check('MPI_Ialltoallv MPI_IN_PLACE', all(d == dble(want)))
  end subroutine ialltoallv

end program fortran_nonblocking_test
