# cython: language_level=3
"""The rows of an Arrow string array shared among threads with the GIL released: the one driver of
the BPE encoder, WordPiece, the normalizers and supermerge candidates.

A call gets at most the threads asked for, and one more per 64 rows (`row_threads`). Its rows are cut
into chunks of about equal bytes, not rows (`row_split`), so that no thread waits on one with longer
texts. Thread t owns a run of chunks, output part t, and takes them front to back, so that its output
stays in one piece. With take-over (the encoder: 16 chunks a thread), a thread done with its own run
takes the chunks left in the other runs from their back, chunk c into part `threads + c`, so that a
thread the machine slows down hands its last chunks to the others; every chunk is claimed exactly
once. A call that asks for take-over but gets one thread, on the main thread and with at least
CHECKED_BYTES of text, still cuts its run into chunks, so that Ctrl-C is looked for between them;
other calls without take-over have one chunk a run. With `chunk_parts` (take-over only) every chunk
goes to a part of its own, so that a caller can use a chunk's rows as soon as it is `finished`, while
the threads work on: an `after` hook runs on each thread after each of its chunks. With take-over
asked for, a caller on the main thread checks for Ctrl-C before each of its chunks after the first;
a pending KeyboardInterrupt claims every chunk left, so the threads stop after the chunks they hold
(each whole), and `rows_run` raises it. A task says what to do with a range of rows (`RowsWork`); the
driver gives back the parts in row order and the first row that failed.
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start


cdef extern from "Python.h":
    int signals_raised "PyErr_CheckSignals" ()    # (its exception left set: no `except`)


cdef extern from "chunk_claims.h":
    cdef cppclass ChunkClaims "SqltokChunkClaims":
        void reset(int chunks) except +
        bint claim(int chunk) noexcept nogil
        void finish(int chunk) noexcept nogil
        bint finished(int chunk) noexcept nogil


cdef enum:
    CHUNKS_PER_THREAD = 16      # with take-over
    ROWS_PER_THREAD = 64        # a call gets one more thread per this many rows
    CHECKED_BYTES = 1 << 20     # one thread: chunks (and Ctrl-C checks between them) from this much text


cdef cppclass RowRun


# What a task does (`task`: its own state): set up part `part` before thread `thread` puts its first
# rows there (for its own part: all rows first..last-1 of its run, whether it takes them or not; NULL:
# nothing to set up), and put rows first..last-1 in part `part`, returning the row that failed or -1.
ctypedef void (*RowsOpen)(void* task, const RowRun& run, int thread, int part, int64_t first,
                          int64_t last) noexcept nogil
ctypedef int64_t (*RowsWork)(void* task, const RowRun& run, int thread, int part, int64_t first,
                             int64_t last) noexcept nogil
# What thread `thread` does after its chunk `chunk` is finished (`RowRun.after`).
ctypedef void (*RowsAfter)(void* task, const RowRun& run, int thread, int chunk) noexcept nogil


cdef cppclass RowRun:           # one call's rows and how they are shared out
    BinaryView view
    int threads
    int chunks
    bint take_over
    int parts                   # outputs: one per thread, and with take-over one per chunk after them
    bint chunk_parts            # every chunk in its own part (threads + chunk), a thread's own ones too
    RowsAfter after             # run by a thread after each of its chunks (NULL: nothing)
    ChunkClaims claims
    vector[int] until           # per thread: the first chunk of its own run it did not take
    vector[int64_t] failed      # per part: the row that failed, or -1
    vector[int] thread_ok       # per thread: 1 when it finished without a failure
    vector[int] order           # the parts that hold rows, in row order
    int64_t error_row           # the first row that failed, or -1
    int error_part              # the part that holds it
    bint check_signals          # the caller's thread looks for Ctrl-C between chunks (see `_may_claim`)
    bint interrupted            # a signal handler raised (KeyboardInterrupt): its exception is set


cdef inline int row_threads(int threads, int64_t rows) noexcept nogil:
    """Threads to split `rows` rows over: at most `threads`, and one more per ROWS_PER_THREAD rows."""
    return max(1, min(threads, <int>(rows // ROWS_PER_THREAD) + 1))


cdef inline int64_t row_split(const BinaryView& v, int k, int parts) noexcept nogil:
    """The first row of part k of `parts` (k = parts: the row count): parts of about equal bytes."""
    if k <= 0:
        return 0
    if k >= parts or v.length == 0:
        return v.length
    cdef int64_t first = view_start(v, 0)
    cdef int64_t target = first + (view_end(v, v.length - 1) - first) * k // parts
    cdef int64_t lo = 0, hi = v.length, mid
    while lo < hi:  # the first row that starts at or after the target
        mid = (lo + hi) >> 1
        if view_start(v, mid) < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline int owned_first(const RowRun& run, int t) noexcept nogil:
    """The first chunk of thread t's run (t = threads: the chunk count)."""
    return t * run.chunks // run.threads


cdef inline int rows_open(RowRun& run, object texts, list keep_alive, int threads, bint take_over,
                          bint chunk_parts=False) except -1:
    """Ready `run` for the rows of the (large_)string/binary array `texts` (its buffers go to
    `keep_alive`) and at most `threads` threads; `chunk_parts`: see the module's docstring."""
    run.view = binary_view(texts, keep_alive)
    run.threads = row_threads(threads, run.view.length)
    run.take_over = take_over and run.threads > 1
    run.chunk_parts = chunk_parts and run.take_over
    run.after = NULL
    run.check_signals = take_over and (run.take_over or _view_bytes(run.view) >= CHECKED_BYTES) and on_main_thread()
    run.chunks = run.threads * CHUNKS_PER_THREAD if run.check_signals or run.take_over else run.threads
    run.parts = run.threads + (run.chunks if run.take_over else 0)
    run.claims.reset(run.chunks)
    run.until.assign(run.threads, 0)
    run.failed.assign(run.parts, -1)
    run.thread_ok.assign(run.threads, 0)
    run.order.clear()
    run.error_row = -1
    run.error_part = -1
    run.interrupted = False
    return 0


cdef inline int64_t _view_bytes(const BinaryView& v) noexcept nogil:
    return view_end(v, v.length - 1) - view_start(v, 0) if v.length > 0 else 0


cdef inline bint on_main_thread():
    """Whether the caller runs on the main thread, the only one Python runs signal handlers on (on
    another, checking would only wait for the GIL)."""
    import threading
    return threading.current_thread() is threading.main_thread()


cdef inline bint _interrupted(RowRun& run) noexcept with gil:
    """Whether a signal handler raised (Ctrl-C) on the caller's thread; if so, every chunk is claimed
    so that no thread starts another, and the handler's exception stays set for `rows_run`."""
    cdef int c
    if signals_raised():
        run.interrupted = True
        for c in range(run.chunks):
            run.claims.claim(c)
    return run.interrupted


cdef inline bint _may_claim(RowRun& run, int t, int c) noexcept nogil:
    """Whether thread t gets chunk c: the caller's thread (t = 0) first checks for Ctrl-C, on the
    main thread (`check_signals`) and after its first chunk."""
    if t == 0 and run.check_signals and c != owned_first(run, 0) and _interrupted(run):
        return False
    return run.claims.claim(c)


cdef inline void _chunk_done(RowRun& run, void* task, int t, int c) noexcept nogil:
    run.claims.finish(c)
    if run.after != NULL:
        run.after(task, run, t, c)


cdef inline void _rows_share(RowRun& run, RowsWork work, RowsOpen open, void* task, int t) noexcept nogil:
    """Thread t's share: the chunks of its own run, front to back, then (with take-over) the chunks
    left in the other runs, from their back."""
    cdef int c = owned_first(run, t), end = owned_first(run, t + 1), d, u
    cdef int64_t first, last, bad = -1
    if open != NULL:
        open(task, run, t, t, row_split(run.view, c, run.chunks), row_split(run.view, end, run.chunks))
    while c < end and _may_claim(run, t, c):
        first = row_split(run.view, c, run.chunks)
        last = row_split(run.view, c + 1, run.chunks)
        if run.chunk_parts:
            if open != NULL:
                open(task, run, t, run.threads + c, first, last)
            bad = work(task, run, t, run.threads + c, first, last)
            run.failed[run.threads + c] = bad
        else:
            bad = work(task, run, t, t, first, last)
        _chunk_done(run, task, t, c)
        c += 1
        if bad >= 0:
            break
    run.until[t] = c
    if not run.chunk_parts:
        run.failed[t] = bad
    if bad >= 0:
        return
    if run.take_over:
        for d in range(1, run.threads):
            u = (t + d) % run.threads
            c = owned_first(run, u + 1) - 1
            while c >= owned_first(run, u) and _may_claim(run, t, c):
                first = row_split(run.view, c, run.chunks)
                last = row_split(run.view, c + 1, run.chunks)
                if open != NULL:
                    open(task, run, t, run.threads + c, first, last)
                bad = work(task, run, t, run.threads + c, first, last)
                run.failed[run.threads + c] = bad
                _chunk_done(run, task, t, c)
                if bad >= 0:
                    return
                c -= 1
    run.thread_ok[t] = 1


cdef inline int rows_run(RowRun& run, RowsWork work, RowsOpen open, void* task) except -1:
    """Run `task` over the rows of `run` (opened by `rows_open`), the GIL released, then put the
    parts in row order (`run.order`) and find the first row that failed (`run.error_row`). Raises
    KeyboardInterrupt (or what a signal handler raised) when Ctrl-C stopped the run."""
    cdef int t, c
    cdef size_t k
    for t in prange(run.threads, nogil=True, num_threads=run.threads, schedule="static"):
        _rows_share(run, work, open, task, t)
    if run.interrupted:
        return -1
    if run.chunk_parts:
        for c in range(run.chunks):
            run.order.push_back(run.threads + c)
    for t in range(run.threads if not run.chunk_parts else 0):
        run.order.push_back(t)
        if run.take_over:  # the chunks of its run that others took (a failed run may leave some)
            for c in range(run.until[t], owned_first(run, t + 1)):
                run.order.push_back(run.threads + c)
    for k in range(run.order.size()):
        if run.failed[run.order[k]] >= 0:
            run.error_row = run.failed[run.order[k]]
            run.error_part = run.order[k]
            break
    return 0
