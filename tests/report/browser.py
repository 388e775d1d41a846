"""Opening a report in real headless Chromium (the system's ``chromium``, driven by playwright; no
browser is downloaded): what the page asked the network for, what it logged, and each chart's size."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")
VIEWPORT = {"width": 1200, "height": 900}


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Opened:
    """What one page load did."""

    requests: list[str] = field(default_factory=list)
    """Every URL the page asked for, its own file included."""
    errors: list[str] = field(default_factory=list)
    """Console errors and uncaught exceptions."""
    charts: list[dict[str, Any]] = field(default_factory=list)
    """Per chart (``figure.chart``): its name, the SVG's rendered width and height, its element count,
    and whether it is visible."""


def launch(playwright: Any, executable: str) -> Any:
    # --no-sandbox: the test may run as root, where Chromium's sandbox refuses to start
    return playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])


def open_report(browser: Any, page_file: Path, screenshot: Path | None = None, *,
                full_page: bool = True) -> Opened:
    """Load ``page_file`` (file://), refusing any other request, and measure its charts."""
    opened = Opened()
    own = page_file.resolve().as_uri()
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))

    def only_the_page(route: Any) -> None:
        if route.request.url == own:
            route.continue_()
        else:
            route.abort()

    page.route("**/*", only_the_page)
    page.goto(own, wait_until="load")
    opened.charts = page.eval_on_selector_all("figure.chart", """figures => figures.map(f => {
        const svg = f.querySelector('svg');
        const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
        const style = svg ? getComputedStyle(svg) : null;
        return {name: f.dataset.chart, width: box.width, height: box.height,
                elements: svg ? svg.querySelectorAll('path, rect, text, line, circle').length : 0,
                visible: !!style && style.visibility !== 'hidden' && style.display !== 'none'};
    })""")
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=full_page)
    context.close()
    return opened
