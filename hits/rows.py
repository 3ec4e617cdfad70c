"""The long tables of the batch and HIT pages, each row built by one format (``crowdlex.rows``).

Each function is the body of a table its template names; a cell's value comes from the selector
that read the row (``hits.selectors``), escaped as ``{{ }}`` escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.utils.safestring import SafeString

from annotation.models import PartOfSpeech
from crowdlex.rows import id_url, rows, when

POS_LABELS = dict(PartOfSpeech.choices)

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
    assignments over those required (marked complete when reached) and those in flight."""
    hit_url, target_url = id_url("hit-detail"), id_url("target-detail")
    return rows(
        HIT_ROW,
        (
            (
                hit_url(hit["pk"]),
                hit["pk"],
                target_url(hit["target_id"]),
                hit["target__word"],
                when(hit["target__pos"], "{}, ", POS_LABELS.get(hit["target__pos"], hit["target__pos"])),
                hit["target_id"],
                hit["part"] + 1,
                hit["assignments_valid"],
                hit["assignments_required"],
                when(
                    hit["assignments_valid"] >= hit["assignments_required"], ' <span class="badge ok">complete</span>'
                ),
                hit["assignments_in_flight"],
            )
            for hit in hits
        ),
    )
