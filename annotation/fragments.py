"""Parts of a researcher's page rendered once per change of the benchmark (docs/design.md §7,
"Rendered fragments").

The tables and figures of a page built from a benchmark's cached figures (``annotation.changes``)
are the same for every reader until the benchmark changes, yet rendering them (thousands of cells
on the pipeline page) costs more than everything else the page does once the figures are cached.
``{% benchmark_fragment %}`` (``annotation/templatetags/fragments.py``) keeps such a part as
rendered HTML in the shared cache under a key made of:

- the benchmark's ``figures_key``, read from the database once per request: a change of the
  benchmark (or the figures' period ending) gives a new key, so a fragment rendered before a change
  is never served after it;
- the fragment's name and the page's path and query string (the page of a table, a filter);
- the viewer's role in the benchmark (``annotation.access.viewer_role``), so controls rendered for
  an owner or an editor are never served to a viewer;
- the active language, the benchmark's scheme and any value the template names besides.

What belongs to one reader stays outside a fragment: the CSRF token, messages, the account and the
request are hidden while a fragment renders (``HIDDEN``), and using one inside it is an error
(``FragmentLeak``) rather than a token or a name served to the next reader.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject
from django.utils.translation import get_language

from annotation.access import viewer_role
from annotation.changes import figures_key, page_cache_get, page_cache_set
from annotation.models import Benchmark, Role

T = TypeVar("T")

# What a fragment may not read: it would belong to one reader and be served to the next.
HIDDEN = ("csrf_token", "user", "perms", "messages", "request", "is_researcher", "is_annotator")
# The figures key of each benchmark a request read, kept on the request: every fragment of one
# page is of the same state of the benchmark.
_REQUEST_KEYS = "_crowdlex_figures_keys"


class FragmentLeak(RuntimeError):
    """A fragment used a value that belongs to one reader (``HIDDEN``)."""


class Hidden:
    """Stands for a reader's value while a fragment renders: any use of it raises ``FragmentLeak``
    (Django's templates let that exception through, unlike a missing variable)."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def _refuse(self) -> FragmentLeak:
        return FragmentLeak(
            f"'{object.__getattribute__(self, '_name')}' belongs to one reader and cannot be used inside "
            "a benchmark fragment: move it out of {% benchmark_fragment %}"
        )

    def __getattr__(self, attribute: str) -> Any:
        raise self._refuse()

    def __getitem__(self, item: Any) -> Any:
        raise self._refuse()

    def __bool__(self) -> bool:
        raise self._refuse()

    def __str__(self) -> str:
        raise self._refuse()

    def __iter__(self) -> Any:
        raise self._refuse()

    def __len__(self) -> int:
        raise self._refuse()


def later(compute: Callable[[], T]) -> T:
    """``compute()`` when a template first reads it: a page's figures passed so are not read at all
    when the fragment that shows them comes from the cache."""
    return SimpleLazyObject(compute)  # type: ignore[return-value]


def request_figures_key(request: HttpRequest, benchmark_id: int) -> str:
    """The benchmark's ``figures_key``, read once per request."""
    keys: dict[int, str] = request.__dict__.setdefault(_REQUEST_KEYS, {})
    if benchmark_id not in keys:
        keys[benchmark_id] = figures_key(benchmark_id=benchmark_id)
    return keys[benchmark_id]


_RENDERED_AS = "_crowdlex_fragments_rendered_as"
MISSING = object()


def fragments_rendered_as(request: HttpRequest, role: Role | None) -> HttpRequest:
    """Key the fragments ``request`` renders as a reader of ``role`` in their benchmark would find
    them (the role ``benchmark_for`` gave). For the task that renders a page's fragments before its
    first reader (``annotation.warm``): its request has no reader, and the fragments it renders hold
    nothing of one (``HIDDEN``)."""
    request.__dict__[_RENDERED_AS] = role
    return request


def fragment_key(*, request: HttpRequest, benchmark: Benchmark, name: str, vary: Iterable[object] = ()) -> str:
    """The cache key of the fragment ``name`` of the request's page (one statement, the benchmark's
    figures key, the first time a request asks; the viewer's role is the one ``benchmark_for``
    checked, else one more)."""
    role = request.__dict__.get(_RENDERED_AS, MISSING)
    if role is MISSING:
        role = viewer_role(request.user, benchmark)
    query = sorted(request.GET.lists())
    varying = repr((request.path, query, int(role) if role is not None else None, get_language(), benchmark.scheme))
    varying += repr([str(value) for value in vary])
    digest = hashlib.sha256(varying.encode()).hexdigest()[:32]
    return f"benchmark-fragment:{benchmark.pk}:{request_figures_key(request, benchmark.pk)}:{name}:{digest}"


def fragment_cached(*, key: str, render: Callable[[], str]) -> str:
    """The fragment under ``key`` from the shared cache, else ``render()`` stored there for as long
    as the figures it shows (``BENCHMARK_FIGURES_MAX_AGE_SECONDS``)."""
    found = page_cache_get(key)
    if found is not None:
        return str(found)
    html = render()
    page_cache_set(key, html, timeout=settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS)
    return html
