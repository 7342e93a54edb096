"""C++ and Cython pieces several families share: zero-copy Arrow views and outputs, id vectors and
their decoding, the parallel row driver, hash tables over bytes, huge-page allocation, the compiler
intrinsics (`portable.h`). Declarations only (`.pxd`, `.h`): nothing here is imported at run time."""
