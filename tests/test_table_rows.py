# ruff: noqa: E501 (the reference loops are the templates' lines as they were)
"""The long tables built in Python (``crowdlex.rows``) show what the template loops they replace showed.

Each test renders the table's body twice from the same rows: with the template loop the page held
before (kept here as the reference) and with the row function the page now calls, and compares the
two as a reader sees them (whitespace between tags aside). The rows hold a value with markup
(``<script>``), which both must show as text, and each optional part of a cell both ways.
"""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template
from django.urls import reverse

from annotation.models import Benchmark, Target
from crowdlex.rows import id_url, rows, when
from hits import selectors
from hits.models import Batch
from hits.rows import batch_hit_rows
from hits.services import hits_generate
from tests.hits.assignment_data import make_assignment
from tests.hits.generation_data import build_benchmark

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
