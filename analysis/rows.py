"""The long tables of the targets', target and adjudication pages, each row built by one format (``crowdlex.rows``).

Each function is the body of a table its template names; a cell's value comes from the selector
that read the row, escaped as ``{{ }}`` escapes it. A number shown with two decimals goes through
``floatformat``, as the template showed it (half up, not Python's half to even).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from django.template.defaultfilters import floatformat, truncatechars
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from analysis.adjudication.selectors import ItemPage
from annotation.models import Benchmark, CandidateStage, PartOfSpeech
from crowdlex.rows import id_url, joined, rows, when
from schemes import get_scheme
from schemes.progress import stage_name

POS_LABELS = dict(PartOfSpeech.choices)
TARGET_ROW = """
    <tr>
      <td class="num">{}</td>
      <td><a href="{}">{}</a>{}</td>
      <td>{}</td>
      <td>{}</td>
      <td class="num">{}</td>
      <td class="muted">{}</td>
    </tr>
  """
# The columns of a target the targets' page shows (``target_rows``), read as values.
TARGET_COLUMNS = ("pk", "word", "lemma", "pos", "stage", "candidate_count", "context__text")
SIDE_BY_SIDE_ROW = """
    <tr data-candidate="{}">
      <th scope="row">{}</th>
      {}
      <td class="num">{}</td>
      {}
      <td class="num">{}{}</td>
      <td class="category">{}</td>
      <td>
        {}
        {}
      </td>
    </tr>
  """
OPTION = '<option value="{}"{}>{}</option>'
DECIDE_FORM = """<form method="post" action="{}" class="decide">{}
          <input type="hidden" name="candidate" value="{}">
          <label>Decision for “{}”
            <select name="decision">
              <option value="">no decision (the crowd's)</option>
              {}
            </select></label>
          <label>Reason <textarea name="reason" rows="2" maxlength="{}">{}</textarea></label>
          <button type="submit">Save decision</button>
        </form>"""


def target_rows(targets: Iterable[Mapping[str, Any]], *, benchmark: Benchmark) -> SafeString:
    """The targets' page (templates/analysis/target_list.html), each target's ``TARGET_COLUMNS``:
    its id, its word linked to its page (with its lemma where that differs), its part of speech,
    its stage in the words of the benchmark's scheme, its candidates and its context's first 100
    characters."""
    target_url = id_url("target-detail")
    stage_names = get_scheme(benchmark).target_stage_names
    return rows(
        TARGET_ROW,
        (
            (
                target["pk"],
                target_url(target["pk"]),
                target["word"],
                when(
                    target["lemma"] and target["lemma"] != target["word"],
                    ' <span class="muted">({})</span>',
                    target["lemma"],
                ),
                POS_LABELS.get(target["pos"], target["pos"]),
                stage_name(stage_names, target["stage"]),
                target["candidate_count"] or 0,
                truncatechars(target["context__text"], 100),
            )
            for target in targets
        ),
    )


def label_cell(value: str | None) -> SafeString:
    """A submission's label of the candidate, or a dash where it was not asked."""
    if not value:
        return SafeString('<td><span class="muted">—</span></td>')
    return format_html('<td><span class="badge label-{}">{}</span></td>', value, value)


def two_decimals(score: float | None) -> str:
    """A score as the pages show it: two decimals, or a dash where there is none."""
    return "—" if score is None else floatformat(score, 2)


def side_by_side_rows(page: ItemPage, *, benchmark: Benchmark, csrf_input: str, reason_max: int) -> SafeString:
    """The adjudication item's candidates (templates/analysis/adjudication_item.html), as
    ``item_page`` reads them: each submission's label, the imported labels, the count of each value,
    the score (and the crowd's where a decision set it), the category, the decision and, for a
    candidate not excluded, the form that decides it. ``csrf_input`` is the page's own token field."""
    decide_url = reverse("adjudication-decide", args=[benchmark.name, page.target.pk])
    # Scores repeat (a few ratios of small counts): each distinct one formatted once.
    decimals = functools.cache(two_decimals)

    def options(chosen: str) -> SafeString:
        """The decisions to choose from, the candidate's own selected."""
        return rows(OPTION, ((value, when(value == chosen, " selected"), label) for value, label in page.decisions))

    return rows(
        SIDE_BY_SIDE_ROW,
        (
            (
                line.candidate.pk,
                line.candidate.text,
                joined(label_cell(value) for value in line.cells),
                line.imported,
                rows('<td class="num">{}</td>', ((count,) for count in line.value_counts)),
                decimals(line.score),
                when(
                    line.score != line.crowd_score,
                    '<div class="muted small">crowd {}</div>',
                    decimals(line.crowd_score),
                ),
                line.category,
                when(line.decision, '<p class="decision"><strong>{}</strong>: {}</p>', line.decision, line.reason),
                when(
                    line.candidate.stage != CandidateStage.EXCLUDED,
                    DECIDE_FORM,
                    decide_url,
                    SafeString(csrf_input),
                    line.candidate.pk,
                    line.candidate.text,
                    options(line.decision),
                    reason_max,
                    line.reason,
                ),
            )
            for line in page.candidates
        ),
    )
