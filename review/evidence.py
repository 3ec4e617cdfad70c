"""A flag's evidence as the flagged-workers page shows it (docs/design.md §9, "The flagged-workers
page"): each table of rows cut to ``FLAGGED_WORKERS_EVIDENCE_ROWS`` with a link to the page showing
every row, rendered once per content and kept in the shared cache.

A control-accuracy flag lists up to fifty failed assignments with their control rows (18 KB of
HTML): rendering that table on every request cost more than the rest of the page. A flag's evidence
changes with a refresh or a run of the bot signals, which move no key the page reads, so the kept
HTML is found by its content rather than invalidated: its key is a digest of everything the
fragment shows (the flag's reason and evidence, the worker's name, the rows shown, the link to all
of them), of the fragment's template and of the language and the URL prefix it renders under. A
flag whose evidence changed has another key and is rendered again; nothing stale can be found.
The flag's state (active, cleared, by whom) and its forms stay outside the fragment, in the page.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.template.loader import get_template, render_to_string
from django.urls import get_script_prefix
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from review.models import FlagReason, WorkerFlag

EVIDENCE_TEMPLATE = "review/_flag_evidence.html"
# The evidence list each kind of flag shows as rows (the others show figures only).
ROWS_OF: dict[str, str] = {
    FlagReason.CONTROL_ACCURACY: "failed_assignments",
    FlagReason.FAST: "fastest",
    FlagReason.STRAIGHT_LINE: "examples",
    FlagReason.IDENTICAL: "others",
}


def evidence_shown(reason: str, evidence: Any, rows: int | None) -> tuple[Any, int, int]:
    """The evidence with its list of rows cut to the first ``rows`` (None: all), with how many rows
    it has and how many are shown. Pure."""
    name = ROWS_OF.get(reason)
    if name is None or not isinstance(evidence, dict) or not isinstance(evidence.get(name), list):
        return evidence, 0, 0
    listed = evidence[name]
    if rows is None or len(listed) <= rows:
        return evidence, len(listed), len(listed)
    return {**evidence, name: listed[:rows]}, len(listed), rows


@functools.cache
def _template_digest() -> str:
    """The fragment's template, so a changed template is never served from what an older one rendered."""
    source = getattr(getattr(get_template(EVIDENCE_TEMPLATE), "template", None), "source", "")
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def _context(flag: WorkerFlag, worker_name: str, rows: int | None, all_rows_url: str) -> dict[str, Any]:
    shown, total, count = evidence_shown(flag.reason, flag.evidence, rows)
    return {
        "reason": flag.reason,
        "ev": shown,
        "worker_name": worker_name,
        "rows_total": total,
        "rows_shown": count,
        "all_rows_url": f"{all_rows_url}#flag-{flag.pk}",
    }


def _key(context: Mapping[str, Any]) -> str:
    content = json.dumps(
        [_template_digest(), get_language(), get_script_prefix(), context], sort_keys=True, default=str
    )
    return f"flag-evidence:{hashlib.sha256(content.encode()).hexdigest()[:40]}"


def render_evidence(context: Mapping[str, Any]) -> str:
    return render_to_string(EVIDENCE_TEMPLATE, dict(context))


def flags_evidence_html(
    *, flags: Sequence[WorkerFlag], worker_names: Mapping[int, str], rows: int | None, all_rows_url: str
) -> dict[int, SafeString]:
    """Each flag's evidence as HTML, by the flag's id: from the shared cache (one read for every
    flag of the page), else rendered and kept there for ``FLAG_EVIDENCE_KEPT_SECONDS``.
    ``rows``: rows shown of each list (None: all); ``all_rows_url``: the page that shows them all."""
    contexts = {flag.pk: _context(flag, worker_names[flag.worker_id], rows, all_rows_url) for flag in flags}
    keys = {pk: _key(context) for pk, context in contexts.items()}
    kept = cache.get_many(sorted(set(keys.values()))) if keys else {}
    rendered: dict[str, str] = {}
    found: dict[int, SafeString] = {}
    for pk, context in contexts.items():
        key = keys[pk]
        html = kept.get(key, rendered.get(key))
        if html is None:
            html = rendered[key] = render_evidence(context)
        # Rendered by the template engine, which escaped every value it took from the evidence.
        found[pk] = mark_safe(str(html))
    if rendered:
        cache.set_many(rendered, timeout=settings.FLAG_EVIDENCE_KEPT_SECONDS)
    return found
