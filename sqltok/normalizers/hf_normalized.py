"""HF `tokenizers`' `NormalizedString` as far as offsets need it: a normalized text whose every
character carries the (start, end) UTF-8 byte range of the original text it is aligned with, and
the operations that change it, each with HF's own alignment rules (`normalizer.rs`), quirks
included, so that offsets computed from it equal HF's `Encoding.offsets`.

HF's alignments are per byte of the normalized text, but every byte of a character gets the same
one, so one per character is the same. HF keeps them relative to the piece of the original a slice
covers and adds that piece's start back at the end; here they are absolute from the start.

`transform` is HF's `transform_range` over a list of (character, change): change 0 replaces the
next input character (and takes its alignment), -n replaces it and removes the n after it, +1
inserts a character, which takes the alignment of the input character before it (none at the
start). The other operations are HF's in terms of it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqltok.white_space import WHITE_SPACE

Change = tuple[str, int]


class AlignmentError(ValueError):
    """A step whose alignment HF computes by reading out of range (Rust would panic there)."""


@dataclass
class Normalized:
    """The normalized text of one piece of the original (`chars`), each character's original byte
    range (`align`), and the original byte range the piece covers (`original`)."""

    chars: list[str]
    align: list[tuple[int, int]]
    original: tuple[int, int]

    @classmethod
    def of(cls, text: str, start: int) -> Normalized:
        """`text`, not normalized yet, found at byte `start` of the original."""
        chars, align, at = list(text), [], start
        for c in chars:
            n = len(c.encode())
            align.append((at, at + n))
            at += n
        return cls(chars, align, (start, at))

    @property
    def text(self) -> str:
        return "".join(self.chars)

    def transform_range(self, start: int, end: int, dest: Iterable[Change], initial_offset: int) -> None:
        """The characters [start, end) replaced by `dest` (HF's `transform_range`), the first
        `initial_offset` of them removed before it."""
        replaced = end - start
        used = min(initial_offset, replaced)
        chars, align = [], []
        for c, change in dest:
            at = start + used
            if change > 0:
                a = self.align[at - 1] if at >= 1 else (self.original[0], self.original[0])
            else:
                if at >= len(self.align):
                    raise AlignmentError("a replacement past the end of the text")
                a = self.align[at]
                used = min(used + 1, replaced)
            if change < 0:
                used = min(used - change, replaced)
            chars.append(c)
            align.append(a)
        self.chars[start:end] = chars
        self.align[start:end] = align

    def transform(self, dest: Iterable[Change], initial_offset: int = 0) -> None:
        """HF's `transform`: `transform_range` over the characters the whole original maps to."""
        span = self._original_span()
        if span is not None:
            self.transform_range(*span, dest, initial_offset)

    def _original_span(self) -> tuple[int, int] | None:
        """HF's `convert_offsets(Range::Original(..))`: the characters aligned within the whole
        original range (the first with a non-empty alignment that starts in it, to the last before
        one that ends beyond it)."""
        lo, hi = self.original
        if lo == hi:
            return 0, 0
        first = last = None
        for i, (a, b) in enumerate(self.align):
            if hi < b:
                break
            if first is None and lo <= a and a != b:
                first = i
            last = i + 1
        if first is not None and last is not None:
            return first, last
        if first is not None or last is not None:
            return (first, first) if last is None else (last, last)
        return None

    # -- normalizer operations ---------------------------------------------------------------------
    def replace(self, matches: Iterable[tuple[int, int]], content: str) -> None:
        """HF's `replace`: each match (character range, found all at once in the text before) by
        `content`, whose characters take the alignment of the last character up to the match's end."""
        chars, align, done = [], [], 0
        for s, e in matches:
            chars += self.chars[done:s]
            align += self.align[done:s]
            a = self.align[e - 1] if e >= 1 else (self.original[0], self.original[0])
            chars += list(content)
            align += [a] * len(content)
            done = e
        self.chars = chars + self.chars[done:]
        self.align = align + self.align[done:]

    def prepend(self, prefix: str) -> None:
        """HF's `prepend`: `prefix` before the text (when it is not empty), aligned with its first
        character."""
        if self.chars:
            dest = [(c, int(i != 0)) for i, c in enumerate(prefix)] + [(self.chars[0], 1)]
            self.transform_range(0, 1, dest, 0)

    def filter(self, keep: Callable[[str], bool]) -> None:
        """HF's `filter`: the characters `keep` refuses removed (each kept one takes on the removed
        ones after it)."""
        dest: list[Change] = []
        removed = removed_start = 0
        last = None
        for c in self.chars:
            if keep(c):
                if last is None:
                    removed_start = removed
                else:
                    dest.append((last, -removed))
                last, removed = c, 0
            else:
                removed += 1
        if last is not None:
            dest.append((last, -removed))
        self.transform(dest, removed_start)

    def strip(self, left: bool, right: bool) -> None:
        """HF's `lrstrip`: leading and/or trailing white space removed (the removal of the trailing
        run is put on the character before it only when that is the character at the text's UTF-8
        length minus the run minus one, as HF compares a character index with a byte length)."""
        n = len(self.chars)
        lead = _run(self.chars, left)
        trail = _run(self.chars[::-1], right)
        if not (lead or trail):
            return
        size = len(self.text.encode())
        dest = [(c, -trail if i == size - trail - 1 else 0) for i, c in enumerate(self.chars)
                if lead <= i < n - trail]
        self.transform(dest, lead)

    # -- pre-tokenizer operations ------------------------------------------------------------------
    def slice(self, start: int, end: int) -> Normalized:
        """HF's `slice` of the characters [start, end)."""
        align = self.align[start:end]
        original = (align[0][0], align[-1][1]) if align else (self.original[0], self.original[0])
        return Normalized(self.chars[start:end], align, original)

    def split(self, matches: list[tuple[int, int]], behavior: str) -> list[Normalized]:
        """HF's `split` at `matches` (character ranges, in order) with a delimiter behavior
        ("removed", "isolated", "merged_with_previous", "merged_with_next"); empty parts dropped,
        as HF's `PreTokenizedString` drops them."""
        parts = _parts(matches, len(self.chars))
        if behavior == "isolated":
            kept = [span for span, _ in parts]
        elif behavior == "removed":
            kept = [span for span, is_match in parts if not is_match]
        elif behavior == "merged_with_previous":
            kept = _merged(parts)
        elif behavior == "merged_with_next":
            n = len(self.chars)
            kept = [(n - e, n - s) for s, e in _merged([((n - e, n - s), m) for (s, e), m in reversed(parts)])][::-1]
        else:
            raise ValueError(f"no split behavior {behavior!r}")
        return [self.slice(s, e) for s, e in kept if e > s]


def _run(chars: list[str], on: bool) -> int:
    """How many of `chars` from the start are white space (0 when not `on`)."""
    n = 0
    while on and n < len(chars) and chars[n] in WHITE_SPACE:
        n += 1
    return n


def _parts(matches: list[tuple[int, int]], n: int) -> list[tuple[tuple[int, int], bool]]:
    """HF's `find_matches`: the text as (range, is_match) parts, the gaps between matches too."""
    if n == 0:
        return [((0, 0), False)]
    parts, done = [], 0
    for s, e in matches:
        if s != done:
            parts.append(((done, s), False))
        parts.append(((s, e), True))
        done = e
    if done != n:
        parts.append(((done, n), False))
    return parts


def _merged(parts: list[tuple[tuple[int, int], bool]]) -> list[tuple[int, int]]:
    """MergedWithPrevious: each match joined to the part before it, unless that is a match too."""
    out: list[tuple[int, int]] = []
    previous = False
    for (s, e), is_match in parts:
        if is_match and not previous and out:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
        previous = is_match
    return out
