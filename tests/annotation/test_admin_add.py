"""The admin's add pages answer a form with its errors, never a server error, whatever is left out."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from annotation.models import Benchmark, Candidate, Context, Target

pytestmark = pytest.mark.django_db

ADDABLE = sorted(
    (model._meta.app_label, model._meta.model_name)
    for model in admin.site._registry
    if model._meta.app_label in {"annotation", "hits", "review"}
)


def test_a_target_without_a_context_is_refused_with_the_field_named(root: Client) -> None:
    benchmark = Benchmark.objects.create(name="bench")
    url = reverse("admin:annotation_target_add")
    form = {"benchmark": benchmark.pk, "word": "sat", "offset": "8", "pos": "verb", "stage": "reduce", "extra": "{}"}
    form |= {"candidates-TOTAL_FORMS": "0", "candidates-INITIAL_FORMS": "0"}

    response = root.post(url, {**form, "context": ""})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["context"] == ["This field is required."]
    assert not Target.objects.exists()

    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    response = root.post(url, {**form, "context": context.pk, "offset": ""})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["offset"] == ["This field is required."]

    response = root.post(url, {**form, "context": context.pk})
    assert response.status_code == 302
    assert Target.objects.get().offset == 8


@pytest.mark.parametrize(("app", "model"), ADDABLE)
def test_an_empty_add_form_answers_its_errors(root: Client, app: str, model: str) -> None:
    url = reverse(f"admin:{app}_{model}_add")
    if root.get(url).status_code == 403:
        return  # no add page: read-only rows, written by the services alone
    inlines = root.get(url).context["inline_admin_formsets"]
    management = {
        f"{formset.formset.prefix}-{key}": "0" for formset in inlines for key in ("TOTAL_FORMS", "INITIAL_FORMS")
    }
    response = root.post(url, management)
    assert response.status_code == 200, f"{app}.{model}: {response.status_code}"
    assert response.context["adminform"].form.errors, f"{app}.{model} took an empty form"


def test_a_candidate_edited_into_a_duplicate_of_its_targets_is_refused_on_its_text(root: Client) -> None:
    benchmark = Benchmark.objects.create(name="bench")
    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    target = Target.objects.create(benchmark=benchmark, context=context, word="sat", offset=8, pos="verb")
    kept = Candidate.objects.create(target=target, text="Perched")
    edited = Candidate.objects.create(target=target, text="rested")
    form = {"target": target.pk, "sources": "[]", "stage": edited.stage, "extra": "{}", "cefr": "", "external_id": ""}

    response = root.post(reverse("admin:annotation_candidate_change", args=[edited.pk]), {**form, "text": " perched "})

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors["text"]
    assert errors and f"“Perched” (id {kept.pk})" in errors[0]
    edited.refresh_from_db()
    assert edited.text == "rested"

    response = root.post(reverse("admin:annotation_candidate_add"), {**form, "text": "PERCHED"})
    assert response.status_code == 200 and "text" in response.context["adminform"].form.errors
    assert Candidate.objects.count() == 2

    # Its own text, in another case, is no duplicate.
    response = root.post(reverse("admin:annotation_candidate_change", args=[edited.pk]), {**form, "text": "Rested"})
    assert response.status_code == 302
    edited.refresh_from_db()
    assert edited.text == "Rested"
