"""The floor of the claim cycle: the statements of one cycle, recorded from the platform, served
again by a bare WSGI app under the same gunicorn, to the same clients (``bench.claim_cycle``).

:func:`record_cycle` runs cycles of one annotator through the whole platform in this process
(Django's test client: every middleware, authentication, the views and services) and keeps, for a
cycle in steady state (the third), each request's SQL statements with their parameters and results
and the response. :data:`app` answers the same URLs with no framework at all: it reads the request,
runs the recorded statements of that request with psycopg2 in one transaction, following the ids
the database hands back (``bench.floor.replay``: the HIT the claim finds, the assignment it
creates, the items it reads), and answers the recorded body with those ids. What the floor leaves
out is exactly the framework's work: routing beyond a path match, middleware, authentication and
sessions beyond their statements, serializers, templates, the task a submit queues on commit.

Every id in the bench database is made unique across tables (each table's sequence starts at its
own multiple of ten million, ``spread_sequences``), so a recorded value names one row of one
table, and the ids in a body are the numbers of eight digits or more.
"""

from __future__ import annotations

import datetime
import json
import os
import pickle
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any

from bench.floor import Statement, StatementRecorder, replay

ID_SPACING = 10_000_000
_ID_IN_TEXT = re.compile(rb"\d{8,}")
_ASSIGNMENT_PATH = re.compile(r"^/(?:api/)?work/assignments/(\d+)/")


@dataclass
class Step:
    """One recorded request: its statements and its response."""

    name: str
    statements: list[Statement]
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    # The assignment its path names when recorded (None for a path with no assignment).
    assignment: int | None = None


@dataclass
class Script:
    steps: dict[str, Step] = field(default_factory=dict)
    recorded_at: datetime.datetime | None = None
    # The recorded annotator's credentials and ids, and each client's: a token or session key
    # names the client, whose values replace the recorded ones.
    recorded: dict[str, Any] = field(default_factory=dict)
    clients: list[dict[str, Any]] = field(default_factory=list)
    # The statements the platform prepares on each connection (crowdlex.sql.execute): the floor
    # prepares them too, once per connection, and the recorded EXECUTEs run them.
    prepared: list[str] = field(default_factory=list)


def spread_sequences() -> None:
    """Start every id sequence of the (empty, bench-only) database at its own multiple of ten million."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT schemaname, sequencename FROM pg_sequences ORDER BY sequencename")
        names = [f'"{schema}"."{name}"' for schema, name in cursor.fetchall()]
        if len(names) * ID_SPACING >= 2**31:
            raise SystemExit("too many sequences to give each its own range of integer ids")
        for number, name in enumerate(names, 1):
            cursor.execute("SELECT setval(%s, %s, false)", [name, number * ID_SPACING])


def identity(user: Any, token: str, session: str) -> dict[str, Any]:
    return {"user": user.pk, "worker": user.worker.pk, "token": token, "session": session}


def record_cycle(path: str, users: list[Any], tokens: list[str], sessions: list[str]) -> Script:
    """Run three cycles of the first annotator through the platform and record the third."""
    from django.db import connection
    from django.test import Client
    from django.utils import timezone

    script = Script(
        recorded=identity(users[0], tokens[0], sessions[0]),
        clients=[identity(user, token, session) for user, token, session in zip(users, tokens, sessions, strict=True)],
    )
    client = Client(HTTP_HOST="127.0.0.1")
    steps: list[tuple[str, Callable[[Any], Any], str | None]]
    if path == "api":
        auth = {"Authorization": f"Token {tokens[0]}"}
        claimed: dict[str, Any] = {}

        def claim(_: Any) -> Any:
            response = client.post("/api/work/claim", "{}", content_type="application/json", headers=auth)
            claimed.update(json.loads(response.content))
            return response

        def submit(_: Any) -> Any:
            answers = {str(item["id"]): "accept" for item in claimed["items"]}
            body = json.dumps({"answers": answers, "seconds_on_page": 1.0})
            return client.post(
                f"/api/work/assignments/{claimed['id']}/submit", body, content_type="application/json", headers=auth
            )

        steps = [("claim", claim, None), ("submit", submit, "claimed")]
        current = lambda: int(claimed["id"])  # noqa: E731
    else:
        client.cookies["sessionid"] = sessions[0]
        location = {"url": ""}

        def start(_: Any) -> Any:
            response = client.post("/work/next", {})
            location["url"] = response.headers["Location"]
            return response

        def page(_: Any) -> Any:
            return client.get(location["url"])

        def form(response: Any) -> Any:
            items = dict.fromkeys(re.findall(rb'name="item-(\d+)"', response.content))
            data = {"seconds_on_page": "1", **{f"item-{item.decode()}": "accept" for item in items}}
            answer = client.post(location["url"], data)
            location["url"] = answer.headers["Location"]
            return answer

        recorder = StatementRecorder()
        with connection.execute_wrapper(recorder):
            first = start(None)
        script.steps["next"] = _step("next", recorder, first, None)
        steps = [("page", page, "page"), ("form", form, "page")]
        current = lambda: int(location["url"].rstrip("/").rsplit("/", 1)[1])  # noqa: E731
    for cycle in range(3):
        previous: Any = None
        for name, run, _ in steps:
            assignment = current() if name != "claim" else None
            recorder = StatementRecorder()
            if cycle == 2:
                script.recorded_at = script.recorded_at or timezone.now()
                with connection.execute_wrapper(recorder):
                    previous = run(previous)
                script.steps[name] = _step(name, recorder, previous, assignment)
            else:
                previous = run(previous)
            if previous.status_code >= 400:
                raise SystemExit(f"recording the {path} cycle: {name} answered {previous.status_code}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'crowdlex%%'")
        script.prepared = [statement for (statement,) in cursor.fetchall()]
    return script


def _step(name: str, recorder: StatementRecorder, response: Any, assignment: int | None) -> Step:
    return Step(
        name=name,
        statements=recorder.statements,
        status=response.status_code,
        headers=[
            (key, value)
            for key, value in response.headers.items()
            if key.lower() not in {"set-cookie", "content-length"}
        ],
        body=response.content,
        assignment=assignment,
    )


def save(script: Script, file: str) -> None:
    with open(file, "wb") as out:
        pickle.dump(script, out)


# The bare WSGI app ------------------------------------------------------------------------------

_local = threading.local()
_loaded: dict[str, Any] = {}


def _script() -> tuple[Script, dict[str, dict[str, Any]]]:
    if "script" not in _loaded:
        with open(os.environ["FLOOR_SCRIPT"], "rb") as file:
            # The file this benchmark wrote for this run.
            script: Script = pickle.load(file)
        by_credential = {client["token"]: client for client in script.clients}
        by_credential.update({client["session"]: client for client in script.clients})
        _loaded["script"], _loaded["clients"] = script, by_credential
    return _loaded["script"], _loaded["clients"]


def _connection() -> Any:
    found = getattr(_local, "connection", None)
    if found is None or found.closed:
        import psycopg2
        from psycopg2.extensions import register_adapter
        from psycopg2.extras import Json

        register_adapter(dict, Json)
        found = psycopg2.connect(os.environ["DATABASE_URL"])
        with found.cursor() as cursor:
            for statement in _loaded["script"].prepared:
                cursor.execute(statement)
        found.commit()
        _local.connection = found
    return found


def _client(environ: dict[str, Any], clients: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    authorization = environ.get("HTTP_AUTHORIZATION", "")
    if authorization.startswith("Token "):
        return clients.get(authorization[6:])
    cookie: SimpleCookie = SimpleCookie(environ.get("HTTP_COOKIE", ""))
    session = cookie.get("sessionid")
    return clients.get(session.value) if session is not None else None


def _step_name(method: str, path: str) -> str | None:
    if path == "/api/work/claim":
        return "claim"
    if path == "/work/next":
        return "next"
    if path.startswith("/api/work/assignments/") and path.endswith("/submit"):
        return "submit"
    if path.startswith("/work/assignments/"):
        return "page" if method == "GET" else "form"
    return None


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Answer a cycle's request with its recorded statements (module docstring)."""
    method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length:
        environ["wsgi.input"].read(length)
    if path == "/healthz":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    script, clients = _script()
    client = _client(environ, clients)
    name = _step_name(method, path)
    if name is None or client is None or name not in script.steps:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not part of the cycle"]
    step = script.steps[name]
    mapping: dict[Any, Any] = {script.recorded[key]: client[key] for key in ("user", "worker", "token", "session")}
    found = _ASSIGNMENT_PATH.match(path)
    if found is not None and step.assignment is not None:
        mapping[step.assignment] = int(found.group(1))
    assert script.recorded_at is not None
    connection = _connection()
    try:
        with connection.cursor() as cursor:
            done = replay(
                cursor,
                step.statements,
                mapping=mapping,
                shift=datetime.datetime.now(datetime.UTC) - script.recorded_at,
            )
        if done.short:
            connection.rollback()
            if name == "claim":
                start_response("204 No Content", [])
            else:
                start_response("302 Found", [("Location", "/work/")])
            return [b""]
        connection.commit()
    except Exception:
        connection.rollback()
        raise

    def ids(text: bytes) -> bytes:
        return _ID_IN_TEXT.sub(
            lambda number: str(done.mapping.get(int(number.group()), number.group().decode())).encode(), text
        )

    body = ids(step.body)
    headers = [(key, ids(value.encode()).decode()) for key, value in step.headers]
    start_response(
        f"{step.status} {'OK' if step.status == 200 else 'Found'}", [*headers, ("Content-Length", str(len(body)))]
    )
    return [body]
