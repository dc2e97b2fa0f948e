"""Open lbsim's HTML reports in a real headless browser: Chromium from the
system's packages (Debian: ``apt-get install chromium``; ``.ci/run`` installs
it), driven by Playwright's Python package. Nothing here downloads a browser:
without Chromium the tests that need it fail and say how to install it.

Every page opens offline (the network is switched off and any request that is
not a ``file:`` or ``data:`` URL is refused and recorded), and its console
errors, script errors and images are collected. A full-page screenshot goes to
``results/screenshots/`` (or ``$LBSIM_SCREENSHOTS``) for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("LBSIM_SCREENSHOTS") or REPO / "results" / "screenshots")
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str:
    """The Chromium binary to drive: $LBSIM_CHROMIUM, else the first on PATH; fails the test if none."""
    env = os.environ.get("LBSIM_CHROMIUM")
    if env:
        if not Path(env).is_file():
            pytest.fail(f"LBSIM_CHROMIUM={env} does not exist")
        return env
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "Chromium is not installed, so the reports cannot be checked in a real browser: install it "
        "(Debian/Ubuntu: apt-get install chromium; .ci/run does this) or set LBSIM_CHROMIUM to a Chromium binary"
    )


@dataclass
class Opened:
    """A report open in the browser, with what happened while it loaded."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return self.console_errors + self.page_errors + [f"network request: {u}" for u in self.outside_requests]

    def images(self) -> list[dict[str, Any]]:
        """Every <img>: its natural size (decoded) and its size on the page."""
        return list(
            self.page.eval_on_selector_all(
                "img",
                """els => els.map(e => { const r = e.getBoundingClientRect();
                    return {alt: e.alt, kind: e.src.slice(0, e.src.indexOf(';')), complete: e.complete,
                            natural: [e.naturalWidth, e.naturalHeight], shown: [r.width, r.height]}; })""",
            )
        )

    def data(self, selector: str, attr: str) -> list[str]:
        return list(self.page.eval_on_selector_all(selector, f"els => els.map(e => e.getAttribute({json.dumps(attr)}))"))

    def texts(self, selector: str) -> list[str]:
        return list(self.page.eval_on_selector_all(selector, "els => els.map(e => e.innerText.trim())"))

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


class Browser:
    """One headless Chromium for the whole test session."""

    def __init__(self) -> None:
        exe = chromium_path()
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            pytest.fail('Playwright is not installed: pip install ".[test]"')
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=exe, args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
            )
        except Exception as e:  # noqa: BLE001 - say what failed, whatever it was
            self._pw.stop()
            pytest.fail(f"cannot start Chromium ({exe}): {e}")
        self.executable = exe

    @contextmanager
    def open(self, path: Path, width: int = 1280) -> Iterator[Opened]:
        context = self._browser.new_context(viewport={"width": width, "height": 900}, offline=True)
        page = context.new_page()
        opened = Opened(page)

        def route(r: Any) -> None:
            url = r.request.url
            if url.startswith(("file:", "data:")):
                r.continue_()
            else:
                opened.outside_requests.append(url)
                r.abort()

        context.route("**/*", route)
        page.on("console", lambda m: opened.console_errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: opened.page_errors.append(f"script error: {e}"))
        try:
            page.goto(path.resolve().as_uri(), wait_until="load")
            yield opened
        finally:
            context.close()

    def close(self) -> None:
        self._browser.close()
        self._pw.stop()
