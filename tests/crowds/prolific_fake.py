"""A small fake of Prolific's API, served over real HTTP from a thread of the test process.

It keeps the state the platform's calls change (studies, places, submissions, approvals,
rejections, bonus payments, messages), checks the token and the fields Prolific checks, and lets a
test play the participants (``take_place``, ``complete``, ``give_back``, ``time_out``). Tests
point ``PROLIFIC_API_URL`` at it; the platform's own client speaks to it unchanged.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token"
PLACEHOLDERS = ("{%PROLIFIC_PID%}", "{%STUDY_ID%}", "{%SESSION_ID%}")
CATEGORIES = {
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
}
# Prolific counts these submissions against a study's places; returned, timed-out and rejected
# ones give their place back.
TAKING = {"RESERVED", "ACTIVE", "AWAITING REVIEW", "APPROVED"}
PAGE_SIZE = 2
MIN_CENTS_PER_HOUR = 800


class Refused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class FakeProlific:
    url: str = ""
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    submissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    bulk_bonuses: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    # Status codes answered to the next calls, in order, before any real work (to test retries).
    failures: list[int] = field(default_factory=list)
    counter: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter:0{24 - len(prefix)}x}"

    # -- the participants' side ---------------------------------------------------------------

    def take_place(self, study_id: str, participant: str) -> tuple[str, str]:
        """A participant starts the study: a submission (its id is the SESSION_ID) and the study URL
        with Prolific's placeholders filled in, path and query only."""
        with self.lock:
            study = self.studies[study_id]
            if study["status"] != "ACTIVE":
                raise Refused(409, f"study {study_id} is {study['status']}")
            if self._taken(study_id) >= study["total_available_places"]:
                raise Refused(409, "no places left")
            session = self._id("5e55")
            self.submissions[session] = {
                "id": session,
                "study_id": study_id,
                "participant_id": participant,
                "status": "ACTIVE",
                "started_at": _now(),
                "completed_at": None,
                "bonus_payments": [],
                "study_code": None,
            }
            url = study["external_study_url"]
            for placeholder, value in zip(PLACEHOLDERS, (participant, study_id, session), strict=True):
                url = url.replace(placeholder, value)
            parts = urlsplit(url)
            return session, f"{parts.path}?{parts.query}"

    def complete(self, session: str, code: str) -> None:
        with self.lock:
            submission = self.submissions[session]
            codes = {entry["code"] for entry in self.studies[submission["study_id"]]["completion_codes"]}
            if code not in codes:
                raise Refused(400, f"unknown completion code {code}")
            submission.update(status="AWAITING REVIEW", completed_at=_now(), study_code=code)

    def give_back(self, session: str) -> None:
        self.submissions[session]["status"] = "RETURNED"

    def time_out(self, session: str) -> None:
        self.submissions[session]["status"] = "TIMED-OUT"

    def _taken(self, study_id: str) -> int:
        return sum(1 for item in self.submissions.values() if item["study_id"] == study_id and item["status"] in TAKING)

    def pay_calls(self, bulk_id: str) -> int:
        return int(self.bulk_bonuses[bulk_id]["paid"])

    # -- the API ----------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        with self.lock:
            self.calls.append((method, path))
            if self.failures:
                return self.failures.pop(0), {"error": {"detail": "try again later"}}
            return self._route(method, path, query, body)

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        routes: list[tuple[str, str, Any]] = [
            ("GET", r"/api/v1/studies/", self._list_studies),
            ("POST", r"/api/v1/studies/", self._create_study),
            ("GET", r"/api/v1/studies/(?P<id>\w+)/", self._get_study),
            ("PATCH", r"/api/v1/studies/(?P<id>\w+)/", self._update_study),
            ("POST", r"/api/v1/studies/(?P<id>\w+)/transition/", self._transition_study),
            ("GET", r"/api/v1/studies/(?P<id>\w+)/submissions/", self._list_submissions),
            ("POST", r"/api/v1/submissions/bonus-payments/", self._set_up_bonus),
            ("GET", r"/api/v1/submissions/(?P<id>\w+)/", self._get_submission),
            ("POST", r"/api/v1/submissions/(?P<id>\w+)/transition/", self._transition_submission),
            ("POST", r"/api/v1/bulk-bonus-payments/(?P<id>\w+)/pay/", self._pay_bonus),
            ("POST", r"/api/v1/messages/", self._message),
        ]
        for verb, pattern, handler in routes:
            match = re.fullmatch(pattern, path)
            if verb == method and match:
                try:
                    return handler(query=query, body=body or {}, **match.groupdict())
                except Refused as refusal:
                    return refusal.status, {"error": {"detail": refusal.detail}}
                except KeyError as missing:
                    return 404, {"error": {"detail": f"not found: {missing}"}}
        return 404, {"error": {"detail": f"no route {method} {path}"}}

    def _study_out(self, study: dict[str, Any]) -> dict[str, Any]:
        return {**study, "places_taken": self._taken(study["id"])}

    def _list_studies(self, *, query: dict[str, list[str]], body: Any) -> tuple[int, Any]:
        return 200, {"results": [self._study_out(study) for study in self.studies.values()], "_links": {}}

    def _create_study(self, *, query: dict[str, list[str]], body: dict[str, Any]) -> tuple[int, Any]:
        for name in ("name", "description", "external_study_url", "total_available_places", "reward"):
            if name not in body:
                raise Refused(400, f"{name}: this field is required")
        if not all(placeholder in body["external_study_url"] for placeholder in PLACEHOLDERS):
            raise Refused(400, "external_study_url: the URL parameters are missing")
        if not body["external_study_url"].startswith("https://"):
            raise Refused(400, "external_study_url: must be https")
        minutes = body.get("estimated_completion_time")
        if not isinstance(minutes, int) or minutes < 1:
            raise Refused(400, "estimated_completion_time: a whole number of minutes is required")
        if not isinstance(body["reward"], int) or body["reward"] * 60 < MIN_CENTS_PER_HOUR * minutes:
            raise Refused(400, "reward: below the minimum reward per hour")
        if not body.get("completion_codes"):
            raise Refused(400, "completion_codes: at least one is required")
        study_id = self._id("57")
        self.studies[study_id] = {**body, "id": study_id, "status": "UNPUBLISHED"}
        return 201, self._study_out(self.studies[study_id])

    def _get_study(self, *, query: dict[str, list[str]], body: Any, id: str) -> tuple[int, Any]:
        return 200, self._study_out(self.studies[id])

    def _update_study(self, *, query: dict[str, list[str]], body: dict[str, Any], id: str) -> tuple[int, Any]:
        study = self.studies[id]
        places = body.get("total_available_places")
        if places is not None:
            if not isinstance(places, int) or places < study["total_available_places"]:
                raise Refused(400, "total_available_places: a study's places can only be increased")
            study["total_available_places"] = places
            if study["status"] in {"AWAITING REVIEW", "COMPLETED"}:
                study["status"] = "ACTIVE"
        return 200, self._study_out(study)

    def _transition_study(self, *, query: dict[str, list[str]], body: dict[str, Any], id: str) -> tuple[int, Any]:
        study = self.studies[id]
        action = body.get("action")
        if action == "PUBLISH":
            if study["status"] != "UNPUBLISHED":
                raise Refused(400, "only a draft study can be published")
            study["status"] = "ACTIVE"
        elif action == "STOP":
            study["status"] = "COMPLETED"
        elif action == "PAUSE":
            if study["status"] != "ACTIVE":
                raise Refused(400, "only an active study can be paused")
            study["status"] = "PAUSED"
        elif action == "START":
            if study["status"] != "PAUSED":
                raise Refused(400, "only a paused study can be started again")
            study["status"] = "ACTIVE"
        else:
            raise Refused(400, f"unknown action {action}")
        return 200, self._study_out(study)

    def _list_submissions(self, *, query: dict[str, list[str]], body: Any, id: str) -> tuple[int, Any]:
        page = int(query.get("page", ["1"])[0])
        found = [item for item in self.submissions.values() if item["study_id"] == id]
        chunk = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        following = None
        if page * PAGE_SIZE < len(found):
            following = f"{self.url}/api/v1/studies/{id}/submissions/?page={page + 1}"
        results = [
            {key: item[key] for key in ("id", "participant_id", "status", "started_at", "completed_at", "study_code")}
            for item in chunk
        ]
        return 200, {"results": results, "_links": {"next": {"href": following}}, "meta": {"total": len(found)}}

    def _get_submission(self, *, query: dict[str, list[str]], body: Any, id: str) -> tuple[int, Any]:
        item = self.submissions[id]
        return 200, {**item, "participant": item["participant_id"]}

    def _transition_submission(self, *, query: dict[str, list[str]], body: dict[str, Any], id: str) -> tuple[int, Any]:
        item = self.submissions[id]
        action = body.get("action")
        wanted = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}.get(str(action))
        if wanted is None:
            raise Refused(400, f"unknown action {action}")
        if item["status"] == wanted:
            return 200, item
        if item["status"] != "AWAITING REVIEW":
            raise Refused(400, f"a submission that is {item['status']} cannot be transitioned")
        if wanted == "REJECTED":
            if len(str(body.get("message", ""))) < 100:
                raise Refused(400, "message: must be at least 100 characters")
            if body.get("rejection_category") not in CATEGORIES:
                raise Refused(400, "rejection_category: not a valid choice")
            item["rejection"] = {"message": body["message"], "category": body["rejection_category"]}
        item["status"] = wanted
        return 200, item

    def _set_up_bonus(self, *, query: dict[str, list[str]], body: dict[str, Any]) -> tuple[int, Any]:
        study_id = body.get("study_id")
        if study_id not in self.studies:
            raise Refused(400, "study_id: unknown study")
        rows = []
        for line in str(body.get("csv_bonuses", "")).strip().splitlines():
            who, amount = line.split(",")
            if who not in self.submissions or self.submissions[who]["study_id"] != study_id:
                raise Refused(400, f"{who} has no submission in this study")
            rows.append((who, int(Decimal(amount) * 100)))
        bulk_id = self._id("b0")
        total = sum(value for _, value in rows)
        self.bulk_bonuses[bulk_id] = {"id": bulk_id, "study": study_id, "rows": rows, "paid": 0}
        fees = round(total * 0.428)
        return 201, {"id": bulk_id, "study": study_id, "amount": total, "fees": fees, "total_amount": total + fees}

    def _pay_bonus(self, *, query: dict[str, list[str]], body: Any, id: str) -> tuple[int, Any]:
        bulk = self.bulk_bonuses[id]
        # Like Prolific's, not idempotent: every call pays again.
        bulk["paid"] += 1
        for who, value in bulk["rows"]:
            self.submissions[who]["bonus_payments"].append(value)
        return 202, {}

    def _message(self, *, query: dict[str, list[str]], body: dict[str, Any]) -> tuple[int, Any]:
        if not body.get("recipient_id") or not body.get("body"):
            raise Refused(400, "recipient_id and body are required")
        self.messages.append(body)
        return 201, body


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@contextmanager
def fake_prolific(settings: Any) -> Iterator[FakeProlific]:
    """Serve a fake Prolific on a free local port and point the platform at it."""
    fake = FakeProlific()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                status, payload = 401, {"error": {"detail": "Invalid token."}}
            else:
                status, payload = fake.handle(self.command, parts.path, parse_qs(parts.query), json.loads(raw or b"{}"))
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.PROLIFIC_API_URL = fake.url
    settings.PROLIFIC_API_TOKEN = TOKEN
    # Three attempts at most, so a test of retries stays short.
    settings.PROLIFIC_MAX_ATTEMPTS = 3
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
