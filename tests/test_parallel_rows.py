"""The rows of one call shared among threads (sqltok/native/parallel_rows.pxd), behind every consumer:
the BPE encoder, WordPiece (single texts and pairs), the normalizers and supermerge candidates; and
the one decoder of BPE and WordPiece ids (sqltok/native/decode_arrow.pxd). Each row comes out as it
does alone, checked against the libraries people trust where there is one (HF `tokenizers`,
unicodedata2), for arrays with NULLs, slices (an offset into the offsets and the validity bitmap),
32-bit and 64-bit offsets, a row that holds most of the bytes, and 1 to 3 threads."""
import pyarrow as pa
import pytest
import unicodedata2
from hypothesis import given, settings
from hypothesis import strategies as st

from sqltok import Tokenizer
from sqltok.bpe._candidates import candidates_arrow
from sqltok.bpe._encode import Encoder
from sqltok.normalizers._normalize import bert_normalize_arrow, normalize_arrow

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import normalizers  # noqa: E402

WORDS = ["the", "cat", "sat on", "Cat", "café", "nai\u0308ve", "e\u0301te\u0301", "\ufb01ne", "\uff26ull", "中文字",
         "don't", "42", "x=1;", "\n", "ΣΟΦΙΑ", "déjà-vu"]
ROW = st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join))
BIG = " ".join(WORDS * 400)  # a row that holds most of a call's bytes
THREADS = (1, 2, 3)  # a call gets one more thread per 64 rows: every layout can have 3 parts


@st.composite
def layouts(draw):
    """(array, its rows as Python values): 150..200 rows, maybe one big row anywhere, sliced at both ends."""
    rows = draw(st.lists(ROW, min_size=150, max_size=200))
    if draw(st.booleans()):
        rows.insert(draw(st.integers(0, len(rows))), BIG)
    start, cut = draw(st.integers(0, 9)), draw(st.integers(0, 9))
    arr = pa.array(rows, draw(st.sampled_from([pa.string(), pa.large_string()])))
    return arr.slice(start, len(rows) - start - cut), rows[start:len(rows) - cut]


def per_row(f, rows):
    return [None if r is None else f(r) for r in rows]


@pytest.fixture(scope="module")
def bpe(bundled):
    return Tokenizer.load(bundled("r50k_base.tiktoken"))


def candidates(bpe, texts, threads):
    """Candidates under `bpe` with every token eligible (which tokens are is the caller's business)."""
    return candidates_arrow(bpe._encoder, texts, bytes([1]) * bpe.n_vocab, threads)


@pytest.fixture(scope="module")
def bert(bundled):
    path = bundled("bert-base-uncased_tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.no_truncation()
    hf.no_padding()
    return Tokenizer.load(path), hf


@given(layouts())
@settings(max_examples=12, deadline=None)
def test_bpe_encode(bpe, layout):
    arr, rows = layout
    alone = per_row(bpe.encode_ordinary, rows)
    for threads in THREADS:
        assert bpe.encode_arrow(arr, threads=threads).to_pylist() == alone
        assert bpe.encode_arrow(arr, threads=threads, counts_only=True).to_pylist() == per_row(len, alone)
        assert bpe._encoder.encode_arrow(arr, threads=threads, as_lists=True) == alone  # (chunk parts)
    texts = [r for r in rows if r is not None]
    assert bpe.encode_ordinary_batch(texts, num_threads=3) == [bpe.encode_ordinary(t) for t in texts]


@given(layouts())
@settings(max_examples=12, deadline=None)
def test_wordpiece_encode(bert, layout):
    tok, hf = bert
    arr, rows = layout
    alone = per_row(lambda r: hf.encode(r).ids, rows)
    for threads in THREADS:
        assert tok.encode_arrow(arr, threads=threads).to_pylist() == alone
        assert tok.encode_arrow(arr, threads=threads, counts_only=True).to_pylist() == per_row(len, alone)


@given(layouts(), st.integers(0, 5))
@settings(max_examples=12, deadline=None)
def test_wordpiece_pairs(bert, layout, shift):
    """The second texts are another array with an offset of its own."""
    tok, hf = bert
    arr, rows = layout
    seconds = ([None, "a b"] * 200)[shift:shift + len(rows)]
    pairs = pa.array(["pad"] * 3 + seconds, pa.large_string()).slice(3)
    alone = [None if a is None or b is None else hf.encode(a, b).ids for a, b in zip(rows, seconds)]
    for threads in THREADS:
        assert tok.encode_pair_arrow(arr, pairs, threads=threads).to_pylist() == alone


@pytest.mark.parametrize("form", ["NFC", "NFKD"])
@given(layout=layouts())
@settings(max_examples=10, deadline=None)
def test_normalize(form, layout):
    arr, rows = layout
    alone = per_row(lambda r: unicodedata2.normalize(form, r), rows)
    for threads in THREADS:
        assert normalize_arrow(arr, form, threads).to_pylist() == alone


@given(layouts())
@settings(max_examples=10, deadline=None)
def test_bert_normalize(layout):
    arr, rows = layout
    alone = per_row(normalizers.BertNormalizer().normalize_str, rows)
    for threads in THREADS:
        assert bert_normalize_arrow(arr, threads=threads).to_pylist() == alone


@given(layouts())
@settings(max_examples=10, deadline=None)
def test_candidates(bpe, layout):
    arr, rows = layout
    alone = per_row(lambda r: candidates(bpe, pa.array([r]), 1)[0].as_py(), rows)
    assert candidates(bpe, pa.array([BIG]), 1)[0].as_py()  # the words do make candidates
    for threads in THREADS:
        assert candidates(bpe, arr, threads).to_pylist() == alone


def test_first_failing_row_of_candidates():
    """Rows fail in two threads' parts (no token for byte C3): the first of them is reported."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b" c", b" cd"]
    pairs = [(97, 98, 0, 256), (32, 99, 1, 257), (257, 100, 2, 258)]
    no_c3 = Encoder(tokens, pairs, [-1 if b == 0xC3 else b for b in range(256)], True, 0)
    rows = ["ab cd"] * 150 + ["caf\u00e9"] + ["ab cd"] * 150 + ["\u00e9"]
    everyone = bytes([1]) * len(tokens)
    assert candidates_arrow(no_c3, pa.array(rows[:150]), everyone, 3).to_pylist() == [[[256, 258]]] * 150
    for threads in THREADS:
        with pytest.raises(ValueError, match="row 150: the text holds a byte that has no token"):
            candidates_arrow(no_c3, pa.array(rows), everyone, threads)
        with pytest.raises(ValueError, match="row 149: the text holds a byte that has no token"):
            candidates_arrow(no_c3, pa.array(rows).slice(1), everyone, threads)


def test_decode_slices_with_nulls(bpe, bert):
    """Both decoders read a sliced list<int32> array with NULL rows, and reject an id out of range."""
    tok, hf = bert
    for model, decode_one, texts in ((bpe, bpe.decode, WORDS), (tok, hf.decode, [w.lower() for w in WORDS])):
        ids = [None if i % 3 == 1 else model.encode_arrow(pa.array([t])).to_pylist()[0]
               for i, t in enumerate(texts)]
        arr = pa.array(ids, pa.list_(pa.int32())).slice(2)
        assert model.decode_arrow(arr).to_pylist() == per_row(decode_one, ids[2:])
        with pytest.raises(ValueError, match=f"token id {model.n_vocab} is not in this vocabulary"):
            model.decode_arrow(pa.array([[1], [model.n_vocab]], pa.list_(pa.int32())))
