"""What the rest of the code asks of a crowd: the interface every backend implements
(``base.CrowdBackend``), the cost rule (``costs``) and the registry of backends, found by name.

The backends are the classes named by ``settings.CROWD_BACKENDS`` (docs/architecture.md, "How to add
a crowd"); each declares its ``name`` (the value of ``Batch.backend``), its label and what it can do,
and the code outside its package asks it (``get_backend(batch.backend)``) instead of naming it.
"""

from __future__ import annotations

from functools import cache

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from crowds.interface.base import (
    ARRIVAL_LINK,
    ARRIVAL_QUEUE,
    BLOCK,
    BONUS,
    CAPABILITIES,
    EXPIRE,
    EXTEND,
    NOTIFY,
    QUALIFICATION,
    WITHDRAWN_STATUSES,
    BackendError,
    CrowdActionRefused,
    CrowdBackend,
    CrowdPreview,
    NotifyResult,
    PublishResult,
    RemoteAssignment,
    RemoteStatus,
)

# ``Batch.backend`` keeps a crowd's name in this many characters.
BACKEND_NAME_MAX_LENGTH = 10


@cache
def _registry() -> dict[str, type[CrowdBackend]]:
    from django.conf import settings

    found: dict[str, type[CrowdBackend]] = {}
    for path in settings.CROWD_BACKENDS:
        backend = import_string(path)
        name = getattr(backend, "name", "")
        if not name or name in found or len(name) > BACKEND_NAME_MAX_LENGTH:
            raise ImproperlyConfigured(
                f"CROWD_BACKENDS: {path} needs a name of its own of at most {BACKEND_NAME_MAX_LENGTH} characters "
                f"({name!r})"
            )
        found[name] = backend
    return found


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs: object) -> None:
    if setting == "CROWD_BACKENDS":
        _registry.cache_clear()


def backend_names() -> list[str]:
    """The names of the crowds a batch may be published to, in the settings' order (local first)."""
    return list(_registry())


def backend_choices() -> list[tuple[str, str]]:
    """``(name, label)`` of every crowd: ``Batch.backend``'s choices, the forms' and the commands'."""
    return [(name, backend.label) for name, backend in _registry().items()]


def backend_label(name: str) -> str:
    backend = _registry().get(name)
    return backend.label if backend is not None else name


def queue_backend_names() -> list[str]:
    """The crowds whose workers claim HITs from the local queue (``arrival`` ARRIVAL_QUEUE)."""
    return [name for name, backend in _registry().items() if backend.arrival == ARRIVAL_QUEUE]


def default_backend_name() -> str:
    """The crowd a batch goes to when none is named: the first whose workers claim from the queue."""
    names = queue_backend_names()
    if not names:
        raise ImproperlyConfigured("CROWD_BACKENDS names no crowd whose workers claim from the local queue")
    return names[0]


def remote_backend_names() -> list[str]:
    """The crowds that keep their own record of assignments and pay workers (``remote``)."""
    return [name for name, backend in _registry().items() if backend.remote]


def backend_of_worker_kind(kind: str) -> CrowdBackend | None:
    """The crowd whose link brings workers of this ``Worker.kind``, or None (a local account...)."""
    for backend in _registry().values():
        if backend.worker_kind and backend.worker_kind == kind:
            return backend()
    return None


def get_backend(name: str) -> CrowdBackend:
    """A fresh backend for a ``Batch.backend`` value; an unknown name is an error, never a silent default."""
    try:
        backend = _registry()[name]
    except KeyError:
        raise BackendError(f"unknown crowd backend {name!r}; known: {', '.join(sorted(_registry()))}") from None
    return backend()


def backends() -> list[CrowdBackend]:
    """One of each crowd, in the settings' order."""
    return [backend() for backend in _registry().values()]


__all__ = [
    "ARRIVAL_LINK",
    "ARRIVAL_QUEUE",
    "BACKEND_NAME_MAX_LENGTH",
    "BLOCK",
    "BONUS",
    "CAPABILITIES",
    "EXPIRE",
    "EXTEND",
    "NOTIFY",
    "QUALIFICATION",
    "WITHDRAWN_STATUSES",
    "BackendError",
    "CrowdActionRefused",
    "CrowdBackend",
    "CrowdPreview",
    "NotifyResult",
    "PublishResult",
    "RemoteAssignment",
    "RemoteStatus",
    "backend_choices",
    "backend_label",
    "backend_names",
    "backend_of_worker_kind",
    "backends",
    "default_backend_name",
    "get_backend",
    "queue_backend_names",
    "remote_backend_names",
]
