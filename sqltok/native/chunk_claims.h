/* Chunks of rows shared among threads, each claimed exactly once, and when they are complete (see
   parallel_rows.pxd). */
#ifndef SQLTOK_CHUNK_CLAIMS_H
#define SQLTOK_CHUNK_CLAIMS_H

#include <atomic>
#include <memory>

struct SqltokChunkClaims {
    std::unique_ptr<std::atomic<bool>[]> taken;
    std::unique_ptr<std::atomic<bool>[]> done;

    void reset(int chunks) {
        taken.reset(new std::atomic<bool>[chunks]);
        done.reset(new std::atomic<bool>[chunks]);
        for (int c = 0; c < chunks; c++) {
            taken[c].store(false, std::memory_order_relaxed);
            done[c].store(false, std::memory_order_relaxed);
        }
    }

    /* True for the one thread that claims chunk c first. */
    bool claim(int c) { return !taken[c].exchange(true, std::memory_order_acq_rel); }

    /* Chunk c's output is complete: what its thread wrote is seen by a thread that sees `finished`. */
    void finish(int c) { done[c].store(true, std::memory_order_release); }
    bool finished(int c) const { return done[c].load(std::memory_order_acquire); }
};

#endif
