"""Stable per-benchmark pseudonyms of workers for exports.

A pseudonym is a keyed hash (HMAC-SHA256) of the worker's ``kind:external_id`` under a random
secret of the benchmark, so the same worker has the same pseudonym in every export of one
benchmark, and two benchmarks' pseudonyms cannot be linked without their secrets.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

PREFIX = "w-"
DIGEST_CHARS = 16


def new_secret() -> str:
    return secrets.token_hex(32)


class WorkerNames:
    """Names workers in an export: a pseudonym, or ``kind:external_id`` when raw ids were asked for."""

    def __init__(self, *, secret: str | None) -> None:
        """``secret`` None exports raw ids (internal use only)."""
        self.key = secret.encode() if secret is not None else None
        self.cache: dict[str, str] = {}

    @property
    def raw(self) -> bool:
        return self.key is None

    def __call__(self, name: str | None) -> str:
        """The export's name of the worker named ``kind:external_id`` ("" for no worker)."""
        if not name:
            return ""
        if self.key is None:
            return name
        pseudonym = self.cache.get(name)
        if pseudonym is None:
            digest = hmac.new(self.key, name.encode(), hashlib.sha256).hexdigest()
            pseudonym = PREFIX + digest[:DIGEST_CHARS]
            if len(self.cache) < 100_000:
                self.cache[name] = pseudonym
        return pseudonym


__all__ = ["WorkerNames", "new_secret"]
