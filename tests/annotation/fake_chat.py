"""A local OpenAI-compatible chat-completions endpoint for tests: ``http.server`` on a thread,
answering ``POST /v1/chat/completions`` with what a test scripts per target word (the word the
prompt marks between ``**``), and recording every request, when it came and how many were in flight.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKED = re.compile(r"\*\*([^\s*][^*]*?)\*\*")


@dataclass
class Reply:
    """One scripted answer: a chat completion with ``content``, or an error ``status`` with headers."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def substitutes(*words: str) -> Reply:
    return Reply(content=json.dumps({"substitutes": list(words)}))


@dataclass
class Seen:
    word: str
    body: dict[str, Any]
    authorization: str
    at: float


class FakeChat:
    def __init__(self) -> None:
        self.replies: dict[str, deque[Reply]] = defaultdict(deque)
        self.default: Callable[[str], Reply] = lambda word: substitutes()
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        self.base_url = ""

    def script(self, word: str, *replies: Reply) -> None:
        """Answer requests for ``word`` with ``replies`` in turn (the last one for good)."""
        self.replies[word].extend(replies)

    def asked(self, word: str) -> int:
        return sum(seen.word == word for seen in self.seen)

    def reply_for(self, word: str) -> Reply:
        with self.lock:
            queue = self.replies.get(word)
            if queue:
                return queue.popleft() if len(queue) > 1 else queue[0]
        return self.default(word)


def _handler(fake: FakeChat) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            prompt = " ".join(message.get("content", "") for message in body.get("messages", []))
            found = MARKED.search(prompt)
            word = found.group(1) if found else ""
            with fake.lock:
                fake.seen.append(Seen(word, body, self.headers.get("Authorization", ""), time.monotonic()))
                fake.in_flight += 1
                fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
            # Out of flight once its answer is ready, before it is sent: the client may send its next
            # request as soon as it reads this answer.
            try:
                reply = fake.reply_for(word) if self.path == "/v1/chat/completions" else Reply(status=404)
                if reply.delay:
                    time.sleep(reply.delay)
            finally:
                with fake.lock:
                    fake.in_flight -= 1
            if reply.status != 200:
                self._send(reply.status, {"error": {"message": "scripted failure"}}, reply.headers)
                return
            completion = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
            }
            self._send(200, completion, reply.headers)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def fake_chat() -> Iterator[FakeChat]:
    fake = FakeChat()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
