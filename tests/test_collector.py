"""The collector pause training builds its model objects under (`sqltok.training.collector`)."""
import gc

import pytest
from hypothesis import given, strategies as st

from sqltok.training.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_block_pauses_the_collector_and_leaves_it_as_it_was(enabled):
    (gc.enable if enabled else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled() == enabled


def test_an_error_in_the_block_resumes_the_collector():
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


@given(st.booleans(), st.permutations(list(range(8))), st.lists(st.integers(0, 7), min_size=4, max_size=4,
                                                                  unique=True))
def test_overlapping_blocks_pause_until_the_last_one_ends(enabled, order, opened_late):
    """Blocks of several threads open and end in any order (four open at once, the others later):
    the collector stays paused while any is open and is as it was once all have ended."""
    (gc.enable if enabled else gc.disable)()
    blocks = {i: collector_paused() for i in range(8)}
    open_now = set()
    for i in opened_late:
        blocks[i].__enter__()
        open_now.add(i)
    for i in order:
        if i not in open_now:
            blocks[i].__enter__()
            open_now.add(i)
            assert not gc.isenabled()
        blocks[i].__exit__(None, None, None)
        open_now.discard(i)
        assert gc.isenabled() == (enabled and not open_now)
