"""Shared test fixtures."""
import lzma
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "data" / "golden"


def sqltok_home() -> Path:
    """The folder a fresh interpreter started in imports the sqltok under test from (the checkout's
    source tree is not importable uncompiled: CI tests the package installed from the sdist)."""
    import sqltok

    return Path(sqltok.__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """Gzipped copies of the reference's golden files (`*.model.gz`, `*.ids.gz`, `*.jsonl.gz`)."""
    return GOLDEN_DIR


TRAIN_DIR = Path(__file__).parent / "data" / "train"


@pytest.fixture(scope="session")
def train_dir() -> Path:
    """The reference's training files (`en_train.jsonl.zst`, `multi_train.jsonl.zst`), all documents."""
    return TRAIN_DIR


@pytest.fixture()
def con():
    """A fresh in-memory DuckDB connection with sqltok registered."""
    import duckdb

    import sqltok

    c = duckdb.connect()
    sqltok.register(c)
    yield c
    c.close()


TOKENIZERS_DIR = Path(__file__).parent / "data" / "tokenizers"
SHARED_TOKENIZERS = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "tokenizers"


@pytest.fixture(scope="session")
def bundled(tmp_path_factory):
    """`bundled(name)`: the path of tests/data/tokenizers/<name>.xz, decompressed."""
    folder = tmp_path_factory.mktemp("tokenizers")

    def get(name: str) -> Path:
        path = folder / name
        if not path.exists():
            path.write_bytes(lzma.decompress((TOKENIZERS_DIR / f"{name}.xz").read_bytes()))
        return path

    return get


def tiktoken_pair(path: Path):
    """(sqltok BPETokenizer, tiktoken Encoding) of one `.tiktoken` file."""
    import tiktoken
    import tiktoken.load

    from sqltok import BPETokenizer
    from sqltok.bpe.tiktoken_file import read_tiktoken

    spec = read_tiktoken(path)
    ref = tiktoken.Encoding(spec.name, pat_str=spec.pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                            special_tokens=spec.special_tokens)
    return BPETokenizer.load(path), ref


def arrow_pools_seen(monkeypatch, module, name: str) -> list[str]:
    """Wrap `module.name` so that each call first records the backend of Arrow's default pool then;
    the list it records into."""
    import pyarrow as pa

    seen, real = [], getattr(module, name)

    def call(*args, **kwargs):
        seen.append(pa.default_memory_pool().backend_name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, call)
    return seen


def pytest_report_header(config) -> str:
    """Which sqltok the tests run against (CI installs it from the sdist into a fresh venv)."""
    import sqltok

    return f"sqltok {sqltok.__version__} from {Path(sqltok.__file__).parent}"
