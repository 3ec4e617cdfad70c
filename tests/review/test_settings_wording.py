"""Every setting on a benchmark's settings page and on the batch form speaks to people: a label that
is not its code name, a one-line explanation, and the unit of a number."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from django.test import Client

from annotation.models import Benchmark, scheme_choices
from review.signals import SIGNAL_WORDING, SignalSettings
from schemes import get_scheme
from tests.base import Cast

pytestmark = pytest.mark.django_db

SETTING = re.compile(r'<div class="setting" id="setting-(\w+)">(.*?)</div>\s*(?=<div class="setting"|<p>)', re.S)


def _settings(page: str) -> dict[str, tuple[str, str, bool]]:
    """Each setting of the page: (its label's words, its explanation, whether it takes a number)."""
    found = {}
    for name, body in SETTING.findall(page):
        label = re.search(r"<label[^>]*>(.*?)</label>", body, re.S)
        explanation = re.search(r'<div class="muted">(.*?)</div>', body, re.S)
        assert label, f"{name} has no label"
        words = html.unescape(re.sub(r"<[^>]+>|\s+", " ", label.group(1))).replace("locked", "").strip()
        found[name] = (words, html.unescape(explanation.group(1)) if explanation else "", 'type="number"' in body)
    return found


@pytest.mark.parametrize("scheme_name", sorted({name for name, _ in scheme_choices()}))
def test_every_setting_has_a_label_an_explanation_and_a_unit(scheme_name: str, cast: Cast) -> None:
    benchmark = Benchmark.objects.create(name=f"worded-{scheme_name}", scheme=scheme_name)
    client = Client()
    client.force_login(cast.researcher)
    page = client.get(f"/benchmarks/{benchmark.name}/settings/").content.decode()
    found = _settings(page)
    scheme_fields = {field.name for field in dataclasses.fields(get_scheme(benchmark).settings_type)}
    signal_fields = {field.name for field in dataclasses.fields(SignalSettings)}
    assert scheme_fields | signal_fields | {"reward", "seed"} <= set(found)
    for name, (label, explanation, number) in found.items():
        assert label != name.replace("_", " "), f"{name} is labelled with its code name"
        assert explanation and "\n" not in explanation.strip(), f"{name} has no one-line explanation"
        if number:
            assert re.search(r"\((?:[A-Za-z ,0-9]+)\)$", label), f"{name} does not say its unit: {label}"
    # Each label is the one written for people where the setting is declared.
    for field in dataclasses.fields(get_scheme(benchmark).settings_type):
        assert field.metadata["label"] and found[field.name][0].startswith(field.metadata["label"])
        assert found[field.name][0].endswith(f"({field.metadata['unit']})")
    for name, (label, _, unit) in SIGNAL_WORDING.items():
        assert found[name][0] == f"{label} ({unit})"
    # The two names people met on the page before.
    assert "identical max chance" not in page and "burst max key ratio" not in page


def test_the_batch_form_labels_its_numbers_with_their_units(cast: Cast) -> None:
    benchmark = Benchmark.objects.create(name="batch-words")
    client = Client()
    client.force_login(cast.researcher)
    page = client.get(f"/benchmarks/{benchmark.name}/batches/").content.decode()
    for label in ("Reward per assignment (dollars)", "Time to submit (minutes)", "Assignments per HIT (workers)"):
        assert f">{label}<" in page
    assert ">Assignment minutes<" not in page
