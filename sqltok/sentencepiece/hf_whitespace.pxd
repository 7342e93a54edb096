# cython: language_level=3
"""HF `tokenizers`' whitespace steps after the Precompiled normalizer, as `transformers`' T5, XLM-R,
ALBERT and XLNet converters write them, applied to the charsmap's output to give the model's input
(sentencepiece's own whitespace options are off in this mode):

* `strip_right`: Strip(right): trailing Unicode White_Space characters dropped (Rust's
  `char::is_whitespace`, which is more than sentencepiece's spaces);
* `collapse`: Replace(Regex(" {2,}"), " " or "▁"): a run of spaces becomes one (escaped next);
* `split_words`: WhitespaceSplit before Metaspace: every run of White_Space characters separates
  words and the runs at either end are dropped; each word is one pre-token;
* Metaspace: each space becomes "▁", and with `prefix` ("always") a "▁" goes before each pre-token
  that does not start with one (the whole text, or each word after WhitespaceSplit).

What HF encodes pre-token by pre-token the encoder runs over the joined text, which gives the same
ids when no piece holds a "▁" after its start (`hf_read` checks it).
"""
from libc.stdint cimport int64_t, uint8_t
from libcpp.string cimport string


cdef struct HfWhitespace:
    bint active                 # this mode replaces sentencepiece's whitespace options
    bint strip_right
    bint collapse
    bint split_words
    bint prefix


cdef inline int64_t white_space_len(const uint8_t* p, int64_t n) noexcept nogil:
    """The UTF-8 length of the White_Space character at p (Unicode's property, as Rust's
    `char::is_whitespace`), 0 when it is none."""
    if p[0] == 0x20 or 0x09 <= p[0] <= 0x0D:
        return 1
    if n >= 2 and p[0] == 0xC2 and (p[1] == 0x85 or p[1] == 0xA0):
        return 2
    if n < 3:
        return 0
    if p[0] == 0xE1 and p[1] == 0x9A and p[2] == 0x80:                      # U+1680
        return 3
    if p[0] == 0xE2 and p[1] == 0x80 and (p[2] <= 0x8A or p[2] == 0xA8 or p[2] == 0xA9 or p[2] == 0xAF):
        return 3 if p[2] >= 0x80 else 0                                      # U+2000..200A, 2028, 2029, 202F
    if p[0] == 0xE2 and p[1] == 0x81 and p[2] == 0x9F:                      # U+205F
        return 3
    if p[0] == 0xE3 and p[1] == 0x80 and p[2] == 0x80:                      # U+3000
        return 3
    return 0


cdef inline bint _starts_with_space_mark(const uint8_t* p, int64_t n) noexcept nogil:
    return n >= 3 and p[0] == 0xE2 and p[1] == 0x96 and p[2] == 0x81


cdef inline void _escaped(const uint8_t* p, int64_t n, bint collapse, string& out) noexcept nogil:
    """p[:n] with each space as "▁" (a run of them as one with `collapse`)."""
    cdef int64_t i = 0
    while i < n:
        if p[i] == 0x20:
            out.append(b"\xe2\x96\x81", 3)
            i += 1
            while collapse and i < n and p[i] == 0x20:
                i += 1
        else:
            out.push_back(<char>p[i])
            i += 1


cdef inline void hf_whitespace(const HfWhitespace* w, const uint8_t* p, int64_t n, string& out) noexcept nogil:
    """The model's input from the charsmap's output p[:n]."""
    cdef int64_t end = n, i = 0, start, k
    out.clear()
    if w.split_words:
        while i < n:
            k = white_space_len(p + i, n - i)
            if k:
                i += k
                continue
            start = i
            while i < n and white_space_len(p + i, n - i) == 0:
                i += 1
            if w.prefix and not _starts_with_space_mark(p + start, i - start):
                out.append(b"\xe2\x96\x81", 3)
            out.append(<const char*>p + start, i - start)
        return
    if w.strip_right:
        while end > 0:
            # the last character: back over continuation bytes
            k = end - 1
            while k > 0 and (p[k] & 0xC0) == 0x80:
                k -= 1
            if white_space_len(p + k, end - k) != end - k:
                break
            end = k
    if end == 0:
        return
    if w.prefix and not (p[0] == 0x20 or _starts_with_space_mark(p, end)):
        out.append(b"\xe2\x96\x81", 3)
    _escaped(p, end, w.collapse, out)
