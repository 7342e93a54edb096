"""Characters to generate text from where it is compared with HF `tokenizers`' normalizers, whose
Unicode data is older than Python's (14.0) and sqltok's (17.0): those Python has assigned, less the
ones HF's tables do not know yet, found by asking HF (combining marks it does not reorder, and
characters whose decompositions it lacks). sqltok follows Unicode 17 there, as `unicodedata2` does."""
from __future__ import annotations

import unicodedata

from hypothesis import strategies as st
from tokenizers import normalizers


def _unknown_to_hf() -> frozenset[str]:
    nfd, nfkd = normalizers.NFD(), normalizers.NFKD()
    unknown = set()
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        klass = unicodedata.combining(c)
        if klass > 1:  # a mark of class 1 after it moves before it, where HF knows its class
            known = nfd.normalize_str(c + "\u0334") != c + "\u0334"
        elif klass == 1:  # it moves before a mark of class 230
            known = nfd.normalize_str("\u0301" + c) != "\u0301" + c
        else:
            known = not unicodedata.decomposition(c) or (
                nfd.normalize_str(c) == unicodedata.normalize("NFD", c)
                and nfkd.normalize_str(c) == unicodedata.normalize("NFKD", c))
        if not known:
            unknown.add(c)
    return frozenset(unknown)


_UNKNOWN = _unknown_to_hf()
HF_ASSIGNED = st.characters(codec="utf-8").filter(lambda c: unicodedata.category(c) != "Cn" and c not in _UNKNOWN)
