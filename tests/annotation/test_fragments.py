"""Parts of a page rendered once per change of the benchmark (annotation.fragments, the
``{% benchmark_fragment %}`` tag): served again until the benchmark changes, never after a change,
never to another role, and never holding a reader's own values."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.template import Context, RequestContext, Template
from django.test import Client, RequestFactory

from annotation.access import Role, access_grant, benchmark_for
from annotation.changes import benchmark_changed
from annotation.fragments import FragmentLeak
from annotation.models import Benchmark, Worker
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit
from tests.base import Cast, make_user
from tests.scheme_benchmarks import scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

FRAGMENT = Template(
    "{% load fragments %}<p>{{ mine }}</p>"
    '{% benchmark_fragment benchmark "part" %}[{{ value }}]'
    "{% if can_edit %}<button>Delete everything</button>{% endif %}{% endbenchmark_fragment %}"
)


@pytest.fixture(autouse=True)
def _one_figures_period(settings: Any) -> None:
    """Fragments also age with the figures' period (``figures_key``): one period for the whole test."""
    settings.BENCHMARK_FIGURES_MAX_AGE_SECONDS = 10**9


def _render(
    user: User, benchmark: Benchmark, template: Template = FRAGMENT, path: str = "/page/", **values: Any
) -> str:
    request = RequestFactory().get(path)
    request.user = user
    # As a view has it: the benchmark as benchmark_for gives it to this reader.
    mine = benchmark_for(user, benchmark.name, Role.VIEWER)
    role = Role(mine.__dict__["_crowdlex_viewer_role"][1])
    return template.render(
        RequestContext(request, {"benchmark": mine, "can_edit": role >= Role.EDITOR, "mine": user.username, **values})
    )


def _part(html: str) -> str:
    match = re.search(r"\[(.*?)\](.*)$", html, re.S)
    assert match is not None, html
    return match.group(0)


def _shared(cast: Cast) -> tuple[Benchmark, User]:
    benchmark, _ = scheme_benchmark("swords", cast)
    viewer = make_user("vera", researcher=True)
    access_grant(benchmark=benchmark, user=cast.researcher, role=Role.OWNER, by=None)
    access_grant(benchmark=benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    return benchmark, viewer


def test_a_fragment_is_served_again_until_the_benchmark_changes_and_rendered_anew_at_once_after(cast: Cast) -> None:
    benchmark, _ = _shared(cast)
    assert _part(_render(cast.researcher, benchmark, value=1)).startswith("[1]")
    # Nothing changed: the part rendered before is served, whatever the figures now say.
    assert _part(_render(cast.researcher, benchmark, value=2)).startswith("[1]")
    benchmark_changed(benchmark_id=benchmark.pk)
    assert _part(_render(cast.researcher, benchmark, value=2)).startswith("[2]")


def test_an_owners_controls_are_never_served_to_a_viewer(cast: Cast) -> None:
    benchmark, viewer = _shared(cast)
    owners = _render(cast.researcher, benchmark, value=1)
    assert "Delete everything" in owners
    viewers = _render(viewer, benchmark, value=1)
    assert "Delete everything" not in viewers
    # And the other way round: the viewer's part, rendered first, is not the owner's.
    benchmark_changed(benchmark_id=benchmark.pk)
    assert "Delete everything" not in _render(viewer, benchmark, value=2)
    assert "Delete everything" in _render(cast.researcher, benchmark, value=2)


def test_the_readers_own_values_stay_outside_the_fragment(cast: Cast) -> None:
    benchmark, viewer = _shared(cast)
    assert "<p>rita</p>" in _render(cast.researcher, benchmark, value=1)
    assert "<p>vera</p>" in _render(viewer, benchmark, value=1)
    for inside in ("{% csrf_token %}", "{{ user.username }}", "{{ request.path }}", "{{ messages }}", "{{ user }}"):
        template = Template(
            '{% load fragments %}{% benchmark_fragment benchmark "leak" %}' + inside + "{% endbenchmark_fragment %}"
        )
        with pytest.raises(FragmentLeak):
            _render(cast.researcher, benchmark, template=template)


def test_each_page_of_a_table_and_each_query_has_its_own_fragment(cast: Cast) -> None:
    benchmark, _ = _shared(cast)
    assert _part(_render(cast.researcher, benchmark, path="/page/?page=1", value=1)).startswith("[1]")
    assert _part(_render(cast.researcher, benchmark, path="/page/?page=2", value=2)).startswith("[2]")
    assert _part(_render(cast.researcher, benchmark, path="/page/?page=1", value=3)).startswith("[1]")


def test_a_fragment_rendered_outside_a_request_is_rendered_each_time(cast: Cast) -> None:
    benchmark, _ = _shared(cast)
    template = Template(
        '{% load fragments %}{% benchmark_fragment benchmark "x" %}[{{ value }}]{% endbenchmark_fragment %}'
    )
    assert template.render(Context({"benchmark": benchmark, "value": 1})) == "[1]"
    assert template.render(Context({"benchmark": benchmark, "value": 2})) == "[2]"


def _collected(html: str) -> list[str]:
    """The step cards' "collected / needed" figures of the pipeline page."""
    return re.findall(r'data-live="step\d+\.labels">([^<]*)<', html)


def test_the_pipeline_page_shows_a_submit_at_once_and_its_form_keeps_each_readers_token(cast: Cast) -> None:
    benchmark, _ = scheme_benchmark("swords", cast, sentences=tuple(f"The cat sat on mat {n}." for n in range(4)))
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.researcher)
    url = f"/benchmarks/{benchmark.name}/pipeline/"
    before = client.get(url)
    assert before.status_code == 200
    assert _collected(before.content.decode()) == _collected(client.get(url).content.decode())

    worker = Worker.objects.get(user=cast.bob)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})
    after = client.get(url).content.decode()
    assert _collected(after) != _collected(before.content.decode())

    other = Client(enforce_csrf_checks=True)
    other.force_login(make_user("vera", researcher=True))
    theirs = other.get(url)
    # The fragment is the same; the refresh form's token is each reader's own.
    tokens = [
        re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page) for page in (after, theirs.content.decode())
    ]
    assert tokens[0] and tokens[1]
    assert _collected(theirs.content.decode()) == _collected(after)
    assert set(tokens[0]).isdisjoint(tokens[1])
