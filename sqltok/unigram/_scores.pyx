# cython: language_level=3
"""The Unigram trainer's score arithmetic, in SentencePiece's mix of float32 and double and with the
C library's log, so that every score rounds as the C++ trainer's does: initial log shares, the
digamma M step, and the loss of removing each piece."""
from libc.math cimport log
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

import numpy as np


cdef double _digamma(double x) noexcept nogil:
    cdef double result = 0.0, xx, xx2, xx4
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 - \
        (127.0 / 30720.0) * xx4 * xx4
    return result


def log_prob(values):
    """float32 log(value) - log(sum) of float32 values, the sum and its log in double (the seeds)."""
    cdef const float[:] v = np.ascontiguousarray(values, dtype=np.float32)
    out_arr = np.zeros(v.shape[0], dtype=np.float32)
    cdef float[:] out = out_arr
    cdef double total = 0, logsum
    cdef int64_t i
    for i in range(v.shape[0]):
        total += v[i]
    logsum = log(total)
    for i in range(v.shape[0]):
        out[i] = <float>(log(<double>v[i]) - logsum)
    return out_arr


def m_step(expected):
    """(keep, scores): the pieces expected at least 0.5 times, scored digamma(expected) -
    digamma(sum of the kept expectations) (the Bayesian EM's sparse prior)."""
    cdef const float[:] e = np.ascontiguousarray(expected, dtype=np.float32)
    keep_arr = np.zeros(e.shape[0], dtype=np.bool_)
    cdef uint8_t[:] keep = keep_arr.view(np.uint8)
    cdef float total = 0, logsum
    cdef int64_t i, k = 0
    for i in range(e.shape[0]):
        if e[i] >= <float>0.5:
            keep[i] = 1
            total += e[i]
            k += 1
    logsum = <float>_digamma(total)
    out_arr = np.zeros(k, dtype=np.float32)
    cdef float[:] out = out_arr
    k = 0
    for i in range(e.shape[0]):
        if keep[i]:
            out[k] = <float>(_digamma(e[i]) - logsum)
            k += 1
    return keep_arr, out_arr


def prune_losses(freq_arr, keep_arr, offsets_arr, alternatives_arr):
    """(status, loss) of each piece: status 0 (remove: never on a best path, or its best path splits
    it), 1 (keep: no alternative segmentation), 2 (a candidate, with the likelihood it costs:
    its share of the tokens x (its log probability - its alternatives' after removal))."""
    cdef const float[:] freq = np.ascontiguousarray(freq_arr, dtype=np.float32)
    cdef const uint8_t[:] keep = np.ascontiguousarray(keep_arr, dtype=np.uint8)
    cdef const int32_t[:] offsets = np.ascontiguousarray(offsets_arr, dtype=np.int32)
    cdef const int32_t[:] alt = np.ascontiguousarray(alternatives_arr, dtype=np.int32)
    cdef int64_t n = freq.shape[0], i, j
    status_arr = np.zeros(n, dtype=np.int8)
    loss_arr = np.zeros(n, dtype=np.float32)
    cdef int8_t[:] status = status_arr
    cdef float[:] loss = loss_arr
    cdef double dsum = 0.0
    cdef float total, logsum, f, logprob_sp, logsum_alt, logprob_alt
    for i in range(n):
        dsum += freq[i]
    total = <float>dsum
    logsum = <float>log(<double>total)
    for i in range(n):
        if freq[i] == 0 or not keep[i]:
            continue
        if offsets[i + 1] == offsets[i]:
            status[i] = 1
            continue
        f = freq[i] / total
        logprob_sp = <float>(log(<double>freq[i]) - logsum)
        logsum_alt = <float>log(<double>(total + freq[i] * <float>(offsets[i + 1] - offsets[i] - 1)))
        logprob_alt = 0
        for j in range(offsets[i], offsets[i + 1]):
            logprob_alt = <float>(logprob_alt + (log(<double>(freq[alt[j]] + freq[i])) - logsum_alt))
        status[i] = 2
        loss[i] = f * (logprob_sp - logprob_alt)
    return status_arr, loss_arr
