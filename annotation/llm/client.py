"""A client of an OpenAI-compatible chat-completions endpoint (``POST {base}/chat/completions``),
with the retries, backoff and rate limit docs/candidates.md describes. Only ``requests``: no SDK.

One :class:`ChatEndpoint` is shared by the threads of a run: its rate limiter spaces the starts of
requests (``LLM_REQUESTS_PER_MINUTE``) across all of them.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests
from django.conf import settings

#: Answers worth asking again: throttled, or the server's trouble.
RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Answers that no retry and no other target can fix: the endpoint, the key or the model is wrong.
FATAL_STATUSES = frozenset({401, 403, 404})


class ChatFailed(RuntimeError):
    """One request failed for good (after its retries); ``fatal``: every other request would fail too."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


@dataclass
class ChatAnswer:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    attempts: int


@dataclass
class EndpointConfig:
    base_url: str
    api_key: str = field(repr=False)
    requests_per_minute: int
    max_attempts: int
    backoff_seconds: float
    backoff_max_seconds: float
    timeout_seconds: float
    max_answer_tokens: int

    @classmethod
    def from_settings(cls, base_url: str | None = None) -> EndpointConfig:
        return cls(
            base_url=(base_url or settings.OPENAI_BASE_URL).rstrip("/"),
            api_key=settings.OPENAI_API_KEY,
            requests_per_minute=settings.LLM_REQUESTS_PER_MINUTE,
            max_attempts=settings.LLM_MAX_ATTEMPTS,
            backoff_seconds=settings.LLM_BACKOFF_SECONDS,
            backoff_max_seconds=settings.LLM_BACKOFF_MAX_SECONDS,
            timeout_seconds=settings.LLM_TIMEOUT_SECONDS,
            max_answer_tokens=settings.LLM_MAX_ANSWER_TOKENS,
        )


class RateLimiter:
    """Spaces the starts of requests ``60 / per_minute`` seconds apart, across threads."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = 60.0 / per_minute
        self.clock = clock
        self._next = clock()
        self._lock = threading.Lock()

    def wait(self) -> None:
        with self._lock:
            now = self.clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's wait in seconds (a number, or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatEndpoint:
    """Asks one model at one endpoint; thread-safe (a session per thread, one shared rate limiter)."""

    def __init__(self, config: EndpointConfig, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.limiter = RateLimiter(config.requests_per_minute)
        self.sleep = sleep
        self._local = threading.local()
        self.retries = 0
        self._count_lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"{self.config.base_url}/chat/completions"

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            if self.config.api_key:
                session.headers["Authorization"] = f"Bearer {self.config.api_key}"
            self._local.session = session
        return session

    def complete(self, *, model: str, messages: list[dict[str, str]], temperature: float) -> ChatAnswer:
        """The first choice's text of a chat completion, retried on 429, 5xx, timeouts and dropped
        connections (``LLM_MAX_ATTEMPTS`` attempts in all), waiting Retry-After when the answer gives
        it, else exponential backoff. ``ChatFailed`` when no attempt succeeds or the answer is not a
        chat completion."""
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": self.config.max_answer_tokens,
        }
        problem = ""
        for attempt in range(1, self.config.max_attempts + 1):
            self.limiter.wait()
            wait: float | None = None
            try:
                response = self._session().post(self.url, json=body, timeout=self.config.timeout_seconds)
            except requests.Timeout:
                problem = f"no answer within {self.config.timeout_seconds:g} s"
            except requests.ConnectionError as exc:
                problem = f"cannot connect to {self.config.base_url}: {type(exc).__name__}"
            else:
                if response.status_code == 200:
                    return self._answer(response, attempts=attempt)
                problem = f"HTTP {response.status_code}: {_error_text(response)}"
                if response.status_code in FATAL_STATUSES:
                    raise ChatFailed(f"{self.url} answered {problem}", fatal=True)
                if response.status_code not in RETRIED_STATUSES:
                    raise ChatFailed(f"{self.url} answered {problem}")
                wait = retry_after_seconds(response.headers.get("Retry-After"))
            if attempt == self.config.max_attempts:
                break
            if wait is None:
                wait = self.config.backoff_seconds * 2 ** (attempt - 1)
            with self._count_lock:
                self.retries += 1
            self.sleep(min(wait, self.config.backoff_max_seconds))
        raise ChatFailed(f"{self.url}: {problem} (after {self.config.max_attempts} attempts)")

    def _answer(self, response: requests.Response, *, attempts: int) -> ChatAnswer:
        try:
            found: Any = response.json()
            text = found["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatFailed(f"{self.url} answered 200 but not a chat completion: {response.text[:200]!r}") from None
        if not isinstance(text, str):
            raise ChatFailed(f"{self.url} answered a chat completion without text")
        usage = found.get("usage") if isinstance(found.get("usage"), dict) else {}
        return ChatAnswer(
            text=text,
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            attempts=attempts,
        )


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_text(response: requests.Response) -> str:
    try:
        found = response.json()
    except ValueError:
        return response.text[:200] or response.reason
    error = found.get("error") if isinstance(found, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:200]
    return str(found)[:200]
