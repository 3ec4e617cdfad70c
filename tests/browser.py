"""Launching Debian's chromium for the browser tests (Playwright drives it; it never downloads one), and
opening it logged in."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps dialling out, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def wait_until(page: Any, expression: str, arg: Any = None, timeout: float = 20.0) -> None:
    """Wait until ``expression`` (a JavaScript expression, or a function of ``arg``) is true in the page.

    Playwright's ``wait_for_function`` polls with ``eval`` inside the page, which the pages' Content
    Security Policy refuses (no 'unsafe-eval') whenever the first check is false. This polls from
    here instead: each ``page.evaluate`` is exempt from the policy. A navigation during a check
    (its execution context destroyed) counts as "not yet"."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout
    while True:
        try:
            if page.evaluate(expression, arg):
                return
        except Error as error:
            if "context was destroyed" not in str(error) and "navigat" not in str(error):
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout:g} s in {page.url}: {expression}")
        page.wait_for_timeout(25)


def launch_chromium(playwright: Any) -> Any:
    """A headless chromium. A missing one fails the test rather than skipping it, so that a green run
    always includes the browser (`make test` installs chromium where it may)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian's chromium is not installed at {CHROMIUM}: sudo apt-get install chromium")
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


def signed_in(browser: Any, base_url: str, user: Any, **options: Any) -> Any:
    """A new browser context logged in as ``user``: the session cookie of a test client's login."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(**options)
    context.set_default_timeout(20_000)
    cookie = settings.SESSION_COOKIE_NAME
    context.add_cookies([{"name": cookie, "value": client.cookies[cookie].value, "url": base_url}])
    return context


def log_in(browser: Any, base_url: str, username: str, **device: Any) -> Any:
    """A page of a new browser context (``device``: viewport, touch, ...) logged in as ``username``."""
    from tests.base import PASSWORD

    page = browser.new_context(**device).new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{base_url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_load_state()
    return page


def log_in_with_the_keyboard(page: Any, base_url: str, username: str) -> None:
    """Log in with the keyboard alone and land on the work page, whose "Start working" has the focus."""
    from tests.base import PASSWORD

    page.goto(f"{base_url}/accounts/login/")
    # Chromium applies autofocus at its next rendering opportunity, which may follow "load".
    wait_until(page, "document.activeElement && document.activeElement.id === 'id_username'")
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base_url}/work/")
    wait_until(page, "document.activeElement && document.activeElement.textContent.trim() === 'Start working'")


def close_quietly(context: Any) -> None:
    """Close a browser context without a last request reaching the server: a page's goodbye (the HIT
    page sends its draft when hidden or left, a live page polls) would otherwise race the test
    database's flush after the test, and each would wait for the other's locks."""
    from playwright.sync_api import Error

    try:
        # What a page still has in flight (a claim after a submit's redirect) finishes first.
        for page in context.pages:
            # A page that keeps polling never idles: the route below stops its next request.
            with suppress(Error):
                page.wait_for_load_state("networkidle", timeout=10_000)
        context.route("**/*", lambda route: route.abort())
        context.close()
    except Error:
        pass  # a context the browser has closed already


@contextmanager
def desktop_page(browser: Any) -> Iterator[Any]:
    """A page of a new desktop-sized browser context, closed afterwards."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(20_000)
    yield context.new_page()
    close_quietly(context)
