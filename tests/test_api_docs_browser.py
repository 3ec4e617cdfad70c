"""The API reference page renders the platform's own schema with Swagger UI served by the platform."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.base import make_user
from tests.browser import signed_in

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_browses_the_operations_and_their_error_answers(live_server: Any, browser: Any) -> None:
    page = signed_in(browser, live_server.url, make_user("rita", researcher=True)).new_page()
    outside: list[str] = []
    page.on("request", lambda request: None if request.url.startswith(live_server.url) else outside.append(request.url))

    page.goto(f"{live_server.url}/docs/api/")
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)

    paths = page.locator(".opblock-summary-path").all_text_contents()
    assert any("/api/batches/" in path for path in paths)
    page.locator(".opblock-summary-path", has_text="/api/benchmarks/{name}/import").first.click()
    page.wait_for_selector(".responses-table")
    codes = page.locator(".responses-table .response-col_status").all_text_contents()
    assert {"202", "400", "401", "403", "404", "413"} <= {code.strip() for code in codes}
    assert outside == []
