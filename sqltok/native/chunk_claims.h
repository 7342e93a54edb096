/* Chunks of rows shared among threads, each claimed exactly once (see parallel_rows.pxd). */
#ifndef SQLTOK_CHUNK_CLAIMS_H
#define SQLTOK_CHUNK_CLAIMS_H

#include <atomic>
#include <memory>

struct SqltokChunkClaims {
    std::unique_ptr<std::atomic<bool>[]> taken;

    void reset(int chunks) {
        taken.reset(new std::atomic<bool>[chunks]);
        for (int c = 0; c < chunks; c++) taken[c].store(false, std::memory_order_relaxed);
    }

    /* True for the one thread that claims chunk c first. */
    bool claim(int c) { return !taken[c].exchange(true, std::memory_order_acq_rel); }
};

#endif
