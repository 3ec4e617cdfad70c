"""Requests through a WSGI application as a server calls it, for the tests that check production's
request path (``crowdlex.wsgi``) rather than the test client's."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any


def wsgi_call(
    application: Callable[..., Any], method: str, path: str, body: bytes = b"", **headers: str
) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request to ``application`` (its query after a ``?`` in ``path``; ``headers`` as environ
    keys, e.g. ``HTTP_AUTHORIZATION``): the status, the headers in order and the body."""
    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        **headers,
    }
    answered: dict[str, Any] = {}

    def start_response(status: str, response_headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answered["status"], answered["headers"] = int(status.split()[0]), response_headers

    chunks = application(environ, start_response)
    content = b"".join(chunks)
    chunks.close()
    return answered["status"], answered["headers"], content
