"""Arrow lists of token ids as Python lists of shared ints (`sqltok/native/_id_lists.pyx`): the same
values as pyarrow's `to_pylist`, for list and large_list arrays, slices, NULL and empty rows; bad ids
refused; and what `encode_batch` returns for the families that encode to Arrow."""
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sqltok import Tokenizer
from sqltok.native._id_lists import id_lists

VOCAB = list(range(50))
ROWS = st.lists(st.one_of(st.none(), st.lists(st.integers(0, 49), max_size=6)), max_size=40)


@settings(max_examples=200, deadline=None)
@given(ROWS, st.sampled_from([pa.list_(pa.int32()), pa.large_list(pa.int32())]), st.integers(0, 5), st.integers(0, 5))
def test_rows_equal_to_pylist(rows, type_, start, cut):
    arr = pa.array(rows, type_)
    arr = arr.slice(min(start, len(arr)), max(0, len(arr) - start - cut))
    got = id_lists(arr, VOCAB)
    assert got == arr.to_pylist()
    assert all(x is VOCAB[x] for row in got if row for x in row)  # the shared int objects


def test_values_sliced_underneath():
    """A list array over a child array that starts at an offset of its own."""
    values = pa.array([7, 8, 1, 2, 3], pa.int32()).slice(2)
    arr = pa.LargeListArray.from_arrays(pa.array([0, 2, 2, 3], pa.int64()), values)
    assert id_lists(arr, VOCAB) == [[1, 2], [], [3]]


def test_bad_ids_are_refused():
    with pytest.raises(ValueError, match="token id 50 is out of range"):
        id_lists(pa.array([[1], [50]], pa.large_list(pa.int32())), VOCAB)
    with pytest.raises(ValueError, match="token id -1 is out of range"):
        id_lists(pa.array([[-1]], pa.large_list(pa.int32())), VOCAB)
    with pytest.raises(ValueError, match="NULL"):
        id_lists(pa.array([[1, None]], pa.large_list(pa.int32())), VOCAB)
    with pytest.raises(TypeError, match="list<int32>"):
        id_lists(pa.array([[1]], pa.large_list(pa.int64())), VOCAB)


@pytest.mark.parametrize("name", ["bert-base-uncased_tokenizer.json", "mistral_tokenizer.model.v1"])
def test_batch_lists_equal_the_arrow_ids(bundled, name):
    tok = Tokenizer.load(bundled(name))
    texts = ["Hello, world!", "", "naïve café " * 40, "中文字 and ΣΟΦΙΑ"] * 20
    want = tok.encode_arrow(pa.array(texts, pa.large_string())).to_pylist()
    for threads in (1, 2):
        assert tok.encode_ordinary_batch(texts, num_threads=threads) == want
        assert tok.encode_batch(texts, num_threads=threads) == want


@pytest.mark.parametrize("name", ["o200k_base.tiktoken", "bert-base-uncased_tokenizer.json",
                                  "botchan_en_bpe_1000.model"])
def test_list_views_decode_as_their_lists(bundled, name):
    """Ids given as a list view (list_view, large_list_view) decode as the same rows given as a list:
    pyarrow's cast of a list view to a list keeps a wrong last offset, and the last row decoded as ''."""
    tok = Tokenizer.load(bundled(name))
    special = sorted(tok.special_tokens.values())[0]
    rows = [[31, 5, special], None, [17], [2, 3, 4], [special, 9]]
    want = tok.decode_arrow(pa.array(rows, pa.large_list(pa.int32()))).to_pylist()
    skipped = tok.decode_arrow(pa.array(rows, pa.large_list(pa.int32())), skip_special_tokens=True).to_pylist()
    for type_ in (pa.list_view(pa.int32()), pa.large_list_view(pa.int64())):
        views = pa.array(rows, type_)
        assert tok.decode_arrow(views).to_pylist() == want
        assert tok.decode_arrow(views, skip_special_tokens=True).to_pylist() == skipped
        assert tok.decode_arrow(views.slice(2)).to_pylist() == want[2:]
