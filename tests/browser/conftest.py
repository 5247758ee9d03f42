"""Playwright driving Debian's Chromium, with axe-core (from its npm package, installed by `make axe`) checking the
accessibility of every page a test hands to the `axe` fixture. Skipped only outside CI when Chromium or axe-core is
not installed; in CI (CI=true) a missing browser or axe-core fails the run instead of hiding it."""

import json
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
AXE_JS = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_REPORT = SCREENSHOTS.parent / "axe.json"
# Every rule axe-core runs by default (WCAG 2.0-2.2 A and AA and best practices); these impacts fail a test.
BLOCKING = ("serious", "critical")
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ")),
  }));
}"""

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _missing(
            f"Chromium not found at {CHROMIUM}: install Debian's chromium package (apt-get install chromium)."
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def _missing(message: str):
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE_JS.exists():
        _missing("axe-core is not installed: run make axe (npm ci in tests/browser/axe).")
    return AXE_JS.read_text(encoding="utf-8")


@pytest.fixture
def axe(axe_source, request):
    """check(page, name): axe-core on the page as it is now, injected from the local package through the
    browser's debugging protocol (not a script element, so the Content-Security-Policy stays as it is and nothing
    is fetched); fails on any serious or critical violation. Every page's violations, minor ones included, are
    written to test-artifacts/axe.json."""
    seen = {}

    def check(page, name: str) -> list:
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.evaluate(axe_source)
        violations = page.evaluate(AXE_RUN)
        seen[name] = {"url": page.url, "violations": violations}
        blocking = [v for v in violations if v["impact"] in BLOCKING]
        assert not blocking, f"{name} ({page.url}): " + json.dumps(blocking, indent=1)
        return violations

    yield check
    AXE_REPORT.parent.mkdir(parents=True, exist_ok=True)
    report = json.loads(AXE_REPORT.read_text()) if AXE_REPORT.exists() else {}
    report[request.node.name] = seen
    AXE_REPORT.write_text(json.dumps(report, indent=1))


def pytest_terminal_summary(terminalreporter):
    if SCREENSHOTS.exists() and any(SCREENSHOTS.iterdir()):
        terminalreporter.write_line(f"Browser screenshots: {SCREENSHOTS}")
