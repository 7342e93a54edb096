# cython: language_level=3
"""`vector[T, SqltokHugeAllocator[T]]`: a std::vector whose big blocks (2 MiB or more) sit on
transparent huge pages (see huge_pages.h), for tables several MiB large that are read at random;
`advise_huge` for big output buffers not yet written."""

cdef extern from "huge_pages.h":
    cdef cppclass SqltokHugeAllocator[T]:
        pass
    void advise_huge "sqltok_advise_huge"(void* p, size_t size) noexcept nogil
