"""Crowd backends behind one small interface (``base.CrowdBackend``), found by name.

A new crowd registers a factory with ``register_backend``; the services only ever call
``get_backend(batch.backend)``.
"""

from __future__ import annotations

from collections.abc import Callable

from hits.backends.base import (
    WITHDRAWN_STATUSES,
    BackendError,
    CrowdBackend,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
    RemoteStatus,
)

_FACTORIES: dict[str, Callable[[], CrowdBackend]] = {}


def register_backend(name: str, factory: Callable[[], CrowdBackend]) -> None:
    _FACTORIES[name] = factory


def get_backend(name: str) -> CrowdBackend:
    """A fresh backend for a ``Batch.backend`` value; an unknown name is an error, never a silent default."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise BackendError(f"unknown crowd backend {name!r}; known: {', '.join(sorted(_FACTORIES))}") from None
    return factory()


def _local() -> CrowdBackend:
    from hits.backends.local import LocalBackend

    return LocalBackend()


def _mturk() -> CrowdBackend:
    from hits.backends.mturk import MTurkBackend

    return MTurkBackend()


def _prolific() -> CrowdBackend:
    from hits.backends.prolific import ProlificBackend

    return ProlificBackend()


register_backend("local", _local)
register_backend("mturk", _mturk)
register_backend("prolific", _prolific)

__all__ = [
    "WITHDRAWN_STATUSES",
    "BackendError",
    "CrowdBackend",
    "NotifyResult",
    "PublishResult",
    "RemoteAssignment",
    "RemoteStatus",
    "get_backend",
    "register_backend",
]
