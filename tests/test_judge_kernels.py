"""The kernels `sqltok_evaluate` runs over each batch, against plain Python: each group's distinct ids
and their counts, each text's pretokens, the distinct words of a batch, and WordPiece's split words
(read off the documents' ids, or from each distinct word encoded once) against every word encoded
alone."""
from __future__ import annotations

import dataclasses
import itertools
import re
import string
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle_pretokenize as oracle
import sqltok
from sqltok.native._id_counts import id_counts_arrow
from sqltok.pretokenizer._pretokenize import pretoken_counts_arrow
from sqltok.pretokenizer._words import distinct_words_arrow, token_spans, word_splits_arrow
from sqltok.sentencepiece.model_proto import read_model_proto
from sqltok.sentencepiece.model_write import write_model_proto
from sqltok.udfs.judge import _wordpiece_kernel, tally, word_splits

IDS = pa.large_list(pa.int32())
SPACES = "\t\n\x0b\x0c\r\x1c\x1f \x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\u200b"
# words that share their first 16 bytes (compared within a slot) and differ after them
LONG = ["abcdefghijklmnop", "abcdefghijklmnopq", "abcdefghijklmnopr", "abcdefghijklmnopqrstuvwxyz"]
words = st.one_of(st.sampled_from(LONG + ["a", "ab", "é", "日本", "don't", "##", "x" * 120]),
                  st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6))
texts = st.lists(st.tuples(words, st.sampled_from(SPACES)), max_size=30).map(lambda ws: "".join(w + s for w, s in ws))


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), st.lists(st.integers(0, 40), max_size=60)), st.integers(0, 3)),
                     max_size=20), start=st.integers(0, 3))
def test_id_counts_equal_a_counter_per_group(rows, start):
    """Each group's ids and counts sit on its first non-NULL row, in the order they first occur."""
    ids = pa.array([r for r, _ in rows], IDS)[start:]  # a slice: the kernel reads the offsets from where it starts
    rows = rows[start:]
    distinct, counts = id_counts_arrow(ids, 41, pa.array([g for _, g in rows], pa.int64()))
    seen = set()
    for (row, g), d, c in zip(rows, distinct.to_pylist(), counts.to_pylist()):
        if row is None:
            assert d is None and c is None
        elif g in seen:
            assert d == [] and c == []
        else:
            seen.add(g)
            every = [i for r, h in rows if h == g and r is not None for i in r]
            assert dict(zip(d, c)) == Counter(every) and d == list(dict.fromkeys(every))


def test_id_counts_refuse_an_id_outside_the_vocabulary():
    """An id outside the vocabulary stops counting; the counters it leaves are 0 for the next call."""
    with pytest.raises(ValueError, match="token id 7 is outside this vocabulary of 7 ids"):
        id_counts_arrow(pa.array([[1, 2], [7]], IDS), 7, pa.array([0, 1]))
    with pytest.raises(ValueError, match="token id -1"):
        id_counts_arrow(pa.array([[-1]], IDS), 7, pa.array([0]))
    with pytest.raises(ValueError, match="token id 9"):
        id_counts_arrow(pa.array([[1, 2, 2, 9]], IDS), 7, pa.array([0]))
    assert [a.to_pylist() for a in id_counts_arrow(pa.array([[2, 1]], IDS), 7, pa.array([0]))] == [[[2, 1]], [[1, 1]]]


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.one_of(st.none(), texts), max_size=12))
def test_distinct_words_rebuild_every_rows_words(rows):
    distinct, numbers, ends = distinct_words_arrow(pa.array(rows, pa.large_string()))
    distinct, numbers, ends = distinct.to_pylist(), numbers.to_pylist(), ends.to_pylist()
    every = [w for r in rows if r is not None for w in r.split()]
    assert distinct == list(dict.fromkeys(every))
    assert [distinct[k] for k in numbers] == every
    assert ends == list(itertools.accumulate(len(r.split()) if r else 0 for r in rows))


def test_distinct_words_of_many_words():
    """More distinct words than the table first holds (it grows) and than the cache of recent ones."""
    rows = [" ".join(f"w{i}_{j}" for j in range(300)) + " the the" for i in range(100)]
    distinct, numbers, ends = distinct_words_arrow(pa.array(rows))
    assert len(distinct) == 100 * 300 + 1 and distinct[-1].as_py() == "w99_299" and "the" in distinct.to_pylist()
    assert [distinct[k].as_py() for k in numbers.to_pylist()] == [w for r in rows for w in r.split()]


def _overlapped_words(text: str, cuts: list[int]) -> tuple[int, int]:
    """(words, words that two or more of the pieces text.encode() cut at `cuts` overlap), by bytes."""
    split = 0
    for m in re.finditer(r"\S+", text):  # \s of a str pattern: what str.split() splits on
        a, b = len(text[:m.start()].encode()), len(text[:m.end()].encode())
        split += sum(a < c < b for c in cuts) >= 1
    return len(text.split()), split


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(texts, st.just("a " * 70 + "b")), st.sets(st.integers(1, 400), max_size=60)),
                     max_size=6))
def test_byte_level_split_words_equal_the_tokens_overlapping_each_word(rows):
    """Any cut into tokens, pieces of a character (its shape read from the text) and tokens holding
    more runs of non-whitespace than their shape's byte counts included."""
    vocabulary, ids, want = [b"", b"\xe3\x80"], [], []
    for text, cuts in rows:
        data = text.encode()
        cuts = sorted(c for c in cuts if c < len(data))
        row = []
        for a, b in zip([0] + cuts, cuts + [len(data)]):
            if data[a:b] not in vocabulary:
                vocabulary.append(data[a:b])
            row.append(vocabulary.index(data[a:b]))
        ids.append(row)
        want.append(_overlapped_words(text, cuts))
    spans = token_spans(pa.array(vocabulary + [None], pa.large_binary()))
    words, split = word_splits_arrow(pa.array([t for t, _ in rows], pa.large_string()), pa.array(ids, IDS), spans)
    assert list(zip(words.to_pylist(), split.to_pylist())) == want


@pytest.fixture(scope="module")
def bert(bundled):
    return sqltok.Tokenizer.load(str(bundled("bert-base-uncased_tokenizer.json")))


@pytest.fixture(scope="module")
def o200k(bundled):
    return sqltok.Tokenizer.load(str(bundled("o200k_base.tiktoken")))


@pytest.fixture(scope="module")
def wordpieces(bert, tmp_path_factory):
    """bert-base-uncased, and its vocabulary with the normalizer's other switches: each changes what
    a word's characters make (dropped, alone, one run)."""
    vocab = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    vocab.write_text("\n".join(bert.spec.tokens) + "\n")
    return [bert, sqltok.Tokenizer.load(str(vocab), lowercase=False, strip_accents=False, handle_chinese_chars=False),
            sqltok.Tokenizer.load(str(vocab), clean_text=False, strip_accents=True)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.one_of(st.none(), texts), min_size=1, max_size=8), which=st.integers(0, 2))
def test_wordpiece_split_words_equal_each_word_encoded_alone(wordpieces, rows, which):
    tok = wordpieces[which]
    extra = len(tok.encode_ordinary(""))
    texts = pa.array(rows, pa.large_string())
    got = word_splits(tok, texts, tok.encode_arrow(texts))
    assert got.field("words").to_pylist() == [len(r.split()) if r else 0 for r in rows]
    assert got.field("split").to_pylist() == [
        sum(len(tok.encode_ordinary(w)) - extra >= 2 for w in r.split()) if r else 0 for r in rows]


def test_tally_of_a_batch(bert, o200k):
    rows = ["the cat saw the other cat", None, "", "tokenizers", "the cat"]
    groups = [0, 0, 1, 2, 0]
    for tok in (bert, o200k):
        got = tally(tok, pa.array(rows, pa.large_string()), pa.array(groups, pa.int64())).to_pylist()
        group_ids = [tok.encode_ordinary(rows[0]) + tok.encode_ordinary(rows[4]), tok.encode_ordinary(""),
                     tok.encode_ordinary(rows[3])]
        for r, (row, text) in enumerate(zip(got, rows)):
            assert row["tokens"] == (len(tok.encode_ordinary(text)) if text is not None else 0)
            counts = Counter(group_ids[groups[r]]) if r in (0, 2, 3) else Counter()
            assert (row["ids"], row["counts"]) == ((None, None) if text is None else
                                                   (list(counts), list(counts.values())))


def _kernel_splits(tok, rows):
    texts = pa.array(rows, pa.large_string())
    return _wordpiece_kernel(tok).splits(texts, tok.encode_arrow(texts))


def test_wordpiece_split_words_read_off_the_documents_ids(bert):
    """Rows whose words line up with their ids are counted from them; a dropped separator (BERT's
    normalizer deletes \\x0c, so "cat\\x0cdog" is one pre-token) leaves the row to be redone."""
    rows = ["the cat's [CLS] tokenizers, déjà-vu 日本語 x\x01y", "cat\x0cdog is here", None, "", "\x01 \x7f"]
    words, split, redo = _kernel_splits(bert, rows)
    assert words.tolist() == [7, 4, 0, 0, 2] and redo.tolist() == [False, True, False, False, False]
    assert split.tolist() == [6, 0, 0, 0, 0]  # all but "the" (x\x01y is "xy": x ##y)


def test_wordpiece_split_words_where_whitespace_makes_a_pre_token(wordpieces):
    """Without clean_text \\x1c is a character of BERT's pre-tokens but str.split whitespace: in
    "ab\\x1ccd \\x1c ef" the words ab, cd, ef and the pre-tokens "ab\\x1ccd", "\\x1c", "ef" are as
    many, yet do not line up (the row is redone, each word encoded alone)."""
    tok = wordpieces[2]
    rows = ["ab\x1ccd \x1c ef", "ab\x1ccd \x1c", "tokenizers \x1c tokenizers"]
    assert _kernel_splits(tok, rows)[2].tolist() == [True, True, True]
    texts = pa.array(rows, pa.large_string())
    got = word_splits(tok, texts, tok.encode_arrow(texts))
    assert got.field("split").to_pylist() == [
        sum(len(tok.encode_ordinary(w)) - 2 >= 2 for w in r.split()) for r in rows]


def test_wordpiece_split_words_with_a_prefix_that_is_no_punctuation(tmp_path):
    """With the continuation prefix "xx", the word-initial token "xxb" looks like a continuation:
    the walk runs short and the rows are redone, each word encoded alone."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[UNK]", "[CLS]", "[SEP]", "a", "b", "xxa", "xxb"]) + "\n")
    tok = sqltok.Tokenizer.load(str(vocab), wordpieces_prefix="xx")
    rows = ["aa xxb", "xxb aa b", "ab ba"]
    assert _kernel_splits(tok, rows)[2].tolist() == [True, True, False]
    texts = pa.array(rows, pa.large_string())
    got = word_splits(tok, texts, tok.encode_arrow(texts))
    assert got.field("split").to_pylist() == [1, 1, 2] == [
        sum(len(tok.encode_ordinary(w)) - 2 >= 2 for w in r.split()) for r in rows]



# words of plain ASCII (counted 64 bytes at a time), with now and then a character that is not
# (left to the character loop), between spaces both splits agree on and a few they do not
plain_words = st.one_of(st.text(st.sampled_from(string.ascii_letters + string.digits), min_size=1, max_size=12),
                        st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12),
                        st.sampled_from(["x" * 70, "(word)", "don't", "3.14", "a" * 15 + "é", "日本", "x\x01y", "ab\x7fcd"]))
long_texts = st.lists(st.tuples(plain_words, st.sampled_from([" ", " ", "  ", "\n", "\t", "\r\n", "\x0c", "\u3000"])),
                      min_size=8, max_size=50).map(lambda ws: "".join(w + s for w, s in ws))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(long_texts, min_size=1, max_size=4), which=st.integers(0, 2), cut=st.integers(0, 70))
def test_wordpiece_split_words_of_long_plain_ascii_text(wordpieces, rows, which, cut):
    """Long runs of plain ASCII are counted from 64-byte masks: words and pre-token runs that cross
    a block's end, blocks cut short by other characters and by the row's end, must count as each
    word encoded alone; and a row of plain ASCII lines up (is not redone)."""
    tok = wordpieces[which]
    rows = [r[cut:] for r in rows]
    extra = len(tok.encode_ordinary(""))
    texts = pa.array(rows, pa.large_string())
    got = word_splits(tok, texts, tok.encode_arrow(texts))
    assert got.field("words").to_pylist() == [len(r.split()) for r in rows]
    assert got.field("split").to_pylist() == [sum(len(tok.encode_ordinary(w)) - extra >= 2 for w in r.split()) for r in rows]
    redo = _kernel_splits(tok, rows)[2].tolist()
    assert [r for r, again in zip(rows, redo) if again and all(" " <= c <= "~" or c in "\t\n\r" for c in r)] == []


def _spm_splits(sp, text: str) -> tuple[int, int]:
    """(words, words of two or more pieces) of a text of words and single spaces, from
    sentencepiece's own pieces in context: a word's pieces are those over its bytes and those of
    the space (or the empty dummy prefix) before it."""
    pieces = [(p.begin, p.end) for p in sp.encode(text, return_type="proto").pieces]
    spans, at = [], 0
    for word in text.split(" "):
        size = len(word.encode())
        if size:
            spans.append((at - 1 if at else 0, at, at + size))
        at += size + 1
    return len(spans), sum(sum(lead <= a and b <= start or a < end and b > start for a, b in pieces) >= 2
                           for lead, start, end in spans)


@pytest.fixture(scope="module")
def sentencepieces(bundled, tmp_path_factory):
    """(sqltok's tokenizer, sentencepiece's processor) of a Unigram and a BPE model with a dummy
    prefix, and of the Unigram model without one, spaces kept (so a word stands after its space)."""
    spm = pytest.importorskip("sentencepiece")
    paths = [bundled("botchan_en_unigram_1000.model"), bundled("mistral_tokenizer.model.v1")]
    model = read_model_proto(paths[0].read_bytes(), paths[0].name)
    normalizer = dataclasses.replace(model.normalizer, add_dummy_prefix=False, remove_extra_whitespaces=False)
    variant = tmp_path_factory.mktemp("spm") / "no_prefix.model"
    variant.write_bytes(write_model_proto(dataclasses.replace(model, normalizer=normalizer)))
    return [(sqltok.Tokenizer.load(str(p)), spm.SentencePieceProcessor(model_file=str(p))) for p in paths + [variant]]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(st.text(st.sampled_from(list("abthec's,.-日本語한é😀")), min_size=1, max_size=8), max_size=8).map(" ".join),
                     min_size=1, max_size=6), which=st.integers(0, 2))
def test_sentencepiece_split_words_equal_its_pieces_in_context(sentencepieces, rows, which):
    """SentencePiece's split words (each distinct word encoded alone after a space) equal its pieces
    in context, on text whose words stand after one space."""
    tok, sp = sentencepieces[which]
    texts = pa.array(rows + [None], pa.large_string())
    got = word_splits(tok, texts, tok.encode_arrow(texts))
    assert list(zip(got.field("words").to_pylist(), got.field("split").to_pylist())) == \
        [_spm_splits(sp, r) for r in rows] + [(0, 0)]


def test_split_word_kernels_give_the_same_counts_on_any_number_of_threads(bert, o200k):
    """The rows shared among threads: each row counted once, in its own place."""
    import json
    from pathlib import Path
    lines = (Path(__file__).parent / "data" / "corpora_sample.jsonl").read_text().splitlines()
    rows = [json.loads(line)["text"] for line in lines] * 3 + [None, ""]
    texts = pa.array(rows, pa.large_string())
    assert len(rows) >= 4 * 64  # enough rows for more than one thread
    bert_ids = bert.encode_arrow(texts)
    one = _wordpiece_kernel(bert).splits(texts, bert_ids, 1)
    spans = token_spans(o200k.token_bytes_array())
    o200k_ids = o200k.encode_arrow(texts).cast(IDS)
    for threads in (2, 3):
        got = _wordpiece_kernel(bert).splits(texts, bert_ids, threads)
        assert all((a == b).all() for a, b in zip(got, one))
        assert word_splits_arrow(texts, o200k_ids, spans, threads) == word_splits_arrow(texts, o200k_ids, spans, 1)
    assert one[0].sum() > 0 and not one[2].any()


def _sample_rows() -> list:
    """The sample documents three times, every 50th a NULL, and an empty one: rows enough for three threads."""
    import json
    from pathlib import Path
    lines = (Path(__file__).parent / "data" / "corpora_sample.jsonl").read_text().splitlines()
    return [None if r % 50 == 7 else json.loads(line)["text"] for r, line in enumerate(lines * 3)] + [""]


def test_id_counts_give_the_same_lists_on_any_number_of_threads(o200k):
    """Ids enough for three threads, groups interleaved across rows, NULL rows and a NULL group: a
    group that spans the threads' shares keeps its ids in the order they first occur (the shares
    merged in order) and each id counted once."""
    ids = o200k.encode_arrow(pa.array(_sample_rows(), pa.large_string())).cast(IDS)[1:]  # a slice
    groups = pa.array([None if r % 7 == 3 else r % 4 for r in range(len(ids))], pa.int64())
    n_ids = len(ids.flatten())
    assert n_ids >= 3 * 32768  # IDS_PER_THREAD: ids enough for three threads
    one = id_counts_arrow(ids, o200k.n_vocab, groups, 1)
    assert one == id_counts_arrow(ids, o200k.n_vocab, groups, 2) == id_counts_arrow(ids, o200k.n_vocab, groups, 3)
    assert sum(map(sum, one[1].drop_null().to_pylist())) == n_ids
    assert sum(map(len, one[0].drop_null().to_pylist())) > 5000


def test_pretoken_counts_give_the_same_counts_on_any_number_of_threads():
    """The rows shared among threads: each row's pretokens counted once, in its own place."""
    rows = _sample_rows()
    texts = pa.array(rows, pa.large_string())
    assert len(rows) >= 4 * 64  # enough rows for more than one thread
    counts = pretoken_counts_arrow(texts, False, threads=1)
    assert counts == pretoken_counts_arrow(texts, False, threads=2) == pretoken_counts_arrow(texts, False, threads=3)
    assert counts.to_pylist() == [None if t is None else len(oracle.pretokenize(t, False)) for t in rows]
