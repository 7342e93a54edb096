/* Pretokens and their ids, shared by the threads of one encoder (see shared_pieces.pxd).

   Insert-only and lock-free: an entry, once published, never changes, so a reader that sees its tag
   (an acquire load) sees its bytes and ids too (written before the writer's release store). A writer
   claims an empty slot (a compare-and-swap from 0 to BUSY), writes the entry where its own block of
   the arena has room (a thread takes a block of up to BLOCK bytes at a time, so that the threads do
   not contend for one counter per entry), and publishes the tag. When the arena is used up or a
   pretoken's PROBES slots are taken, nothing more is held: a cache, never a growing index of the
   corpus. */
#ifndef SQLTOK_SHARED_PIECES_H
#define SQLTOK_SHARED_PIECES_H

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

struct SqltokSharedCursor {                          /* a thread's block of the arena */
    uint64_t at = 0;
    uint64_t end = 0;
};

struct SqltokSharedPieces {
    static const uint64_t BUSY = 1;       /* a slot being written; tags have bit 1 set, so are never 0 or 1 */
    static const int PROBES = 16;         /* slots tried per lookup and insert (two cache lines of tags) */
    static const uint64_t BLOCK = 1 << 16;

    std::unique_ptr<std::atomic<uint64_t>[]> tags;   /* 0: empty, BUSY, or hash | 2 */
    std::unique_ptr<uint64_t[]> info;                /* arena offset << 32 | bytes << 16 | ids */
    std::unique_ptr<uint8_t[]> arena;                /* each entry: its bytes, padded to 4, then its ids */
    uint64_t mask = 0;
    uint64_t arena_size = 0;
    uint64_t block = 0;                              /* bytes a thread takes at a time */
    std::atomic<uint64_t> used{0};                   /* arena bytes handed out in blocks */
    std::atomic<bool> full{false};

    bool ready() const { return mask != 0; }

    /* Make the table: 2^slot_bits slots and arena_bytes of entries. */
    void init(int slot_bits, uint64_t arena_bytes) {
        uint64_t slots = (uint64_t)1 << slot_bits;
        tags.reset(new std::atomic<uint64_t>[slots]);
        for (uint64_t j = 0; j < slots; j++) tags[j].store(0, std::memory_order_relaxed);
        info.reset(new uint64_t[slots]);
        arena.reset(new uint8_t[arena_bytes]);
        mask = slots - 1;
        arena_size = arena_bytes;
        block = arena_bytes / 16 < BLOCK ? arena_bytes / 16 : BLOCK;
        used.store(0, std::memory_order_relaxed);
        full.store(false, std::memory_order_relaxed);
    }

    /* Where the lookup of a pretoken with bytes_hash h starts (to prefetch). */
    const void* start(uint64_t h) const { return &tags[h & mask]; }

    static uint64_t padded(int64_t n) { return ((uint64_t)n + 3) & ~(uint64_t)3; }

    /* Whether published slot j holds p[:n]. */
    bool holds(uint64_t j, const uint8_t* p, int64_t n) const {
        uint64_t i = info[j];
        return (int64_t)((i >> 16) & 0xFFFF) == n && std::memcmp(arena.get() + (i >> 32), p, (size_t)n) == 0;
    }

    /* The ids of p[:n] (its bytes_hash h) and their number in *count, or nullptr when not held. */
    const int32_t* find(const uint8_t* p, int64_t n, uint64_t h, int64_t* count) const {
        uint64_t tag = h | 2, j = h & mask;
        for (int k = 0; k < PROBES; k++, j = (j + 1) & mask) {
            uint64_t t = tags[j].load(std::memory_order_acquire);
            if (t == 0) return nullptr;
            if (t == tag && holds(j, p, n)) {
                *count = (int64_t)(info[j] & 0xFFFF);
                return (const int32_t*)(arena.get() + (info[j] >> 32) + padded(n));
            }
        }
        return nullptr;
    }

    /* Hold ids[:count] for p[:n] (its bytes_hash h), written in the thread's block `c`, unless it is
       held, being written, or there is no room. */
    void put(SqltokSharedCursor& c, const uint8_t* p, int64_t n, uint64_t h, const int32_t* ids, int64_t count) {
        uint64_t tag = h | 2, j = h & mask, size = padded(n) + 4 * (uint64_t)count;
        if (size > block || count > 0xFFFF || full.load(std::memory_order_relaxed)) return;
        for (int k = 0; k < PROBES; k++, j = (j + 1) & mask) {
            uint64_t t = tags[j].load(std::memory_order_acquire);
            if (t == tag && holds(j, p, n)) return;
            uint64_t empty = 0;
            if (t != 0 || !tags[j].compare_exchange_strong(empty, BUSY, std::memory_order_acquire)) continue;
            if (c.at + size > c.end) {
                uint64_t at = used.fetch_add(block, std::memory_order_relaxed);
                if (at + block > arena_size || at > 0xFFFFFFFFull) {  /* used up: the slot is given back */
                    full.store(true, std::memory_order_relaxed);
                    tags[j].store(0, std::memory_order_release);
                    return;
                }
                c.at = at;
                c.end = at + block;
            }
            std::memcpy(arena.get() + c.at, p, (size_t)n);
            std::memcpy(arena.get() + c.at + padded(n), ids, 4 * (size_t)count);
            info[j] = c.at << 32 | (uint64_t)n << 16 | (uint64_t)count;
            c.at += size;
            tags[j].store(tag, std::memory_order_release);
            return;
        }
    }
};

#endif
