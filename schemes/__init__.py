"""Annotation schemes behind one small interface (``schemes.base.AnnotationScheme``), found by name.

Each scheme is a package here that registers itself with ``register`` when imported
(``schemes.apps`` imports every package it finds; a scheme that runs another's step may sit in
that scheme's package, which imports it); ``get_scheme`` finds the one a benchmark uses.
``hits``, ``review`` and ``analysis`` call the scheme and never name it or its values.

A scheme package may also hold plug-ins of a higher room, named by convention in :data:`PLUGINS`:
``figures`` (what the scheme reports: statistics, plots, pages), ``exports`` (its export formats,
dataset layout, released files) and ``evaluation`` (how a system's output is scored against a
benchmark) plug into ``analysis``, which loads them with
:func:`load_plugins` when it is ready. A plug-in belongs to the room it plugs into: it may import
that room and the rooms below (``tests/test_layers.py``). See docs/architecture.md, "How to add a
scheme".
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING

from schemes.base import AnnotationScheme, UnknownScheme, scheme_candidate_prompt

if TYPE_CHECKING:
    from annotation.models import Benchmark

_SCHEMES: dict[str, AnnotationScheme] = {}

#: A scheme package's plug-in modules (or packages) by name -> the room they plug into.
PLUGINS: dict[str, str] = {"figures": "analysis", "exports": "analysis", "evaluation": "analysis"}


def register(scheme: AnnotationScheme) -> AnnotationScheme:
    """Make ``scheme`` available under its name; registering a name twice replaces the first.

    Benchmarks may take it (``annotation.models.scheme_offer``) unless it only runs another
    scheme's step (``Step.scheme``: the generation task runs SWORDS's step 1).
    """
    _SCHEMES[scheme.name] = scheme
    _offer_to_benchmarks()
    return scheme


def unregister(name: str) -> None:
    from annotation.llm.prompts import candidate_prompt_withdraw
    from annotation.models import scheme_withdraw

    _SCHEMES.pop(name, None)
    scheme_withdraw(name)
    candidate_prompt_withdraw(name)
    _offer_to_benchmarks()


def step_runners() -> set[str]:
    """The schemes that run a step of another registered scheme (``Step.scheme``)."""
    return {step.scheme for scheme in _SCHEMES.values() for step in scheme.steps if step.scheme}


def benchmark_schemes() -> list[AnnotationScheme]:
    """The registered schemes a benchmark may take (not those that only run another's step), by name."""
    runners = step_runners()
    return [scheme for scheme in registered() if scheme.name not in runners]


def _offer_to_benchmarks() -> None:
    # Imported here: ``schemes`` is imported as an app before the models are ready.
    from annotation.llm.prompts import candidate_prompt_offer, candidate_prompt_withdraw
    from annotation.models import scheme_offer, scheme_withdraw

    runners = step_runners()
    for scheme in _SCHEMES.values():
        if scheme.name in runners:
            scheme_withdraw(scheme.name)
            candidate_prompt_withdraw(scheme.name)
        else:
            scheme_offer(name=scheme.name, title=scheme.title, default=scheme.default)
            # The prompt a language model is asked for its candidates (docs/candidates.md), if any.
            prompt = scheme_candidate_prompt(scheme)
            if prompt is None:
                candidate_prompt_withdraw(scheme.name)
            else:
                candidate_prompt_offer(scheme=scheme.name, template=prompt.template, refusal=prompt.refusal)


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


def scheme_package(scheme: AnnotationScheme) -> str | None:
    """The package that holds ``scheme``'s plug-ins: the package of its class's module.

    ``schemes.<name>`` for a scheme defined in its package's ``__init__``; a scheme nested in
    another's package (``schemes.swords.proposals``) has its own; a scheme defined elsewhere, as the
    tests' toy scheme is, keeps them in its own package the same way. None for a scheme defined in
    a top-level module, which has no package to hold plug-ins.
    """
    module = sys.modules[type(scheme).__module__]
    package = module.__name__ if hasattr(module, "__path__") else module.__package__
    return package or None


def load_plugins(room: str) -> list[str]:
    """Import the plug-ins of ``room`` (:data:`PLUGINS`) of every registered scheme that has them.

    A scheme's plug-ins sit in its package (:func:`scheme_package`: ``schemes.<name>.figures``).
    Importing a plug-in registers what it declares; a plug-in imported before is not run again.
    Returns the plug-in modules of the registered schemes, in the registry's order.
    """
    loaded: list[str] = []
    for scheme in registered():
        package = scheme_package(scheme)
        if package is None:
            continue
        for plugin, plugged_into in PLUGINS.items():
            name = f"{package}.{plugin}"
            if plugged_into == room and importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
                loaded.append(name)
    return loaded


__all__ = [
    "PLUGINS",
    "AnnotationScheme",
    "UnknownScheme",
    "benchmark_schemes",
    "get_scheme",
    "load_plugins",
    "register",
    "registered",
    "scheme_package",
    "step_runners",
    "unregister",
]
