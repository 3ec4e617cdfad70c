"""Every error on /api/ has the one JSON shape, a URL too long included: the platform answers one past
API_MAX_URL_LENGTH with 414, and gunicorn, run with crowdlex/gunicorn_conf.py, answers what it
refuses itself (a request line past its limit, a request that is not HTTP) in JSON too."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from pytest_django.fixtures import Settings

from crowdlex.gunicorn_conf import limit_request_line

pytestmark = pytest.mark.django_db


def test_an_api_url_past_the_limit_answers_414_in_json(client: Client, settings: Settings) -> None:
    settings.API_MAX_URL_LENGTH = 200
    path = "/api/benchmarks/?search="
    fits = client.get(path + "x" * (200 - len(path)))
    too_long = client.get(path + "x" * (201 - len(path)))

    assert fits.status_code == 401
    assert too_long.status_code == 414
    assert too_long.json() == {"detail": "The URL is longer than API_MAX_URL_LENGTH (200 characters)."}
    # A page is no API: its URLs are left to the server's own limits.
    assert client.get("/accounts/login/?next=" + "x" * 300).status_code == 200


def test_the_default_limit_reaches_the_platform_through_gunicorn() -> None:
    # A method, the URL and " HTTP/1.1" fit in gunicorn's request line.
    assert len("OPTIONS ") + settings.API_MAX_URL_LENGTH + len(" HTTP/1.1") <= limit_request_line


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def gunicorn() -> Iterator[int]:
    port = _free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "DEBUG": "1",
        "DJANGO_SETTINGS_MODULE": "crowdlex.settings",
    }
    process = subprocess.Popen(
        [
            *(str(Path(sys.executable).with_name("gunicorn")), "crowdlex.wsgi", "-c", "python:crowdlex.gunicorn_conf"),
            *("-w", "1", "-k", "gthread", "--threads", "2", "-b", f"127.0.0.1:{port}"),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while _raw(port, _get("/api/")) == b"":
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.3)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def _raw(port: int, request: bytes) -> bytes:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(request)
            chunks = []
            while chunk := connection.recv(65536):
                chunks.append(chunk)
            return b"".join(chunks)
    except OSError:
        return b""


def _answer(port: int, request: bytes) -> tuple[int, str, dict[str, object]]:
    """Send raw bytes (http.client would refuse to send some of them) and read the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response.status, response.getheader("Content-Type", ""), json.loads(response.read())


def _get(url: str) -> bytes:
    return f"GET {url} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode()


def test_through_gunicorn_every_too_long_url_answers_json(gunicorn: int) -> None:
    platform = _answer(gunicorn, _get("/api/benchmarks/?search=" + "x" * settings.API_MAX_URL_LENGTH))
    assert platform[:2] == (414, "application/json")
    assert platform[2]["detail"] == "The URL is longer than API_MAX_URL_LENGTH (8,000 characters)."

    server = _answer(gunicorn, _get("/api/benchmarks/?search=" + "x" * 9000))
    assert server[:2] == (414, "application/json")
    assert str(server[2]["detail"]).startswith("URI Too Long: ")

    not_http = _answer(gunicorn, b"GET /api/ \x01HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert not_http[:2] == (400, "application/json")
    assert str(not_http[2]["detail"]).startswith("Bad Request: ")
