# ruff: noqa: E501 (the reference template is the form's template as it was)
"""The batch form on the batches' page, its fields kept per process unbound (``hits.forms.batch_form_fields``;
docs/design.md §7, "Kept widgets"): the page shows byte for byte what the form's template rendered
from a form built for the request, for every scheme, and after each change the fields show (an
annotator account added or taken away, the benchmark's seed, the crowds, the language) the page
shows it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.template import Context, Template
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.models import Benchmark
from annotation.roles import ANNOTATORS
from crowds.interface import remote_backend_names
from hits import forms as batch_forms
from hits.forms import BatchCloneForm, BatchCreateForm
from hits.models import Batch
from schemes import get_scheme
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_benchmark

pytestmark = pytest.mark.django_db

# templates/hits/_batch_form.html as it rendered the form built for each request.
FORM_TEMPLATE = """{% comment %}The form that creates a batch (hits.forms.BatchCreateForm); `action` where it posts.{% endcomment %}
<form method="post" action="{{ action }}" novalidate>
  {% csrf_token %}
  {% if form.non_field_errors %}<ul class="messages">{% for error in form.non_field_errors %}<li class="error">{{ error }}</li>{% endfor %}</ul>{% endif %}
  {% for field in form %}
    {% if field.field.widget.input_type == "checkbox" %}
      <label>{{ field }} {{ field.label }}</label>
    {% else %}
      <label for="{{ field.id_for_label }}">{{ field.label }}</label>
      {{ field }}
    {% endif %}
    {% if field.help_text %}<div class="muted">{{ field.help_text }}{% if field.name == "targets" and benchmark %} <a href="{% url 'target-list' benchmark.name %}">Find target ids</a>.{% endif %}</div>{% endif %}
    {% for error in field.errors %}<div class="error">{{ error }}</div>{% endfor %}
  {% endfor %}
  {% if benchmark %}<p class="muted" id="batch-form-design">The new batch's instructions, title and choices start from the benchmark's <a href="{% url 'design-template' benchmark.name %}">task design template</a>; change the batch's own afterwards on its task design page.</p>{% endif %}
  {% if preview %}{% include "hits/_batch_preview.html" %}{% endif %}
  <p><button type="submit" name="preview" value="1">Preview cost</button> <button type="submit" class="primary">Generate HITs</button></p>
</form>
"""


def _form_shown(page: str) -> str:
    start = page.index('<form method="post" action="/benchmarks/')
    return page[start : page.index("</form>", start) + len("</form>\n")]


def _untokened(form: str) -> str:
    """The form without its token (a new mask on every page)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", form)


def _form_built(benchmark: Benchmark, page: str) -> str:
    """The form as the template rendered it from a form built now, with the page's own token."""
    token = page.split('name="csrfmiddlewaretoken" value="', 2)[2].split('"', 1)[0]
    form = BatchCreateForm(initial={"seed": benchmark.seed}, steps=get_scheme(benchmark).steps)
    action = reverse("batch-list", args=[benchmark.name])
    context = {"form": form, "benchmark": benchmark, "action": action, "csrf_token": token}
    rendered = Template(FORM_TEMPLATE).render(Context(context))
    return rendered[rendered.index("<form") :]


def _page(client: Client, benchmark: Benchmark) -> str:
    response = client.get(reverse("batch-list", args=[benchmark.name]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_form_shows_byte_for_byte_as_rendered_and_follows_each_change(
    client: Client, cast: Cast, scheme_name: str, settings: Any
) -> None:
    client.force_login(cast.researcher)
    benchmark, _ = scheme_benchmark(scheme_name, cast)

    def shown_as_built() -> str:
        page = _page(client, benchmark)
        form = _form_shown(page)
        assert form == _form_built(Benchmark.objects.get(pk=benchmark.pk), page)
        return _untokened(form)

    first = shown_as_built()
    assert shown_as_built() == first  # read again: kept
    dora = User.objects.create_user("dora-annotates")
    dora.groups.add(Group.objects.get_or_create(name=ANNOTATORS)[0])
    added = shown_as_built()
    assert "dora-annotates" in added and "dora-annotates" not in first
    dora.groups.clear()
    assert "dora-annotates" not in shown_as_built()
    Benchmark.objects.filter(pk=benchmark.pk).update(seed=987654)
    benchmark.refresh_from_db()
    assert 'value="987654"' in shown_as_built()
    settings.CROWD_BACKENDS = ["crowds.local.LocalBackend"]
    assert shown_as_built().count("<option") < added.count("<option")


def test_a_language_of_its_own_and_no_form_kept(client: Client, cast: Cast, settings: Any, monkeypatch: Any) -> None:
    client.force_login(cast.researcher)
    benchmark, _ = scheme_benchmark("swords", cast)
    page = _page(client, benchmark)
    keys = list(batch_forms._FIELDS_SHOWN)
    assert any(key[0] == benchmark.name for key in keys)
    with translation.override("de"):
        kept = batch_forms.batch_form_fields(benchmark=benchmark, steps=get_scheme(benchmark).steps)
    assert len(batch_forms._FIELDS_SHOWN) == len(keys) + 1 and kept in _form_shown(page)
    settings.BATCH_FORMS_KEPT = 0
    monkeypatch.setattr(batch_forms, "_FIELDS_SHOWN", {})
    page = _page(client, benchmark)
    assert _form_shown(page) == _form_built(benchmark, page)
    assert batch_forms._FIELDS_SHOWN == {}


# The clone form's fields on a batch's page (templates/hits/batch_detail.html) as its loop rendered them.
CLONE_FIELDS = """    {% for field in clone_form %}
      {% if field.field.widget.input_type == "checkbox" %}<label>{{ field }} {{ field.label }}</label>
      {% else %}<label for="{{ field.id_for_label }}">{{ field.label }}</label>{{ field }}{% endif %}
      {% if field.help_text %}<div class="muted">{{ field.help_text }}{% if field.name == "targets" %} <a href="{% url 'target-list' batch.benchmark.name %}">Find target ids</a>.{% endif %}</div>{% endif %}
    {% endfor %}
"""


def _clone_shown(page: str) -> str:
    start = page.index('/clone/" novalidate>')
    start = page.index("\n", page.index("csrfmiddlewaretoken", start)) + 1
    return page[start : page.index("    <p><button", start)]


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_clone_form_shows_as_rendered_on_every_crowd(client: Client, cast: Cast, scheme_name: str) -> None:
    client.force_login(cast.researcher)
    _, batch = scheme_benchmark(scheme_name, cast)
    seen = set()
    for backend in ("local", *sorted(remote_backend_names()), "local"):
        Batch.objects.filter(pk=batch.pk).update(backend=backend)
        batch.refresh_from_db()
        page = client.get(reverse("batch-detail", args=[batch.pk])).content.decode()
        built = Template(CLONE_FIELDS).render(
            Context({"clone_form": BatchCloneForm(initial={"backend": backend}), "batch": batch})
        )
        assert _clone_shown(page) == built
        assert f'value="{backend}" selected' in built
        seen.add(built)
    assert len(seen) == 1 + len(remote_backend_names())
