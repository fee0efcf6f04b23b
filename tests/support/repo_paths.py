"""Where things are, for tests in any folder: the repository, the test helpers, the test data."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
REPO = SUPPORT.parents[1]
DATA = REPO / "tests" / "data"
