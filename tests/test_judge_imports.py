"""Every judge module imports on its own, first, in a fresh interpreter: no import cycle hides behind
the order in which the other tests happen to import them."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import sqltok_home

MODULES = ["sqltok.udfs.judge", "sqltok.vocabulary", "sqltok.judge", "sqltok.judge.viewer", "sqltok.judge.report",
           "sqltok.judge.commands", "sqltok.judge.curves", "sqltok.judge.frequencies", "sqltok.judge.metrics"]


@pytest.mark.parametrize("module", MODULES)
def test_imports_alone(module):
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True, capture_output=True, timeout=120,
                   cwd=sqltok_home())
