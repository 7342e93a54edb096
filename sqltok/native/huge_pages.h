/* An allocator for big read-mostly tables (merge table, vocabulary index): blocks of
   2 MiB or more are mapped 2 MiB-aligned and marked MADV_HUGEPAGE, so that random lookups across
   several MiB do not miss the TLB on every probe (with transparent huge pages in "madvise" mode, the
   common default, nothing else gets huge pages). Smaller blocks come from malloc. */
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

template <class T> struct SqltokHugeAllocator {
    typedef T value_type;
    SqltokHugeAllocator() noexcept {}
    template <class U> SqltokHugeAllocator(const SqltokHugeAllocator<U>&) noexcept {}

    static std::size_t mapped_size(std::size_t n) {
        return (n * sizeof(T) + SQLTOK_HUGE_PAGE - 1) & ~(SQLTOK_HUGE_PAGE - 1);
    }

    T* allocate(std::size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (n * sizeof(T) >= SQLTOK_HUGE_PAGE) {
            std::size_t size = mapped_size(n);
            void* m = mmap(NULL, size + SQLTOK_HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) throw std::bad_alloc();
            std::uintptr_t start = (std::uintptr_t)m;
            std::uintptr_t aligned = (start + SQLTOK_HUGE_PAGE - 1) & ~(std::uintptr_t)(SQLTOK_HUGE_PAGE - 1);
            if (aligned > start) munmap(m, aligned - start);
            std::uintptr_t tail = start + size + SQLTOK_HUGE_PAGE - (aligned + size);
            if (tail) munmap((void*)(aligned + size), tail);
            madvise((void*)aligned, size, MADV_HUGEPAGE);
            return (T*)aligned;
        }
#endif
        void* p = std::malloc(n ? n * sizeof(T) : 1);
        if (!p) throw std::bad_alloc();
        return (T*)p;
    }

    void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (n * sizeof(T) >= SQLTOK_HUGE_PAGE) {
            munmap((void*)p, mapped_size(n));
            return;
        }
#endif
        std::free(p);
    }
};

template <class T, class U>
bool operator==(const SqltokHugeAllocator<T>&, const SqltokHugeAllocator<U>&) noexcept { return true; }
template <class T, class U>
bool operator!=(const SqltokHugeAllocator<T>&, const SqltokHugeAllocator<U>&) noexcept { return false; }

#endif
