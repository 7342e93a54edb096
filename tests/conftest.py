"""Shared test fixtures."""
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "data" / "golden"


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    """Gzipped copies of the reference's golden files (`*.model.gz`, `*.ids.gz`, `*.jsonl.gz`)."""
    return GOLDEN_DIR
