"""The "Security and reliability" page and this folder agree: every test file the
page names exists, and every test file here is named on the page (a guarantee
without its test, or a test no guarantee points to, is a gap)."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent
PAGE = HERE.parent.parent / "docs" / "security-reliability.md"


def test_the_page_names_exactly_the_hardening_tests() -> None:
    named = set(re.findall(r"`(test_\w+\.py)`", PAGE.read_text(encoding="utf-8")))
    present = {p.name for p in HERE.glob("test_*.py")} - {Path(__file__).name}
    assert named == present
