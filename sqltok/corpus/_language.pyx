# cython: language_level=3
"""The naive Bayes language scorer of py3langid (its byte n-gram DFA and its shipped weights) over Arrow
string arrays, rows split over threads with the GIL released.

For each document: walk the DFA over its UTF-8 bytes, count the n-gram features it emits, score
every class as `pc[c] + sum_f log1p(count_f) * ptc[f, c]`, temper by sqrt(bytes), softmax. This is
py3langid's `classify` with `norm_probs=True`, step for step; `language.py` prepares the text
(NFC, lowercase when all cased letters are upper) as py3langid does.
"""
from libc.math cimport expf, log1pf, sqrtf
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector

import numpy as np

from sqltok.native.arrow_buffers cimport BinaryView, view_end, view_start, view_valid
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run


cdef struct Model:
    const uint32_t* nextmove    # rows of 256 next states, shared by states (row_of)
    const uint16_t* row_of      # state -> its row of nextmove
    const int32_t* output       # state -> the feature it emits, or -1
    const float* ptc            # features x classes, row-major
    const float* pc             # per class
    const int32_t* alias        # per class: the class it folds into, or -1
    int classes
    int features


cdef void _score_rows(const Model& m, const BinaryView& v, int64_t first, int64_t last,
                      int16_t* best, float* confidence) noexcept nogil:
    cdef vector[int32_t] counts = vector[int32_t](m.features, 0)
    cdef vector[int32_t] touched
    cdef vector[float] scores = vector[float](m.classes, 0)
    cdef int64_t r, i, s, e
    cdef uint32_t state
    cdef int32_t f
    cdef int c, top
    cdef float w, mx, total, temper
    cdef const float* row
    for r in range(first, last):
        best[r], confidence[r] = -1, 0
        if not view_valid(v, r):
            continue
        s, e = view_start(v, r), view_end(v, r)
        state = 0
        touched.clear()
        for i in range(s, e):
            state = m.nextmove[(<uint32_t>m.row_of[state] << 8) + v.values[i]]
            f = m.output[state]
            if f >= 0:
                if counts[f] == 0:
                    touched.push_back(f)
                counts[f] += 1
        if touched.size() == 0:
            continue
        for c in range(m.classes):
            scores[c] = 0
        for i in range(<int64_t>touched.size()):
            f = touched[i]
            w = log1pf(<float>counts[f])
            counts[f] = 0
            row = m.ptc + <int64_t>f * m.classes
            for c in range(m.classes):
                scores[c] += w * row[c]
        temper = 1.0 / sqrtf(<float>(e - s))
        mx = -3.0e38
        for c in range(m.classes):
            scores[c] = (scores[c] + m.pc[c]) * temper
            if scores[c] > mx:
                mx = scores[c]
        total = 0
        for c in range(m.classes):
            scores[c] = expf(scores[c] - mx)
            total += scores[c]
        for c in range(m.classes):
            if m.alias[c] >= 0:
                scores[m.alias[c]] += scores[c]
                scores[c] = 0
        top = 0
        for c in range(m.classes):
            if scores[c] > scores[top]:
                top = c
        best[r], confidence[r] = top, scores[top] / total


cdef struct ScoreTask:
    const Model* m
    int16_t* best
    float* confidence


cdef int64_t _score_work(void* task, const RowRun& run, int thread, int part, int64_t first,
                         int64_t last) noexcept nogil:
    cdef ScoreTask* t = <ScoreTask*>task
    _score_rows(t.m[0], run.view, first, last, t.best, t.confidence)
    return -1


def score_arrow(texts, nextmove, row_of, output, ptc, pc, alias, int threads=1):
    """(class index per row as int16, -1 for NULL rows and rows with no feature; its probability as
    float32) for the UTF-8 strings of a pyarrow array. The model arrays are contiguous numpy arrays
    (uint32, uint16, int32, float32 features x classes, float32, int32)."""
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef const BinaryView* v = &run.view
    cdef const uint32_t[::1] nm = nextmove
    cdef const uint16_t[::1] ro = row_of
    cdef const int32_t[::1] out = output
    cdef const float[:, ::1] table = ptc
    cdef const float[::1] prior = pc
    cdef const int32_t[::1] al = alias
    cdef Model m
    m.nextmove, m.row_of, m.output = &nm[0], &ro[0], &out[0]
    m.ptc, m.pc, m.alias = &table[0, 0], &prior[0], &al[0]
    m.features, m.classes = table.shape[0], table.shape[1]
    best = np.empty(v.length, np.int16)
    confidence = np.empty(v.length, np.float32)
    cdef int16_t[::1] b = best
    cdef float[::1] conf = confidence
    cdef ScoreTask task
    if v.length:
        task.m, task.best, task.confidence = &m, &b[0], &conf[0]
        rows_run(run, _score_work, NULL, &task)
    return best, confidence
