"""No upload can exhaust a web worker's memory: every upload endpoint, sent a 100 MiB file and a
1000:1 gzip bomb, keeps a real gunicorn worker's peak resident memory under 300 MB, and refuses
what it refuses with a 400 that names the limit (the setting and its value).

The server is a separate process (gunicorn, one sync worker, the tasks inline as on the embedded
default, DEBUG on so that pages render without collected static files) on the test database, so
its peak (VmHWM, reset before each request through /proc/PID/clear_refs) is the request's alone.
The uploads are written to disk and streamed from there, a chunk at a time, so the test process
holds none of them either.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from annotation.models import ImportJob
from annotation.services import benchmark_import
from tests.annotation.import_helpers import FIXTURES, record
from tests.base import Cast
from tests.celery_worker import _database_url

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.production_database(
        "the server is another process sharing the test database; SQLite's is in this one's memory"
    ),
]

MiB = 1024 * 1024
UPLOAD_BYTES = 100 * MiB
PEAK_LIMIT_BYTES = 300 * 1000 * 1000
CHUNK = MiB
SERVER_START_SECONDS = 60
# The CSRF secret the test sends both as the cookie and as the header.
CSRF = "k" * 32
NAMED_LIMIT = re.compile(r"\b([A-Z][A-Z_]+)=(\d+)")


def _write(path: Path, parts: Iterator[bytes], *, size: int | None = None) -> Path:
    """Write ``parts`` to ``path``; with ``size``, cut or pad (with the last part) to exactly that."""
    written = 0
    with path.open("wb") as out:
        for part in parts:
            if size is not None and written + len(part) > size:
                part = part[: size - written]
            out.write(part)
            written += len(part)
            if size is not None and written >= size:
                break
    assert size is None or written == size
    return path


def _repeat(head: bytes, body: bytes, tail: bytes = b"") -> Iterator[bytes]:
    yield head
    block = body * max(1, CHUNK // len(body))
    for _ in range(UPLOAD_BYTES // len(block) + 1):
        yield block
    yield tail


def _gzip(path: Path, content: Iterator[bytes]) -> Path:
    """A gzip file of ``content`` (a bomb when it repeats): compressed a chunk at a time."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    expanded = 0
    with path.open("wb") as out:
        for part in content:
            part = part[: max(0, UPLOAD_BYTES - expanded)]
            expanded += len(part)
            out.write(compressor.compress(part))
        out.write(compressor.flush())
    assert expanded / path.stat().st_size >= 1000, "not a 1000:1 bomb"
    return path


def _result_substitutes() -> Iterator[bytes]:
    yield b'{"substitutes_lemmatized": false, "substitutes": {'
    for target in range(10**7):
        words = ", ".join(f'["w{target}x{index}", {1 - index / 100}]' for index in range(100))
        yield (b"," if target else b"") + f'\n"t:{target:08d}": [{words}]'.encode()


@dataclass(frozen=True)
class Uploads:
    jsonl_long_line: Path
    jsonl_bomb: Path
    jsonl_over_cap: Path
    csv_long_line: Path
    csv_bomb: Path
    result_large: Path
    result_bomb: Path


@pytest.fixture(scope="module")
def uploads(tmp_path_factory: pytest.TempPathFactory) -> Uploads:
    folder = tmp_path_factory.mktemp("uploads")
    line = (json.dumps(record()) + "\n").encode()
    return Uploads(
        # 100 MiB, at the upload cap: a first record, then one line running to the end of the file.
        jsonl_long_line=_write(folder / "long.jsonl", _repeat(line + b'{"context": "', b"a"), size=UPLOAD_BYTES),
        jsonl_bomb=_gzip(folder / "bomb.jsonl.gz", _repeat(line, b"\n")),
        jsonl_over_cap=_write(folder / "over.jsonl", _repeat(line, line), size=UPLOAD_BYTES + 1),
        csv_long_line=_write(folder / "long.csv", _repeat(b"target,split\n", b"a"), size=UPLOAD_BYTES),
        csv_bomb=_gzip(folder / "bomb.csv.gz", _repeat(b"target,split\n", b"\n")),
        # 100 MiB of a result file's substitutes, a hundred for each of many targets.
        result_large=_write(folder / "result.json", _result_substitutes(), size=UPLOAD_BYTES),
        result_bomb=_gzip(folder / "result.json.gz", _repeat(b'{"substitutes": {"t:1": [', b"\n")),
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    port: int
    master: subprocess.Popen[bytes]
    cookies: str
    media: Path

    def worker_pid(self) -> int:
        children = Path(f"/proc/{self.master.pid}/task/{self.master.pid}/children").read_text().split()
        assert len(children) == 1, children
        return int(children[0])

    def reset_peak(self) -> None:
        Path(f"/proc/{self.worker_pid()}/clear_refs").write_text("5")

    def peak_bytes(self) -> int:
        status = Path(f"/proc/{self.worker_pid()}/status").read_text()
        found = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
        assert found is not None
        return int(found.group(1)) * 1024

    def post(self, path: str, file_field: str, upload: Path, fields: dict[str, str]) -> tuple[int, str, str]:
        """POST a multipart form, the file streamed from disk; (status, Location, body)."""
        boundary = f"----upload{uuid.uuid4().hex}"
        head = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        )
        head += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{upload.name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        connection.putrequest("POST", path)
        connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        connection.putheader("Content-Length", str(len(head) + upload.stat().st_size + len(tail)))
        connection.putheader("Cookie", self.cookies)
        connection.putheader("X-CSRFToken", CSRF)
        connection.endheaders()
        connection.send(head)
        with upload.open("rb") as source:
            while chunk := source.read(CHUNK):
                connection.send(chunk)
        connection.send(tail)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, response.getheader("Location") or "", body


@pytest.fixture
def server(cast: Cast, tmp_path: Path) -> Iterator[Server]:
    """gunicorn with one sync worker on the test database, signed in as the researcher, who owns a
    SWORDS benchmark (so it has targets to split and a system evaluation)."""
    benchmark_import(path_or_file=FIXTURES / "swords_small.json.gz", benchmark_name="mem", created_by=cast.researcher)
    client = Client()
    client.force_login(cast.researcher)
    cookies = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}; csrftoken={CSRF}"
    port = _free_port()
    env = {
        **os.environ,
        "DEBUG": "1",
        "SECRET_KEY": settings.SECRET_KEY,
        "DATABASE_URL": _database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "CELERY_BROKER_URL": "",
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "CACHE_URL": "",
    }
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn), "crowdlex.wsgi", "-w", "1", "-k", "sync", "-b", f"127.0.0.1:{port}", "--timeout", "600"]
    log = (tmp_path / "gunicorn.log").open("w")
    master = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                connection.getresponse().read()
                break
            except OSError:
                if master.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not start:\n{(tmp_path / 'gunicorn.log').read_text()[-3000:]}")
                time.sleep(0.3)
        yield Server(port=port, master=master, cookies=cookies, media=tmp_path / "media")
    finally:
        master.terminate()
        try:
            master.wait(timeout=20)
        except subprocess.TimeoutExpired:
            master.kill()
            master.wait(timeout=20)
        log.close()


def _measured(server: Server, send: Callable[[], tuple[int, str, str]]) -> tuple[int, str, str]:
    server.reset_peak()
    status, location, body = send()
    peak = server.peak_bytes()
    assert peak < PEAK_LIMIT_BYTES, f"the worker's peak resident memory was {peak / 1e6:.0f} MB"
    return status, location, body


def _names_limit(body: str, *names: str) -> None:
    found = {name: int(value) for name, value in NAMED_LIMIT.findall(body)}
    assert any(name in found for name in names), f"no limit of {names} named in {body[:500]!r}"
    for name in names:
        if name in found:
            assert found[name] == getattr(settings, name), f"{name} is named with a value it does not have"


@pytest.mark.parametrize(
    ("case", "limits"),
    [
        ("jsonl_long_line", ("IMPORT_MAX_LINE_BYTES",)),
        ("jsonl_bomb", ("IMPORT_MAX_GZIP_RATIO", "IMPORT_MAX_DECOMPRESSED_BYTES")),
    ],
)
def test_an_import_upload_keeps_memory_bounded_and_its_job_names_the_limit(
    server: Server, uploads: Uploads, case: str, limits: tuple[str, ...]
) -> None:
    upload = getattr(uploads, case)

    status, _, body = _measured(server, lambda: server.post("/api/benchmarks/mem/import", "file", upload, {}))
    assert status == 202, body
    job = json.loads(body)
    # Inline, as on the embedded default: the job ran in the same worker, within the same bound.
    assert job["status"] == "failed", job
    _names_limit(job["error"]["detail"], *limits)

    status, location, body = _measured(server, lambda: server.post("/benchmarks/mem/import/", "file", upload, {}))
    assert status == 302, body
    job_row = ImportJob.objects.get(pk=int(location.rstrip("/").rsplit("/", 1)[1]))
    assert job_row.status == "failed" and job_row.path == ""
    _names_limit(job_row.error["detail"], *limits)  # type: ignore[index]
    # The stored uploads were deleted once their jobs had read them.
    assert not any((server.media / "uploads").iterdir())


def test_an_import_upload_over_the_cap_is_a_400_naming_it(server: Server, uploads: Uploads) -> None:
    status, _, body = _measured(
        server, lambda: server.post("/api/benchmarks/mem/import", "file", uploads.jsonl_over_cap, {})
    )
    assert status == 400, body
    _names_limit(body, "IMPORT_MAX_UPLOAD_BYTES")
    assert ImportJob.objects.count() == 0


@pytest.mark.parametrize(
    ("case", "limits"),
    [
        ("csv_long_line", ("IMPORT_MAX_LINE_BYTES",)),
        ("csv_bomb", ("IMPORT_MAX_GZIP_RATIO", "IMPORT_MAX_DECOMPRESSED_BYTES")),
    ],
)
def test_a_split_list_upload_keeps_memory_bounded_and_names_the_limit(
    server: Server, uploads: Uploads, case: str, limits: tuple[str, ...]
) -> None:
    status, _, body = _measured(
        server, lambda: server.post("/api/benchmarks/mem/splits", "list", getattr(uploads, case), {})
    )
    assert status == 400, body
    _names_limit(body, *limits)


@pytest.mark.parametrize(
    ("case", "limits"),
    [
        ("result_large", ("EVALUATION_MAX_SUBSTITUTES",)),
        (
            "result_bomb",
            ("IMPORT_MAX_GZIP_RATIO", "EVALUATION_MAX_RESULT_BYTES", "IMPORT_MAX_LINE_BYTES"),
        ),
    ],
)
def test_a_result_file_upload_keeps_memory_bounded_and_names_the_limit(
    server: Server, uploads: Uploads, case: str, limits: tuple[str, ...]
) -> None:
    upload = getattr(uploads, case)

    status, _, body = _measured(server, lambda: server.post("/api/benchmarks/mem/evaluations", "result", upload, {}))
    assert status == 400, body
    _names_limit(body, *limits)

    status, _, body = _measured(server, lambda: server.post("/benchmarks/mem/evaluation/", "result", upload, {}))
    assert status == 400, body
    _names_limit(body, *limits)


def test_the_bomb_is_a_bomb(uploads: Uploads) -> None:
    """What the uploads are: the bombs expand 1000 times and more, the others are 100 MiB."""
    with gzip.open(uploads.csv_bomb) as expanded:
        total = sum(len(chunk) for chunk in iter(lambda: expanded.read(CHUNK), b""))
    assert total == UPLOAD_BYTES and total / uploads.csv_bomb.stat().st_size >= 1000
    assert uploads.jsonl_long_line.stat().st_size == UPLOAD_BYTES == settings.IMPORT_MAX_UPLOAD_BYTES
    assert uploads.result_large.stat().st_size == UPLOAD_BYTES
