"""The Prolific study page in Chromium: a participant judges their HIT with the mouse and the
keyboard, submits, and the browser follows the redirect to Prolific's completion page (a stand-in
on another origin, which the page's ``form-action`` policy must allow) with the study's code."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from pytest_django.live_server_helper import LiveServer

from annotation.models import Label
from hits.models import Answer, Assignment, AssignmentStatus
from tests.crowds.crowd_helpers import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test are safe here.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PLATFORM = f"127.0.0.1:{_free_port()}"
PROLIFIC_PORT = _free_port()
PROLIFIC = f"http://localhost:{PROLIFIC_PORT}"


class _Completion(BaseHTTPRequestHandler):
    """Prolific's completion page: records the code it is given."""

    codes: list[str] = []

    def do_GET(self) -> None:
        type(self).codes += parse_qs(urlsplit(self.path).query).get("cc", [])
        data = b"<!doctype html><title>Prolific</title><p id='completed'>Study completed</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def completion_page(settings: Any) -> Iterator[list[str]]:
    _Completion.codes = []
    settings.PROLIFIC_COMPLETION_URL = f"{PROLIFIC}/submissions/complete"
    server = ThreadingHTTPServer(("127.0.0.1", PROLIFIC_PORT), _Completion)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield _Completion.codes
    server.shutdown()
    server.server_close()


@pytest.fixture
def platform(transactional_db: None) -> Iterator[str]:
    server = LiveServer(PLATFORM)
    yield server.url
    server.stop()


def test_a_participant_submits_and_is_sent_back_to_prolific_with_the_code(
    platform: str, completion_page: list[str], browser: Any
) -> None:
    batch = make_batch(backend="prolific", hits=1)
    batch.external = {"study_id": "5" * 24, "completion_code": "C0DE1234"}
    batch.save()
    context = browser.new_context()
    page = context.new_page()
    page.goto(
        f"{platform}/prolific/study/{batch.public_token}/"
        f"?PROLIFIC_PID={'a' * 24}&STUDY_ID={'5' * 24}&SESSION_ID={'b' * 24}"
    )
    rows = page.locator("li.item")
    rows.first.wait_for()
    assert rows.count() == 5
    for index in range(rows.count()):
        row = rows.nth(index)
        choice = "reject" if row.get_attribute("data-text") == "table" else "accept"
        row.locator(f"label.choice.{choice}").click()
    page.keyboard.press("Enter")

    page.locator("#completed").wait_for()
    context.close()

    assert completion_page == ["C0DE1234"]
    assignment = Assignment.objects.get(external_id="b" * 24)
    assert (assignment.status, assignment.worker.kind) == (AssignmentStatus.SUBMITTED, "prolific")
    # Saved unconfirmed: nothing counts before a sync finds the session on Prolific.
    assert Answer.objects.filter(assignment=assignment).count() == 5 and not Label.objects.exists()
