! What the Fortran test programs share: the rank, the size and the count of
! failed checks; check() prints "FAILED: <what> on rank r of p" when a
! result is wrong; alltoallv_blocks() lays out an alltoallv exchange.
module fortran_check
  implicit none
  integer :: rank = 0, p = 1, failures = 0

contains

  subroutine check(what, ok)
    character(*), intent(in) :: what
    logical, intent(in) :: ok
    if (.not. ok) then
      write (*, '(a,a,a,i0,a,i0)') 'FAILED: ', what, ' on rank ', rank, ' of ', p
      failures = failures + 1
    end if
  end subroutine check

  ! Ranks q and j exchange mod(q + j, 3) elements each way (0 included), laid
  ! out with one unused element after each block: this rank's counts,
  ! displacements, send buffer and the receive buffer it must get (-1 where
  ! nothing arrives).
  subroutine alltoallv_blocks(counts, displs, s, want)
    integer, intent(out) :: counts(0:p - 1), displs(0:p - 1), s(4*p), want(4*p)
    integer :: i, j
    counts = [(mod(rank + j, 3), j=0, p - 1)]
    displs = [(sum(counts(0:j - 1)) + j, j=0, p - 1)]
    s = -1
    want = -1
    do j = 0, p - 1
      s(displs(j) + 1:displs(j) + counts(j)) = [(1000*rank + 10*j + i, i=1, counts(j))]
      want(displs(j) + 1:displs(j) + counts(j)) = [(1000*j + 10*rank + i, i=1, counts(j))]
    end do
  end subroutine alltoallv_blocks

end module fortran_check
