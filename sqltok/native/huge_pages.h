/* Memory for big tables read or written at random (merge tables, vocabulary indexes, the training
   pair tables and sequences): blocks of 2 MiB or more are mapped 2 MiB-aligned and marked
   MADV_HUGEPAGE, so that random accesses across several MiB do not miss the TLB on every probe and
   a first touch faults in 2 MiB instead of 4 KiB (with transparent huge pages in "madvise" mode, the
   common default, nothing else gets huge pages). Smaller blocks come from malloc.
   `sqltok_huge_zeroed` / `sqltok_huge_free` for raw tables (zeroed: a fresh mapping is already
   zero, so a table whose empty slot is all zero bytes needs no pass to clear it);
   `SqltokHugeAllocator` for std::vector. */
#ifndef SQLTOK_HUGE_PAGES_H
#define SQLTOK_HUGE_PAGES_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define SQLTOK_HUGE_PAGE ((std::size_t)1 << 21)

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define SQLTOK_HUGE_MAPPED 1
#else
#define SQLTOK_HUGE_MAPPED 0
#endif

static inline std::size_t sqltok_huge_mapped_size(std::size_t bytes) {
    return (bytes + SQLTOK_HUGE_PAGE - 1) & ~(SQLTOK_HUGE_PAGE - 1);
}

/* `bytes` on 2 MiB pages (mapped) or from malloc; NULL when out of memory. */
static inline void* sqltok_huge_alloc(std::size_t bytes, bool zeroed) {
#if SQLTOK_HUGE_MAPPED
    if (bytes >= SQLTOK_HUGE_PAGE) {
        std::size_t size = sqltok_huge_mapped_size(bytes);
        void* m = mmap(NULL, size + SQLTOK_HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        std::uintptr_t start = (std::uintptr_t)m;
        std::uintptr_t aligned = (start + SQLTOK_HUGE_PAGE - 1) & ~(std::uintptr_t)(SQLTOK_HUGE_PAGE - 1);
        if (aligned > start) munmap(m, aligned - start);
        std::uintptr_t tail = start + size + SQLTOK_HUGE_PAGE - (aligned + size);
        if (tail) munmap((void*)(aligned + size), tail);
        madvise((void*)aligned, size, MADV_HUGEPAGE);
        return (void*)aligned;
    }
#endif
    return zeroed ? std::calloc(bytes ? bytes : 1, 1) : std::malloc(bytes ? bytes : 1);
}

/* Zero-filled `bytes` (see sqltok_huge_alloc); NULL when out of memory. */
static inline void* sqltok_huge_zeroed(std::size_t bytes) { return sqltok_huge_alloc(bytes, true); }

/* Give back a block of `bytes` from sqltok_huge_alloc / sqltok_huge_zeroed. */
static inline void sqltok_huge_free(void* p, std::size_t bytes) {
#if SQLTOK_HUGE_MAPPED
    if (bytes >= SQLTOK_HUGE_PAGE) {
        munmap(p, sqltok_huge_mapped_size(bytes));
        return;
    }
#endif
    std::free(p);
}

template <class T> struct SqltokHugeAllocator {
    typedef T value_type;
    SqltokHugeAllocator() noexcept {}
    template <class U> SqltokHugeAllocator(const SqltokHugeAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        void* p = sqltok_huge_alloc(n * sizeof(T), false);
        if (!p) throw std::bad_alloc();
        return (T*)p;
    }

    void deallocate(T* p, std::size_t n) noexcept { sqltok_huge_free((void*)p, n * sizeof(T)); }
};

template <class T, class U>
bool operator==(const SqltokHugeAllocator<T>&, const SqltokHugeAllocator<U>&) noexcept { return true; }
template <class T, class U>
bool operator!=(const SqltokHugeAllocator<T>&, const SqltokHugeAllocator<U>&) noexcept { return false; }

#endif
