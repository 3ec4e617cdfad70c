"""The long tables of the targets', target, adjudication and data browser pages, a row a format
(``crowdlex.rows``).

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
from django.utils.safestring import SafeString, mark_safe

from analysis.adjudication.selectors import ItemPage
from analysis.browser.core import DIRECTION, SORT, Cell, Column, Filter, Links, View
from analysis.targets import CandidateRow, TargetPage
from annotation.models import Benchmark, CandidateStage, PartOfSpeech
from crowdlex.rows import _escaped, id_url, joined, rows, when
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
CANDIDATE_ROW = """
    <tr>
      <td class="num">{}</td>
      <td>{}{}</td>
      <td>{}</td>
      <td>{}</td>
      {}
      <td class="num">{}</td>
      {}
      <td>{}{}</td>
      <td class="num">{}</td>
      <td>{}</td>
    </tr>
  """
WORKERS = '<div class="muted small">{}</div>'
EXCLUDE_FORM = """
        <form method="post" action="{}" class="inline">{}
          <input type="hidden" name="next" value="{}">
          <button type="submit">Exclude</button>
        </form>"""
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


def candidate_rows(page: TargetPage, *, benchmark: Benchmark, csrf_input: str, next_path: str) -> SafeString:
    """The target page's candidates (templates/analysis/target_detail.html), as ``target_page``
    reads them: each one's id, text (and CEFR level), sources, stage in the words of the
    benchmark's scheme, its labels by value with the workers who gave them, its score (and its
    posteriors when the page was asked for them), its category (and the filtered labels not
    counted), its flags and, unless excluded, the form that excludes it and comes back to
    ``next_path``. ``csrf_input`` is the page's own token field."""
    exclude_url = id_url("candidate-exclude")
    stage_names = get_scheme(benchmark).candidate_stage_names
    decimals = functools.cache(two_decimals)

    def by_value(row: CandidateRow) -> SafeString:
        """A cell per value: its count and who gave it."""
        return joined(
            format_html(
                '<td class="num">{}{}</td>',
                count,
                when(workers, '<div class="muted small">{}</div>', ", ".join(workers)),
            )
            for _, count, workers in row.by_value
        )

    def posteriors(row: CandidateRow) -> SafeString:
        return when(
            page.with_posteriors,
            '<td class="num">{}</td>\n      <td class="num">{}</td>',
            decimals(row.posterior_dawid_skene),
            decimals(row.posterior_mace),
        )

    return rows(
        CANDIDATE_ROW,
        (
            (
                row.candidate.pk,
                row.candidate.text,
                when(row.candidate.cefr, ' <span class="muted">{}</span>', row.candidate.cefr),
                ", ".join(str(source) for source in row.candidate.sources) if row.candidate.sources else "—",
                stage_name(stage_names, row.candidate.stage),
                by_value(row),
                decimals(row.score),
                posteriors(row),
                row.category,
                when(
                    row.not_counted,
                    ' <span class="muted">({} filtered label{} not counted)</span>',
                    row.not_counted,
                    "" if row.not_counted == 1 else "s",
                ),
                when(row.flags, '<a href="#flags">{}</a>', row.flags) or "0",
                when(
                    row.candidate.stage != CandidateStage.EXCLUDED,
                    EXCLUDE_FORM,
                    exclude_url(row.candidate.pk),
                    SafeString(csrf_input),
                    next_path,
                ),
            )
            for row in page.candidates
        ),
    )


def browser_rows(rows_shown: Iterable[Iterable[tuple[Cell, bool]]]) -> SafeString:
    """A page of the data browser's table (templates/analysis/browser/table.html): each row's cells
    with whether their column is numeric, a cell with a URL a link. Each cell is written by one
    format with its text and URL escaped as ``format_html`` escapes them (``crowdlex.rows``), not
    built as a fragment of its own (a page of fifty rows has hundreds of cells)."""
    escaped = _escaped
    parts = []
    for row in rows_shown:
        parts.append("\n    <tr>")
        for (text, url, _), numeric in row:
            if url:
                link = _LINKED_NUM if numeric else _LINKED
                parts.append(link.format(escaped(url), escaped(text)))
            else:
                parts.append((_PLAIN_NUM if numeric else _PLAIN).format(escaped(text)))
        parts.append("</tr>\n  ")
    return mark_safe("".join(parts))


_LINKED = '<td><a href="{}">{}</a></td>'
_LINKED_NUM = '<td class="num"><a href="{}">{}</a></td>'
_PLAIN = "<td>{}</td>"
_PLAIN_NUM = '<td class="num">{}</td>'


# The fixed parts of a browser page (templates/analysis/browser/table.html): its filters, its sort's
# choices and its columns' heads, written as the template's loops wrote them.
_FIELD = """
    <span class="search-field">
      <label for="filter-{key}">{label}</label>
      {field}
    </span>
  """
_CHOICE = """
        <select id="filter-{key}" name="{key}">
          <option value="">any</option>
          {options}
        </select>
      """
_INPUTS = {
    "date": """
        <input id="filter-{key}" name="{key}" type="date" value="{value}">
      """,
    "int": """
        <input id="filter-{key}" name="{key}" inputmode="numeric" size="8" value="{value}">
      """,
    "text": """
        <input id="filter-{key}" name="{key}" type="search" size="14" value="{value}">
      """,
}
_HEAD = """
    <th scope="col"{num}{sorted}>
      {title}
    </th>
  """


def browser_tables(tables: Iterable[tuple[str, str]], shown: str, links: Links, benchmark: Benchmark) -> SafeString:
    """The browser's tables, each (name, title) linked but the one ``shown``."""
    escaped = _escaped
    return mark_safe(
        " · ".join(
            f'<strong aria-current="page">{escaped(title)}</strong>'
            if name == shown
            else f'<a href="{escaped(links.table_url(benchmark, name))}">{escaped(title)}</a>'
            for name, title in tables
        )
    )


def browser_filters(filters: Iterable[tuple[Filter, str]]) -> SafeString:
    """The filters' fields of a browser page, each with the value the request gave it."""
    escaped = _escaped
    parts = []
    for found, value in filters:
        key = escaped(found.key)
        if found.kind == "choice":
            options = "".join(
                f'<option value="{escaped(choice)}"{" selected" if choice == value else ""}>{escaped(label)}</option>'
                for choice, label in found.choices
            )
            field = _CHOICE.format(key=key, options=options)
        else:
            field = _INPUTS.get(found.kind, _INPUTS["text"]).format(key=key, value=escaped(value))
        parts.append(_FIELD.format(key=key, label=escaped(found.label), field=field))
    return mark_safe("".join(parts))


def browser_sorts(columns: Iterable[Column], view: View | None) -> SafeString:
    """The choices of the sort: the sortable columns, the view's own selected."""
    escaped = _escaped
    return mark_safe(
        "".join(
            f'<option value="{escaped(column.key)}"{" selected" if view and view.sort == column.key else ""}>'
            f"{escaped(column.title)}</option>"
            for column in columns
            if column.sort is not None
        )
    )


def browser_head(columns: Iterable[Column], view: View) -> SafeString:
    """The columns' heads: a sortable one links the view sorted by it (the other way when it is
    sorted by it already), the sorted one says which way."""
    escaped = _escaped
    parts = []
    arrow = "↓" if view.descending else "↑"
    for column in columns:
        sorted_here = view.sort == column.key
        title = escaped(column.title)
        if column.sort is not None:
            descending = sorted_here and not view.descending
            query = view.query(**{SORT: column.key, DIRECTION: "desc" if descending else "asc"})
            title = f'<a href="?{escaped(query)}">{title}{f" {arrow}" if sorted_here else ""}</a>'
        parts.append(
            _HEAD.format(
                num=' class="num"' if column.numeric else "",
                sorted=f' aria-sort="{"descending" if view.descending else "ascending"}"' if sorted_here else "",
                title=title,
            )
        )
    return mark_safe("".join(parts))


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
