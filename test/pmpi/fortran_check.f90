! What the Fortran test programs share: the rank, the size and the count of
! failed checks; check() prints "FAILED: <what> on rank r of p" when a
! result is wrong.
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

end module fortran_check
