"""The ExternalQuestion page in Chromium, framed the way MTurk frames it.

A stand-in for MTurk (a tiny http.server) serves the parent page with the iframe, on another site
(``localhost`` against the platform's ``127.0.0.1``) so the frame is cross-site as on MTurk, and
records what arrives at ``/mturk/externalSubmit``. Ports come from this suite's range.
"""

from __future__ import annotations

import html
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
from hits.services import assignment_confirm
from tests.crowds.crowd_helpers import make_batch, publish_locally

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test are safe here.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


def _free_port() -> int:
    """A port nothing listens on now, so parallel runs of the suite do not collide."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PLATFORM = f"127.0.0.1:{_free_port()}"
MTURK_PORT = _free_port()
MTURK = f"http://localhost:{MTURK_PORT}"


class _StandIn(BaseHTTPRequestHandler):
    """GET /frame?src=URL: a page that frames URL; POST /mturk/externalSubmit: recorded."""

    received: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        src = parse_qs(parts.query).get("src", [""])[0]
        frame = f'<iframe id="hit" src="{html.escape(src)}" width="900" height="1400"></iframe>'
        body = f"<!doctype html><title>MTurk</title>{frame}"
        self._reply(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        fields = parse_qs(self.rfile.read(length).decode())
        if urlsplit(self.path).path == "/mturk/externalSubmit":
            type(self).received.append(fields)
        self._reply("<!doctype html><p id='done'>HIT submitted</p>")

    def _reply(self, body: str) -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def mturk_stand_in() -> Iterator[list[dict[str, list[str]]]]:
    _StandIn.received = []
    server = ThreadingHTTPServer(("127.0.0.1", MTURK_PORT), _StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield _StandIn.received
    server.shutdown()
    server.server_close()


@pytest.fixture
def platform(transactional_db: None, settings: Any) -> Iterator[str]:
    settings.MTURK_SUBMIT_ORIGINS = [MTURK]
    settings.MTURK_FRAME_ANCESTORS = [MTURK]
    server = LiveServer(PLATFORM)
    yield server.url
    server.stop()


@pytest.fixture
def browser_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context.new_page()
    context.close()


def _framed(page: Any, url: str) -> Any:
    page.goto(f"{MTURK}/frame?src={url.replace('&', '%26')}")
    return page.frame_locator("#hit")


def test_the_preview_inside_mturks_frame_is_read_only(
    platform: str, mturk_stand_in: list[Any], browser_page: Any
) -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    frame = _framed(
        browser_page, f"{platform}/mturk/hit/{posting.hit.public_token}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE"
    )
    frame.get_by_text("This is a preview").wait_for()
    radios = frame.locator("input[type=radio]")
    assert radios.count() == 15
    assert all(radios.nth(i).is_disabled() for i in range(radios.count()))
    assert frame.locator("button[type=submit]").count() == 0
    assert frame.locator("mark.target").first.inner_text() == "bright"
    assert not Assignment.objects.exists() and mturk_stand_in == []


def test_an_accepted_hit_is_saved_then_handed_to_turk_submit_to(
    platform: str, mturk_stand_in: list[Any], browser_page: Any
) -> None:
    (posting,) = publish_locally(make_batch(hits=1))
    url = (
        f"{platform}/mturk/hit/{posting.hit.public_token}/?assignmentId=ASSIGN1&hitId={posting.external_id}"
        f"&workerId=WORKER1&turkSubmitTo={MTURK}"
    )
    frame = _framed(browser_page, url)
    rows = frame.locator("li.item")
    rows.first.wait_for()
    assert rows.count() == 5
    for index in range(rows.count()):
        row = rows.nth(index)
        choice = "reject" if row.get_attribute("data-text") == "table" else "accept"
        row.locator(f"label.choice.{choice}").click()
    frame.locator("#hit-submit").click()
    # The frame leaves the platform for MTurk's externalSubmit, which records the assignment id.
    frame.locator("#done").wait_for()
    assert [fields["assignmentId"] for fields in mturk_stand_in] == [["ASSIGN1"]]
    assignment = Assignment.objects.get(external_id="ASSIGN1")
    assert (assignment.status, assignment.worker.external_id) == (AssignmentStatus.SUBMITTED, "WORKER1")
    # Saved unconfirmed: the answers count once a sync finds the assignment in MTurk's list.
    assert Answer.objects.filter(assignment=assignment).count() == 5 and not Label.objects.exists()
    assert assignment_confirm(assignment=assignment, external_status="Submitted")
    assignment.refresh_from_db()
    assert assignment.controls_correct == assignment.controls_total == 2
    assert Label.objects.filter(assignment=assignment).count() == 3


def test_a_site_other_than_mturk_cannot_frame_the_page(
    platform: str, mturk_stand_in: list[Any], browser_page: Any, settings: Any
) -> None:
    settings.MTURK_FRAME_ANCESTORS = ["https://worker.mturk.com"]
    (posting,) = publish_locally(make_batch(hits=1))
    browser_page.goto(f"{MTURK}/frame?src={platform}/mturk/hit/{posting.hit.public_token}/")
    browser_page.wait_for_load_state("load")
    frame = browser_page.frame_locator("#hit")
    assert frame.locator("li.item").count() == 0
