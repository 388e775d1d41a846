"""The screenshot of docs/report.md: the HTML report of Adult (the spec of bench/report_bench.py with
the optimum's levels), opened in headless Chromium by the browser tests' machinery
(tests/report/browser.py), its first screen saved as a 64-colour PNG to keep it small.

    python scripts/report_screenshot.py [--adult-dir ../shared/data/adult] [-o docs/img/report.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--adult-dir", default=str(ROOT.parent / "shared" / "data" / "adult"))
    p.add_argument("-o", "--output", default=str(ROOT / "docs" / "img" / "report.png"))
    p.add_argument("--height", type=int, default=1500, help="pixels of the page shown")
    a = p.parse_args()
    from PIL import Image
    from playwright.sync_api import sync_playwright

    from bench.report_bench import spec_dict
    from sqlanon import api
    from sqlanon.engines.duckdb import DuckDBEngine
    from sqlanon.spec.load import spec_from_dict
    from tests.report import browser

    adult = Path(a.adult_dir)
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "adult.duckdb"
        with DuckDBEngine(str(database)) as e:
            e.con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?, delim=';', header=true, "
                          "all_varchar=true)", [str(adult / "adult.csv")])
        page = Path(tmp) / "report.html"
        api.anonymize(spec_from_dict(spec_dict(adult, database)), dry_run=True, html=page)
        shot = Path(tmp) / "shot.png"
        executable = browser.chromium_path()
        if executable is None:
            raise SystemExit("headless Chromium is not installed (Debian: apt-get install chromium)")
        with sync_playwright() as pw:
            chromium = browser.launch(pw, executable)
            browser.VIEWPORT["height"] = a.height
            opened = browser.open_report(chromium, page, shot, full_page=False)
            chromium.close()
        if opened.errors or len(opened.requests) != 1:
            raise SystemExit(f"the page logged {opened.errors} and asked for {opened.requests}")
        out = Path(a.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.open(shot).convert("RGB").quantize(colors=64).save(out, optimize=True)
        print(f"{out}: {out.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
