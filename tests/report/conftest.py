"""One headless Chromium for the browser tests of the session, and where their screenshots go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.report.browser import chromium_path, launch

ARTIFACTS = "SQLANON_REPORT_ARTIFACTS"
"""The directory the browser tests store their screenshots in (default: under pytest's tmp dir)."""


@pytest.fixture(scope="session")
def chromium():
    executable = chromium_path()
    if executable is None:
        pytest.skip("headless Chromium is not installed: `apt-get install chromium` (Debian), as "
                    "scripts/setup-tests.sh does")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is missing: install the test extra (`pip install -e '.[test]'`)",
                    pytrace=False)
    with sync_playwright() as p:
        browser = launch(p, executable)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory) -> Path:
    chosen = os.environ.get(ARTIFACTS)
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("report-screenshots")
