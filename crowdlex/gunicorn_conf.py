"""gunicorn's settings for the platform: ``gunicorn -c python:crowdlex.gunicorn_conf crowdlex.wsgi``
(docs/deploy.md). Workers, threads and the address stay on the command line.

gunicorn refuses some requests itself, before the platform sees them: a request line or a header
past its limits (414, 431) and a request that is not HTTP (400). Its limits are set to the most it
allows, so that every URL up to ``API_MAX_URL_LENGTH`` reaches the platform, which answers a
longer one with its own 414 (``crowdlex.api_errors``); and what gunicorn still refuses is answered
in the API's one error shape, a JSON object with a ``detail`` sentence, instead of its HTML page
(it cannot tell an ``/api/`` path from another before the request line is read).
"""

from __future__ import annotations

import json
from typing import Any

from gunicorn import util

# The longest request line gunicorn reads (8190 is its most; 0 would mean no limit at all): a
# method, a URL of API_MAX_URL_LENGTH (8,000) characters and the HTTP version fit.
limit_request_line = 8190
# Headers: gunicorn's defaults, named so a change is deliberate (a cookie and a token fit easily).
limit_request_fields = 100
limit_request_field_size = 8190


def write_json_error(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own refusal, as the API answers errors: ``{"detail": "..."}``."""
    body = json.dumps({"detail": f"{reason}: {mesg}" if mesg else reason}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin1") + body)


def post_fork(server: Any, worker: Any) -> None:
    util.write_error = write_json_error  # type: ignore[assignment]
