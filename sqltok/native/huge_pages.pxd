# cython: language_level=3
"""Memory on transparent huge pages for big tables used at random (see huge_pages.h):
`vector[T, SqltokHugeAllocator[T]]`, a std::vector whose blocks of 2 MiB or more sit on them, and
`huge_zeroed` / `huge_free` for raw zero-filled tables."""

cdef extern from "huge_pages.h":
    cdef cppclass SqltokHugeAllocator[T]:
        pass
    void* huge_zeroed "sqltok_huge_zeroed"(size_t nbytes) nogil
    void huge_free "sqltok_huge_free"(void* p, size_t nbytes) nogil
