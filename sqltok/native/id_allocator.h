/* The allocator of token id vectors: std::allocator, except that resize(n) leaves the new elements
   uninitialized (default-initialized) instead of zeroing them, so that a vector of ids can be sized
   first and then written by several threads. */
#ifndef SQLTOK_ID_ALLOCATOR_H
#define SQLTOK_ID_ALLOCATOR_H

#include <memory>
#include <new>
#include <utility>

template <class T> struct SqltokIdAllocator : std::allocator<T> {
    template <class U> struct rebind { typedef SqltokIdAllocator<U> other; };
    SqltokIdAllocator() noexcept {}
    template <class U> SqltokIdAllocator(const SqltokIdAllocator<U>&) noexcept {}
    template <class U> void construct(U* p) noexcept { ::new ((void*)p) U; }
    template <class U, class... A> void construct(U* p, A&&... a) { ::new ((void*)p) U(std::forward<A>(a)...); }
};

#endif
