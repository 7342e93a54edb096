/* An allocator for the encoders' big tables (merge tables, vocabulary indexes), built at load and
   read at random for as long as the tokenizer lives: blocks of 2 MiB or more are mapped 2 MiB-aligned
   and marked MADV_HUGEPAGE, so that random lookups across several MiB do not miss the TLB on every
   probe (with transparent huge pages in "madvise" mode, the common default, nothing else gets huge
   pages). Smaller blocks come from malloc. Training's tables stay on small pages: see
   merge_state.pxi. */
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
static inline void* sqltok_huge_alloc(std::size_t bytes) {
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
    return std::malloc(bytes ? bytes : 1);
}

/* Give back a block of `bytes` from sqltok_huge_alloc. */
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
        void* p = sqltok_huge_alloc(n * sizeof(T));
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
