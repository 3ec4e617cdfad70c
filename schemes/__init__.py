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


def get_scheme(benchmark_or_name: Benchmark | str, *, step: int | None = None) -> AnnotationScheme:
    """The scheme of a benchmark (or of a scheme name); an unknown name is an error, never a default.

    With ``step``, the scheme that runs that step: another one when the step names it
    (``schemes.base.Step.scheme``: SWORDS's step 1 is the generation task), else the same.
    """
    name = benchmark_or_name if isinstance(benchmark_or_name, str) else benchmark_or_name.scheme
    try:
        scheme = _SCHEMES[name]
    except KeyError:
        known = ", ".join(sorted(_SCHEMES)) or "none"
        raise UnknownScheme(f"no annotation scheme is registered as {name!r}; known: {known}") from None
    runner = next((known.scheme for known in scheme.steps if known.number == step and known.scheme), None)
    return get_scheme(runner) if runner is not None else scheme


def registered() -> list[AnnotationScheme]:
    return [_SCHEMES[name] for name in sorted(_SCHEMES)]


__all__ = ["AnnotationScheme", "UnknownScheme", "get_scheme", "register", "registered", "unregister"]
