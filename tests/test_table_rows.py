# ruff: noqa: E501 (the reference loops are the templates' lines as they were)
"""The long tables built in Python (``crowdlex.rows``) show what the template loops they replace showed.

Each test renders the table's body twice from the same rows: with the template loop the page held
before (kept here as the reference) and with the row function the page now calls, and compares the
two as a reader sees them (whitespace between tags aside). The rows hold a value with markup
(``<script>``), which both must show as text, and each optional part of a cell both ways.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from analysis.adjudication.selectors import item_page
from analysis.browser.core import Cell
from analysis.rows import TARGET_COLUMNS, browser_rows, candidate_rows, side_by_side_rows, target_rows
from analysis.targets import target_page, target_search
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Candidate, CandidateStage, Target
from crowdlex.rows import id_url, rows, when
from crowds.interface import remote_backend_names
from hits import selectors
from hits.models import Batch
from hits.rows import batch_hit_rows
from hits.services import batch_clone, hits_generate
from review.adjudication import candidate_override_set, overrides_apply_set
from tests.base import Cast
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import build_benchmark
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


def seen(html: str) -> str:
    """``html`` as a reader sees it: runs of whitespace one space, none between tags."""
    return re.sub(r"\s+", " ", html).replace("> <", "><").strip()


def reference(loop: str, **context: object) -> str:
    """The template loop ``loop`` rendered with ``context``, as the page rendered it."""
    return Template("{% load hits_tags moments pipeline_tags %}" + loop).render(Context(context))


def test_a_value_with_markup_is_escaped_and_a_safe_fragment_is_not() -> None:
    built = rows('<td title="{}">{}{}</td>', [(SCRIPT, '"quoted" & more', when(True, "<b>{}</b>", SCRIPT))])
    assert str(built) == (
        '<td title="&lt;script&gt;alert(1)&lt;/script&gt;">&quot;quoted&quot; &amp; more'
        "<b>&lt;script&gt;alert(1)&lt;/script&gt;</b></td>"
    )
    assert when(False, "<b>{}</b>", SCRIPT) == ""
    assert when(1, '<span class="badge">x</span>') == '<span class="badge">x</span>'


def test_every_kind_of_value_is_shown_as_format_html_shows_it() -> None:
    from decimal import Decimal

    from django.utils.html import format_html
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy

    class Markup:
        def __html__(self) -> str:
            return "<i>own</i>"

        def __str__(self) -> str:
            return "<i>text</i>"

    values: list[object] = [7, -3, True, None, 2.5, Decimal("1.50"), SCRIPT, "a & b", mark_safe("<b>safe</b>")]
    values += [gettext_lazy("Reduce <now>"), Markup(), ""]
    row_html = "".join("<td>{}</td>" for _ in values)
    expected = "".join(format_html(row_html, *row) for row in (values, values[::-1]))  # type: ignore[arg-type]
    assert str(rows(row_html, [values, values[::-1]])) == expected


@pytest.mark.parametrize("route", ["hit-detail", "target-detail", "batch-detail", "people-detail"])
def test_a_row_link_is_the_reversed_url_of_its_id(route: str) -> None:
    url = id_url(route)
    assert [url(pk) for pk in (1, 42, 918273645)] == [reverse(route, args=[pk]) for pk in (1, 42, 918273645)]


@pytest.fixture
def batch() -> Batch:
    benchmark: Benchmark = build_benchmark("rows")
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    first, second = batch.hits.order_by("id")[:2]
    for name in ["w1", "w2", "w3"]:  # the first HIT complete
        make_assignment(first, name)
    make_assignment(second, "w4", status="claimed", seconds=None)  # one in flight
    Target.objects.filter(pk=first.target_id).update(word=SCRIPT, pos="")
    return batch


BATCH_HITS_LOOP = """
  {% for hit in page %}
    <tr>
      <td><a href="{% url 'hit-detail' hit.pk %}">#{{ hit.pk }}</a></td>
      <td><a href="{% url 'target-detail' hit.target_id %}">{{ hit.target.word }}</a> <span class="muted">({% if hit.target.pos %}{{ hit.target.get_pos_display }}, {% endif %}target {{ hit.target_id }})</span></td>
      <td class="num">{{ hit.part|add:1 }}</td>
      <td class="num">{{ hit.assignments_valid }} / {{ hit.assignments_required }}{% if hit.assignments_valid >= hit.assignments_required %} <span class="badge ok">complete</span>{% endif %}</td>
      <td class="num">{{ hit.assignments_in_flight }}</td>
    </tr>
  {% endfor %}
"""


def test_the_batch_pages_hits_show_as_the_template_showed_them(batch: Batch) -> None:
    page = selectors.batch_hits_page(batch=batch, number=None, per_page=100)
    built = seen(batch_hit_rows(page.object_list))
    assert built == seen(reference(BATCH_HITS_LOOP, page=list(selectors.batch_hits(batch=batch))))
    assert "&lt;script&gt;" in built and "<script>" not in built
    assert built.count("complete</span>") == 1 and built.count('<td class="num">1</td></tr>') == 1  # in flight
    assert "(target " in built and "(adjective, target " in built


SIDE_BY_SIDE_LOOP = """
  {% for line in page.candidates %}
    <tr data-candidate="{{ line.candidate.pk }}">
      <th scope="row">{{ line.candidate.text }}</th>
      {% for cell in line.cells %}<td>{% if cell %}<span class="badge label-{{ cell }}">{{ cell }}</span>{% else %}<span class="muted">—</span>{% endif %}</td>{% endfor %}
      <td class="num">{{ line.imported }}</td>
      {% for count in line.value_counts %}<td class="num">{{ count }}</td>{% endfor %}
      <td class="num">{% if line.score is not None %}{{ line.score|floatformat:2 }}{% else %}—{% endif %}{% if line.score != line.crowd_score %}<div class="muted small">crowd {% if line.crowd_score is not None %}{{ line.crowd_score|floatformat:2 }}{% else %}—{% endif %}</div>{% endif %}</td>
      <td class="category">{{ line.category }}</td>
      <td>
        {% if line.decision %}<p class="decision"><strong>{{ line.decision }}</strong>: {{ line.reason }}</p>{% endif %}
        {% if line.candidate.stage != "excluded" %}
        <form method="post" action="{% url 'adjudication-decide' benchmark.name target.pk %}" class="decide">{% csrf_token %}
          <input type="hidden" name="candidate" value="{{ line.candidate.pk }}">
          <label>Decision for “{{ line.candidate.text }}”
            <select name="decision">
              <option value="">no decision (the crowd's)</option>
              {% for value, label in page.decisions %}<option value="{{ value }}"{% if value == line.decision %} selected{% endif %}>{{ label }}</option>{% endfor %}
            </select></label>
          <label>Reason <textarea name="reason" rows="2" maxlength="{{ reason_max }}">{{ line.reason }}</textarea></label>
          <button type="submit">Save decision</button>
        </form>
        {% endif %}
      </td>
    </tr>
  {% endfor %}
"""


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
@pytest.mark.parametrize("applied", [False, True])
def test_the_adjudication_items_candidates_show_as_the_template_showed_them(
    cast: Cast, scheme_name: str, applied: bool
) -> None:
    """Each scheme's item, its candidates decided (a reason with markup), excluded and named with
    markup, with the decisions applied to the scores or kept beside them."""
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__isnull=False).first()
    assert target is not None
    candidates = list(Candidate.objects.filter(target=target).order_by("pk"))
    if candidates:
        candidate_override_set(candidate=candidates[0], decision="inconceivable", reason=SCRIPT, by=cast.researcher)
        Candidate.objects.filter(pk=candidates[-1].pk).update(stage=CandidateStage.EXCLUDED)
        Candidate.objects.filter(pk=candidates[0].pk).update(text=SCRIPT)
    overrides_apply_set(benchmark=benchmark, apply=applied, by=cast.researcher)
    page = item_page(target=target)
    token = "a-token"
    built = side_by_side_rows(
        page, benchmark=benchmark, csrf_input=str(reference("{% csrf_token %}", csrf_token=token)), reason_max=500
    )
    expected = reference(
        SIDE_BY_SIDE_LOOP, page=page, benchmark=benchmark, target=target, reason_max=500, csrf_token=token
    )
    assert seen(built) == seen(expected)
    assert "<script>" not in built and (not candidates or "&lt;script&gt;" in built)


TARGETS_LOOP = """
  {% for target in page %}
    <tr>
      <td class="num">{{ target.pk }}</td>
      <td><a href="{% url 'target-detail' target.pk %}">{{ target.word }}</a>{% if target.lemma and target.lemma != target.word %} <span class="muted">({{ target.lemma }})</span>{% endif %}</td>
      <td>{{ target.get_pos_display }}</td>
      <td>{{ target.stage|target_stage:benchmark }}</td>
      <td class="num">{{ target.candidate_count|default:0 }}</td>
      <td class="muted">{{ target.context.text|truncatechars:100 }}</td>
    </tr>
  {% endfor %}
"""


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_targets_show_as_the_template_showed_them(cast: Cast, scheme_name: str) -> None:
    """Each scheme's targets (its stages in its words), one named with markup and a lemma of its
    own, one without candidates, one with a context longer than the column shows."""
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    first, second = Target.objects.filter(benchmark=benchmark).order_by("pk")[:2]
    Target.objects.filter(pk=first.pk).update(word=SCRIPT, lemma=SCRIPT + "s")
    Candidate.objects.filter(target=second).delete()
    first.context.text = "A long context, " * 10 + SCRIPT
    first.context.save()
    found = target_search(benchmark=benchmark)
    built = target_rows(found.values(*TARGET_COLUMNS), benchmark=benchmark)
    assert seen(built) == seen(reference(TARGETS_LOOP, page=found, benchmark=benchmark))
    assert "<script>" not in built and "(&lt;script&gt;alert(1)&lt;/script&gt;s)" in built and "…" in built


CANDIDATES_LOOP = """
  {% for row in page.candidates %}
    <tr>
      <td class="num">{{ row.candidate.pk }}</td>
      <td>{{ row.candidate.text }}{% if row.candidate.cefr %} <span class="muted">{{ row.candidate.cefr }}</span>{% endif %}</td>
      <td>{{ row.candidate.sources|join:", "|default:"—" }}</td>
      <td>{{ row.candidate.stage|candidate_stage:benchmark }}</td>
      {% for value, count, workers in row.by_value %}
        <td class="num">{{ count }}{% if workers %}<div class="muted small">{{ workers|join:", " }}</div>{% endif %}</td>
      {% endfor %}
      <td class="num">{% if row.score is not None %}{{ row.score|floatformat:2 }}{% else %}—{% endif %}</td>
      {% if page.with_posteriors %}<td class="num">{% if row.posterior_dawid_skene is not None %}{{ row.posterior_dawid_skene|floatformat:2 }}{% else %}—{% endif %}</td>
      <td class="num">{% if row.posterior_mace is not None %}{{ row.posterior_mace|floatformat:2 }}{% else %}—{% endif %}</td>{% endif %}
      <td>{{ row.category }}{% if row.not_counted %} <span class="muted">({{ row.not_counted }} filtered label{{ row.not_counted|pluralize }} not counted)</span>{% endif %}</td>
      <td class="num">{% if row.flags %}<a href="#flags">{{ row.flags }}</a>{% else %}0{% endif %}</td>
      <td>{% if row.candidate.stage != "excluded" %}
        <form method="post" action="{% url 'candidate-exclude' row.candidate.pk %}" class="inline">{% csrf_token %}
          <input type="hidden" name="next" value="{{ request.get_full_path }}">
          <button type="submit">Exclude</button>
        </form>{% endif %}</td>
    </tr>
  {% endfor %}
"""


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
@pytest.mark.parametrize("posteriors", [False, True])
def test_the_targets_candidates_show_as_the_template_showed_them(
    cast: Cast, scheme_name: str, posteriors: bool
) -> None:
    """Each scheme's target (its stages in its words): candidates with and without a CEFR level,
    sources (with markup, or none), an excluded one, filtered labels (one and several), flags, and
    the posteriors shown (one missing) or not; the page's address holds markup."""
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    target = Target.objects.filter(benchmark=benchmark, hits__assignments__isnull=False).first()
    assert target is not None
    candidates = list(Candidate.objects.filter(target=target).order_by("pk"))
    if candidates:
        Candidate.objects.filter(pk=candidates[0].pk).update(text=SCRIPT, cefr="B2", sources=[SCRIPT, "coinco"])
        Candidate.objects.filter(pk=candidates[1].pk).update(sources=[])
        Candidate.objects.filter(pk=candidates[-1].pk).update(stage=CandidateStage.EXCLUDED)
    shown = {candidate.pk: (0.125, None) for candidate in candidates} if posteriors else None
    page = target_page(target=Target.objects.select_related("benchmark", "context").get(pk=target.pk), posteriors=shown)
    for number, row in enumerate(page.candidates):
        row.not_counted, row.flags = number % 3, number % 2
    request = RequestFactory().get(f"/targets/{target.pk}/", {"from": SCRIPT})
    token = "a-token"
    built = candidate_rows(
        page,
        benchmark=benchmark,
        csrf_input=str(reference("{% csrf_token %}", csrf_token=token)),
        next_path=request.get_full_path(),
    )
    expected = reference(CANDIDATES_LOOP, page=page, benchmark=benchmark, request=request, csrf_token=token)
    assert seen(built) == seen(expected)
    assert "<script>" not in built and (not candidates or "&lt;script&gt;" in built)


BROWSER_LOOP = """
  {% for row in rows %}
    <tr>{% for cell, numeric in row %}<td{% if numeric %} class="num"{% endif %}>{% if cell.url %}<a href="{{ cell.url }}">{{ cell.text }}</a>{% else %}{{ cell.text }}{% endif %}</td>{% endfor %}</tr>
  {% endfor %}
"""


def test_the_data_browsers_cells_show_as_the_template_showed_them() -> None:
    """Cells with and without a link, numeric or not, text and links holding markup."""
    shown = [
        [(Cell(SCRIPT, url=f"/x/?q={SCRIPT}&a=1"), False), (Cell("12"), True), (Cell(""), False)],
        [(Cell("a & b", url="/t/1/"), True), (Cell(SCRIPT), False), (Cell("0", url=""), True)],
    ]
    built = browser_rows(shown)
    assert seen(built) == seen(reference(BROWSER_LOOP, rows=shown))
    assert "<script>" not in built and '<td class="num"><a href="/t/1/">a &amp; b</a></td>' in built


def _batches_shown(batches: list[Batch]) -> list[tuple[Batch, Any, Any]]:
    progress = selectors.batches_progress(batches=batches)
    throughput = selectors.batches_throughput(batches=batches, progress=progress)
    return [(batch, progress[batch.pk], throughput[batch.pk]) for batch in batches]


def test_the_batches_show_byte_for_byte_as_the_template_showed_them(batch: Batch) -> None:
    """Every kind of row: open, paused, closed and draft, with and without a parent, done or not,
    with a median time and costs in thousands, on each crowd; and the table without a batch."""
    benchmark = batch.benchmark
    targets = sorted(set(batch.hits.values_list("target_id", flat=True)))
    clone, *others = [
        batch_clone(batch=batch, created_by=None, targets=targets, backend="local", force=True) for _ in range(5)
    ]
    Batch.objects.filter(pk=others[0].pk).update(paused_at=timezone.now())
    Batch.objects.filter(pk=others[1].pk).update(status="closed", paused_at=timezone.now())
    Batch.objects.filter(pk=others[3].pk).update(status="closed")
    Batch.objects.filter(pk=others[2].pk).update(status="draft", reward=Decimal("1234.56"), parent=batch)
    for backend in ("local", *sorted(remote_backend_names())):
        Batch.objects.filter(pk=clone.pk).update(backend=backend)
        benchmark_changed(benchmark_id=benchmark.pk)
        shown = _batches_shown(list(Batch.objects.filter(benchmark=benchmark).order_by("-id")))
        assert {row[0].status for row in shown} == {"open", "closed", "draft"}
        assert any(row[0].parent_id for row in shown) and any(not row[0].parent_id for row in shown)
        assert any(row[1].median_seconds for row in shown) and any(row[1].median_seconds is None for row in shown)
        assert any(row[1].cost_projected > 1000 for row in shown)
        assert any(row[2].last_hour for row in shown)
        built = render_to_string("hits/_batch_table.html", {"rows": shown})
        assert built == Template(BATCH_TABLE).render(Context({"rows": shown}))
        assert built.count("<tr>") == 1 + len(shown)
    empty = render_to_string("hits/_batch_table.html", {"rows": []})
    assert empty == Template(BATCH_TABLE).render(Context({"rows": []}))
    assert "No batch yet." in empty


# The batches' table as its template looped over its rows (templates/hits/_batch_table.html).
BATCH_TABLE = """{% load hits_tags moments %}<div class="table-scroll" role="region" aria-label="Batches" tabindex="0"><table>
  <thead><tr>
    <th>Batch</th><th>Step</th><th>Backend</th><th>Status</th><th>HITs complete</th>
    <th class="num">In flight</th><th class="num">Last hour</th><th>ETA</th><th class="num">Median time</th><th class="num">Cost so far</th><th class="num">Projected</th><th>Created</th>
  </tr></thead>
  <tbody>
  {% for batch, progress, throughput in rows %}
    <tr>
      <td><a href="{% url 'batch-detail' batch.pk %}">#{{ batch.pk }}</a></td>
      <td>{{ batch.step }}{% if batch.parent_id %} <span class="muted">of #{{ batch.parent_id }}</span>{% endif %}</td>
      <td>{{ batch.get_backend_display }}</td>
      <td><span class="badge{% if batch.paused_at %} warn{% elif batch.status == 'open' %} ok{% elif batch.status == 'closed' %}{% else %} warn{% endif %}">{% if batch.paused_at and batch.status == 'open' %}paused{% else %}{{ batch.get_status_display }}{% endif %}</span></td>
      <td>
        {{ progress.hits_complete }} / {{ progress.hits_total }}
        <div class="progress" role="progressbar" aria-label="Batch {{ batch.pk }}: HITs complete" aria-valuemin="0" aria-valuemax="100" aria-valuenow="{{ progress.percent_complete|floatformat:'0u' }}"><span style="width: {{ progress.percent_complete|floatformat:'1u' }}%"></span></div>
      </td>
      <td class="num">{{ progress.assignments_in_flight }}</td>
      <td class="num" data-batch-cell="last_hour">{{ throughput.last_hour }}</td>
      <td data-batch-cell="eta">{{ throughput.eta_words }} <span class="muted">({{ throughput.basis }})</span></td>
      <td class="num">{{ progress.median_seconds|duration }}</td>
      <td class="num" data-batch-cell="so_far">${{ progress.cost_so_far|floatformat:2 }}</td>
      <td class="num" data-batch-cell="projected">${{ progress.cost_projected|floatformat:2 }}</td>
      <td>{{ batch.created_at|when }}</td>
    </tr>
  {% empty %}
    <tr><td colspan="12" class="muted">No batch yet.</td></tr>
  {% endfor %}
  </tbody>
</table></div>
"""


@pytest.mark.parametrize("prefix", ["/", "/lab/"])
def test_a_kept_id_url_is_the_url_the_url_tag_gives(prefix: str) -> None:
    """``{% id_url %}`` (hits_tags), a route's pattern reversed once per process and script prefix:
    the batch page's links of its id, under any prefix, and anything but a whole number as ``{% url %}``."""
    from django.urls import get_script_prefix, set_script_prefix

    before = get_script_prefix()
    routes = ["batch-detail", "batch-live", "batch-design", "batch-export", "batch-clone", "batch-close"]
    try:
        for each in ("/", prefix):
            set_script_prefix(each)
            for route in routes:
                for pk in (1, 42, 918273645, 7_000_000_001):
                    kept = Template("{% load hits_tags %}{% id_url route pk %}").render(
                        Context({"route": route, "pk": pk})
                    )
                    assert kept == Template("{% url route pk %}").render(Context({"route": route, "pk": pk}))
                    assert kept.startswith(each)
        assert Template("{% load hits_tags %}{% id_url 'batch-list' 'a-name' %}").render(Context()) == reverse(
            "batch-list", args=["a-name"]
        )
    finally:
        set_script_prefix(before)


def test_the_hours_of_a_batchs_work_show_as_the_template_loop_showed_them() -> None:
    counts = [0, 3, 1234, 7, 0, 98765]
    loop = '{% for count in counts %}<td class="num">{{ count }}</td>{% endfor %}'
    built = Template("{% load hits_tags %}{% hour_cells counts %}").render(Context({"counts": counts}))
    assert built == Template(loop).render(Context({"counts": counts}))
    assert built.count("<td") == len(counts)
