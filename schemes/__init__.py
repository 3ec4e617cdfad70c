"""Annotation schemes behind one small interface (``schemes.base.AnnotationScheme``), found by name.

Each scheme is a package here (``schemes.swords`` first) that registers itself with ``register``;
``get_scheme`` finds the one a benchmark uses. ``hits``, ``review`` and ``analysis`` call the
scheme and never name its values. See docs/architecture.md, "How to add a scheme".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemes.base import AnnotationScheme, UnknownScheme

if TYPE_CHECKING:
    from annotation.models import Benchmark

_SCHEMES: dict[str, AnnotationScheme] = {}


def register(scheme: AnnotationScheme) -> AnnotationScheme:
    """Make ``scheme`` available under its name; registering a name twice replaces the first."""
    _SCHEMES[scheme.name] = scheme
    return scheme


def unregister(name: str) -> None:
    _SCHEMES.pop(name, None)


def get_scheme(benchmark_or_name: Benchmark | str) -> AnnotationScheme:
    """The scheme of a benchmark (or of a scheme name); an unknown name is an error, never a default."""
    name = benchmark_or_name if isinstance(benchmark_or_name, str) else benchmark_or_name.scheme
    try:
        return _SCHEMES[name]
    except KeyError:
        known = ", ".join(sorted(_SCHEMES)) or "none"
        raise UnknownScheme(f"no annotation scheme is registered as {name!r}; known: {known}") from None


def registered() -> list[AnnotationScheme]:
    return [_SCHEMES[name] for name in sorted(_SCHEMES)]


__all__ = ["AnnotationScheme", "UnknownScheme", "get_scheme", "register", "registered", "unregister"]
