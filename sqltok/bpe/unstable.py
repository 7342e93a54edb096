"""tiktoken's `encode_with_unstable` for byte-level BPE tokenizers: the tokens of a text that text
appended to it cannot change, and every token sequence the rest may start with.

The semantics are tiktoken's (`CoreBPE::_encode_unstable_native`): the tokens of the text's last
pretoken are unstable (with the whitespace-only tokens before them when the first of them is
whitespace, since a split there can disappear); the completions are every token that starts with
the unstable bytes, and, for every way of cutting the unstable bytes in two, every token that
starts with the second part, appended to the first part and encoded again (as text when that is
UTF-8, else merged as one piece), cut once it covers the unstable bytes; and, when the unstable
bytes end in whitespace, the two parts around that last character merged apart.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable

from sqltok.white_space import WHITE_SPACE

_SPACE = frozenset(b" \n\t")


def unstable_completions(tokens: list[int], last_piece: int, token_bytes: Callable[[int], bytes],
                         sorted_tokens: tuple[list[bytes], list[int]],
                         encode_texts: Callable[[list[str]], list[list[int]]],
                         merge_bytes: Callable[[bytes], list[int]]) -> tuple[list[int], list[list[int]]]:
    """(stable tokens, completions) of a text whose ids are `tokens`, the last `last_piece` of them
    from its last pretoken (0 when it ends with a special token). `sorted_tokens`: the bytes of the
    non-special tokens, sorted, and their ids; `encode_texts`: `encode_ordinary` of each text;
    `merge_bytes`: the ids of bytes merged as one piece."""
    if last_piece == 0:
        return tokens, []
    vocab, ids_of = sorted_tokens

    def starting_with(prefix: bytes) -> range:
        """The positions in `vocab` of the tokens that start with `prefix`: from `prefix` up to the
        first bytes after all that start with it."""
        stem = prefix.rstrip(b"\xff")
        lo = bisect.bisect_left(vocab, prefix)
        if not stem:
            return range(lo, len(vocab))
        return range(lo, bisect.bisect_left(vocab, stem[:-1] + bytes([stem[-1] + 1]), lo))

    def all_space(t: int) -> bool:
        return all(b in _SPACE for b in token_bytes(t))

    if all_space(tokens[-last_piece]):
        while last_piece < len(tokens) and all_space(tokens[-last_piece - 1]):
            last_piece += 1
    unstable = b"".join(token_bytes(t) for t in tokens[-last_piece:])
    stable = tokens[:-last_piece]
    completions: set[tuple[int, ...]] = {(ids_of[k],) for k in starting_with(unstable)}

    texts, merged = [], []
    for i in range(1, len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        for k in starting_with(suffix):
            possibility = prefix + vocab[k]
            try:
                texts.append(possibility.decode("utf-8"))
            except UnicodeDecodeError:
                merged.append(merge_bytes(possibility))
    for ids in [*encode_texts(texts), *merged]:
        seq, covered = [], 0
        for t in ids:
            seq.append(t)
            covered += len(token_bytes(t))
            if covered >= len(unstable):
                break
        completions.add(tuple(seq))

    if len(unstable) > 1:
        head, last = _split_last_char(unstable)
        if head and last.decode("utf-8", "replace") in WHITE_SPACE:
            completions.add(tuple(merge_bytes(head) + merge_bytes(last)))
    return stable, list(map(list, completions))


def _split_last_char(data: bytes) -> tuple[bytes, bytes]:
    """`data` cut before its last UTF-8 character (or its last byte, when that is not one)."""
    for k in range(1, min(4, len(data)) + 1):
        tail = data[-k:]
        try:
            tail.decode("utf-8")
        except UnicodeDecodeError:
            continue
        return data[:-k], tail
    return data[:-1], data[-1:]
