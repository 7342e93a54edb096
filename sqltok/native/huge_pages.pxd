# cython: language_level=3
"""Memory on transparent huge pages for the encoders' big tables (see huge_pages.h):
`vector[T, SqltokHugeAllocator[T]]`, a std::vector whose blocks of 2 MiB or more sit on them."""

cdef extern from "huge_pages.h":
    cdef cppclass SqltokHugeAllocator[T]:
        pass
