"""The web page end to end: the service under uvicorn on a free port, driven by Debian's
Chromium (headless) through Playwright. A missing Chromium fails these tests: ``make setup``
installs it. A screenshot goes to ``$POLYDEID_ARTIFACTS`` (default ``test-artifacts/``)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, expect, sync_playwright

from polydeid.serve.app import Settings, create_app

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("POLYDEID_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(os.environ.get("POLYDEID_ARTIFACTS", "test-artifacts"))
API_KEY = "browser-test-key-0123456789"

PHONE = "+256 772 918273"
DATE = "17 March 2023"
NOTE = f"Seen on {DATE} for a follow-up visit. Call the family on {PHONE} with the results."
CSV = (
    "Patient Name,DOB,Phone,Notes\n"
    f'"Otieno, Amina",1984-03-12,{PHONE},"Reviewed on 14/02/2024, stable."\n'
)


class LiveServer:
    """uvicorn in a background thread, on a socket bound to a free port."""

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive(), "the server thread stopped"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer(Settings(profile="rules")) as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Fail, never skip: the Makefile installs Debian's chromium.
    assert Path(CHROMIUM).is_file(), f"Chromium is missing at {CHROMIUM}: run `make setup`"
    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        )
        yield launched
        launched.close()


class Watch:
    """Requests the page makes and errors it logs."""

    def __init__(self, page: Page) -> None:
        self.urls: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.urls.append(request.url))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )

    def assert_local(self, base: str) -> None:
        assert self.urls, "the page made no requests"
        outside = [u for u in self.urls if not u.startswith((base, "blob:", "data:"))]
        assert outside == [], "the page loaded something from elsewhere"


def open_page(browser: Browser, url: str) -> tuple[Page, Watch]:
    context = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(url + "/")
    return page, watch


def wait_for_lists(page: Page) -> None:
    # A function, not an expression: the page's CSP forbids eval.
    page.wait_for_function(
        "() => document.querySelectorAll('#lang option').length > 1 && "
        "document.querySelectorAll('#policy option').length > 1"
    )


def mark_info(page: Page) -> list[dict[str, Any]]:
    return page.eval_on_selector_all(
        "#highlighted mark",
        "marks => marks.map(m => ({label: m.dataset.label, text: m.textContent, title: m.title}))",
    )


def test_page_highlights_and_redacts(server: LiveServer, browser: Browser) -> None:
    page, watch = open_page(browser, server.url)
    wait_for_lists(page)
    expect(page.locator("#key-field")).to_be_hidden()
    assert page.locator("#policy").input_value() == "tag"
    page.select_option("#lang", "en")
    page.locator("#note").press_sequentially(NOTE)  # typed, key by key
    page.click("#run")

    marks = page.locator("#highlighted mark")
    expect(marks).to_have_count(2)
    info = mark_info(page)
    assert [m["label"] for m in info] == ["DATE", "CONTACT_PHONE"]
    assert [m["text"] for m in info] == [DATE, PHONE]
    assert info[0]["title"].startswith("DATE · score 0.99 · rule.date")
    assert "CONTACT_PHONE" in info[1]["title"] and "rule.phone" in info[1]["title"]
    assert page.locator("#highlighted").inner_text() == NOTE
    expected = (
        "Seen on [DATE] for a follow-up visit. Call the family on [CONTACT_PHONE] with the results."
    )
    expect(page.locator("#output")).to_have_value(expected)
    expect(page.locator("#legend li")).to_have_count(2)
    expect(page.locator("#status")).to_contain_text("Done: 2 identifiers found (language en")
    assert page.locator("#status").get_attribute("aria-live") == "polite"
    colours = page.eval_on_selector_all(
        "#highlighted mark", "ms => ms.map(m => getComputedStyle(m).backgroundColor)"
    )
    assert len(set(colours)) == 2, "each category has its own colour"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-page.png"), full_page=True)

    # Download: a Blob made in the page, no server round trip.
    requests_before = len(watch.urls)
    with page.expect_download() as pending:
        page.click("#download")
    download = pending.value
    assert download.suggested_filename == "deidentified.txt"
    assert Path(download.path()).read_text("utf-8") == expected
    assert all(u.startswith("blob:") for u in watch.urls[requests_before:])

    # Switching the policy re-runs.
    page.select_option("#policy", "numbered")
    expect(page.locator("#output")).to_have_value(
        "Seen on [DATE-1] for a follow-up visit. Call the family on [CONTACT_PHONE-1] "
        "with the results."
    )

    # Ctrl+Enter runs from the keyboard.
    page.fill("#note", f"Phone the ward on {PHONE} before noon.")
    page.focus("#note")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#output")).to_have_value(
        "Phone the ward on [CONTACT_PHONE-1] before noon."
    )
    expect(marks).to_have_count(1)

    watch.assert_local(server.url)
    assert watch.errors == []
    page.context.close()


def test_keyboard_tab_order_and_focus(server: LiveServer, browser: Browser) -> None:
    page, watch = open_page(browser, server.url)
    wait_for_lists(page)
    page.fill("#note", NOTE)
    page.select_option("#lang", "en")
    page.focus("#note")
    order = []
    for _ in range(4):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.id"))
    assert order == ["file", "lang", "policy", "run"]
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid", "keyboard focus is visible"
    page.keyboard.press("Enter")  # the focused button submits
    expect(page.locator("#highlighted mark")).to_have_count(2)
    page.focus("#run")
    after = []
    for _ in range(2):
        page.keyboard.press("Tab")
        after.append(page.evaluate("document.activeElement.id"))
    assert after == ["output", "download"]
    for control in ("note", "file", "lang", "policy", "output"):
        assert page.locator(f"label[for='{control}']").count() == 1, "every control is labelled"
    assert watch.errors == []
    page.context.close()


def test_file_upload(server: LiveServer, browser: Browser) -> None:
    page, watch = open_page(browser, server.url)
    wait_for_lists(page)
    page.select_option("#lang", "en")
    page.set_input_files(
        "#file", files=[{"name": "table.csv", "mimeType": "text/csv", "buffer": CSV.encode()}]
    )
    expect(page.locator("#clear-file")).to_be_enabled()
    page.click("#run")
    expect(page.locator("#status")).to_contain_text("Done:")
    labels = [m["label"] for m in mark_info(page)]
    assert {"PERSON", "DATE", "CONTACT_PHONE"} <= set(labels)
    output = page.locator("#output").input_value()
    assert output.startswith("Patient Name,DOB,Phone,Notes\n")
    assert PHONE not in output and "Otieno" not in output
    with page.expect_download() as pending:
        page.click("#download")
    assert pending.value.suggested_filename == "table.deid.csv"
    watch.assert_local(server.url)
    assert watch.errors == []
    page.context.close()


def test_page_asks_for_the_api_key(browser: Browser) -> None:
    with LiveServer(Settings(profile="rules", api_key=API_KEY)) as live:
        page, watch = open_page(browser, live.url)
        expect(page.locator("#key-field")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("API key")
        page.fill("#api-key", API_KEY)
        page.keyboard.press("Tab")  # commits the field (change event)
        wait_for_lists(page)
        stored = page.evaluate(
            "[sessionStorage.getItem('polydeid.apiKey'), localStorage.length, document.cookie]"
        )
        assert stored == [API_KEY, 0, ""]
        page.select_option("#lang", "en")
        page.fill("#note", NOTE)
        page.click("#run")
        expect(page.locator("#highlighted mark")).to_have_count(2)
        watch.assert_local(live.url)
        page.context.close()
