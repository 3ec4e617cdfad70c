"""The long tables of the batch and HIT pages, each row built by one format (``crowdlex.rows``).

Each function is the body of a table its template names; a cell's value comes from the selector
that read the row (``hits.selectors``), escaped as ``{{ }}`` escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.template.defaultfilters import floatformat
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from annotation.models import PartOfSpeech
from annotation.templatetags.moments import when as moment
from crowdlex.rows import id_url, rows, when

POS_LABELS = dict(PartOfSpeech.choices)


def duration(seconds: float | None) -> str:
    """Seconds as "45 s", "3 min 05 s" or "1 h 02 min"; an em dash when unknown."""
    if seconds is None:
        return "—"
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    minutes, rest = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


HIT_ROW = """
    <tr>
      <td><a href="{}">#{}</a></td>
      <td><a href="{}">{}</a> <span class="muted">({}target {})</span></td>
      <td class="num">{}</td>
      <td class="num">{} / {}{}</td>
      <td class="num">{}</td>
    </tr>
  """


def batch_hit_rows(hits: Iterable[Mapping[str, Any]]) -> SafeString:
    """The batch page's HITs (templates/hits/batch_detail.html), as ``batch_hits_page`` reads them:
    each HIT's link, its target's word and part of speech, its part (counted from 1), its valid
    assignments over those required (marked complete when reached) and those in flight. Each row is
    kept in the process by what it shows (at most ``BATCH_HIT_ROWS_KEPT``): a page shown again after
    a submit builds only the rows whose figures the submit moved (docs/design.md §7, "Table rows")."""
    hit_url, target_url = id_url("hit-detail"), id_url("target-detail")
    limit = settings.BATCH_HIT_ROWS_KEPT
    # The links as reversed now (a script prefix moves them) and the language the labels speak.
    kept = _HIT_ROWS_SHOWN.setdefault((hit_url(0), target_url(0), get_language()), {})
    if len(_HIT_ROWS_SHOWN) > 1:
        # Another prefix or language: what another one kept goes, so the bound holds in all.
        for other, theirs in list(_HIT_ROWS_SHOWN.items()):  # a copy: other threads change it
            if theirs is not kept:
                _HIT_ROWS_SHOWN.pop(other, None)  # another thread may have dropped it first
    complete, incomplete = when(True, ' <span class="badge ok">complete</span>'), when(False, "")
    # Each part of speech's part of the cell built once a table, not once a row.
    parts: dict[str, SafeString] = {}

    def pos_part(pos: str) -> SafeString:
        part = parts.get(pos)
        if part is None:
            part = parts[pos] = when(pos, "{}, ", POS_LABELS.get(pos, pos))
        return part

    def built(hit: Mapping[str, Any]) -> str:
        return rows(
            HIT_ROW,
            [
                (
                    hit_url(hit["pk"]),
                    hit["pk"],
                    target_url(hit["target_id"]),
                    hit["target__word"],
                    pos_part(hit["target__pos"]),
                    hit["target_id"],
                    hit["part"] + 1,
                    hit["assignments_valid"],
                    hit["assignments_required"],
                    complete if hit["assignments_valid"] >= hit["assignments_required"] else incomplete,
                    hit["assignments_in_flight"],
                )
            ],
        )

    shown = []
    for hit in hits:
        key = tuple([hit[column] for column in _HIT_ROW_VALUES])
        row = kept.get(key)
        if row is None:
            row = built(hit)
            if limit > 0:
                if len(kept) >= limit:
                    kept.clear()
                kept[key] = row
        shown.append(row)
    return mark_safe("".join(shown))  # each row escaped by ``rows``


# What a row of the batch page's HITs shows (``batch_hit_rows``), the key it is kept by.
_HIT_ROW_VALUES = (
    "pk",
    "target_id",
    "target__word",
    "target__pos",
    "part",
    "assignments_valid",
    "assignments_required",
    "assignments_in_flight",
)
# The rows kept (``batch_hit_rows``), by the links' prefix and the language, then by what each shows.
_HIT_ROWS_SHOWN: dict[tuple[str, str, str | None], dict[tuple[Any, ...], str]] = {}


BATCH_ROW = """
    <tr>
      <td><a href="{}">#{}</a></td>
      <td>{}{}</td>
      <td>{}</td>
      <td><span class="badge{}">{}</span></td>
      <td>
        {} / {}
        <div class="progress" role="progressbar" aria-label="Batch {}: HITs complete" aria-valuemin="0" aria-valuemax="100" aria-valuenow="{}"><span style="width: {}%"></span></div>
      </td>
      <td class="num">{}</td>
      <td class="num" data-batch-cell="last_hour">{}</td>
      <td data-batch-cell="eta">{} <span class="muted">({})</span></td>
      <td class="num">{}</td>
      <td class="num" data-batch-cell="so_far">${}</td>
      <td class="num" data-batch-cell="projected">${}</td>
      <td>{}</td>
    </tr>
  """  # noqa: E501 (a row of the table as the page shows it)


def _badge(batch: Any) -> tuple[str, str]:
    """The status badge's class and text: paused (an open batch paused), open, closed or another."""
    if batch.paused_at:
        kind = " warn"
    elif batch.status == "open":
        kind = " ok"
    elif batch.status == "closed":
        kind = ""
    else:
        kind = " warn"
    return kind, "paused" if batch.paused_at and batch.status == "open" else batch.get_status_display()


def batch_rows(shown: Iterable[tuple[Any, Any, Any]]) -> SafeString:
    """The batches' table (templates/hits/_batch_table.html: the batch list, the benchmark page and
    its live poll), one row per (batch, ``BatchProgress``, ``Throughput``): its link, step and parent,
    crowd, status, HITs complete with their bar, work in flight, the last hour's work and the ETA,
    the median time, the costs and when it was made; numbers shown as the template's filters show
    them (``floatformat``, ``duration``, ``when``)."""
    batch_url = id_url("batch-detail")
    built = []
    for batch, progress, throughput in shown:
        kind, status = _badge(batch)
        percent = progress.percent_complete
        built.append(
            (
                batch_url(batch.pk),
                batch.pk,
                batch.step,
                when(batch.parent_id, ' <span class="muted">of #{}</span>', batch.parent_id),
                batch.get_backend_display(),
                kind,
                status,
                progress.hits_complete,
                progress.hits_total,
                batch.pk,
                floatformat(percent, "0u"),
                floatformat(percent, "1u"),
                progress.assignments_in_flight,
                throughput.last_hour,
                throughput.eta_words,
                throughput.basis,
                duration(progress.median_seconds),
                floatformat(progress.cost_so_far, 2),
                floatformat(progress.cost_projected, 2),
                moment(batch.created_at),
            )
        )
    return rows(BATCH_ROW, built)
