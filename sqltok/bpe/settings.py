"""The reference's training settings: the GPT-4o pattern, the script-specific pattern, and the settings
line a `.model` file carries (kept verbatim so that written files match the reference byte for byte)."""
from __future__ import annotations

from sqltok.pretokenizer import patterns
from sqltok.errors import SqltokError

#: Scripts whose runs use the script-specific pattern (sorted, as the reference writes them).
SCRIPT_SPECIFIC_SCRIPTS = ("Han", "Hiragana", "Katakana", "Khmer", "Lao", "Myanmar", "Thai")

#: Special tokens a training run registers by default, after the vocabulary.
DEFAULT_SPECIAL_TOKENS = ("<|endoftext|>",)

MIN_VOCAB_SIZE = 243
MAX_VOCAB_SIZE = 1 << 24


def special_token_ids(vocab_size: int, special_tokens) -> dict[str, int]:
    """The ids a trained model gives `special_tokens`: in order, after its `vocab_size` tokens."""
    return {s: vocab_size + i for i, s in enumerate(special_tokens)}


def reference_settings(script_aware: bool, is_super: bool = False, superbpe_mode: bool = False) -> dict:
    """The settings line of the reference for a model trained with these options."""
    return {
        "tau": 1.1,
        "is_super": is_super,
        "superbpe_mode": superbpe_mode,
        "blowup": False,
        "main_regex": patterns.O200K,
        "script_specific_regex": patterns.SCRIPT_SPECIFIC if script_aware else None,
        "script_specific_scripts": list(SCRIPT_SPECIFIC_SCRIPTS) if script_aware else None,
        "merge_pattern": r"\p{L}",
    }


def check_vocab_size(vocab_size: int) -> None:
    """Reject sizes below the byte alphabet or absurdly large ones with a clear message."""
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise SqltokError(f"vocab_size must be an integer, not {vocab_size!r}")
    if vocab_size < MIN_VOCAB_SIZE:
        raise SqltokError(f"vocab_size must be at least {MIN_VOCAB_SIZE} (the byte tokens), not {vocab_size}")
    if vocab_size > MAX_VOCAB_SIZE:
        raise SqltokError(f"vocab_size {vocab_size} is absurdly large (at most {MAX_VOCAB_SIZE})")


def check_special_tokens(special_tokens) -> tuple[str, ...]:
    """The special tokens as a tuple: non-empty strings, each given once (a duplicate would leave its
    id unassigned)."""
    if isinstance(special_tokens, str):
        raise SqltokError("special_tokens is a list of strings, not one string")
    tokens = tuple(special_tokens)
    for s in tokens:
        if not isinstance(s, str) or not s or "\0" in s:
            raise SqltokError(f"a special token must be a non-empty string without NUL bytes, not {s!r}")
    seen = set()
    for s in tokens:
        if s in seen:
            raise SqltokError(f"special token {s!r} is given twice")
        seen.add(s)
    return tokens
