# cython: language_level=3
"""`vector[T, SqltokHugeAllocator[T]]`: a std::vector whose big blocks (2 MiB or more) sit on
transparent huge pages (see huge_pages.h), for tables several MiB large that are read at random."""

cdef extern from "huge_pages.h":
    cdef cppclass SqltokHugeAllocator[T]:
        pass
