"""Form widgets are rendered once per process for each distinct widget and kept
(crowdlex.form_rendering; docs/design.md §7, "Kept widgets"): the HTML is Django's own for every
kind of widget, and a widget differing in any value it shows is rendered anew."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy, override

from crowdlex.form_rendering import KeptWidgetsRenderer, kept_widgets


@pytest.fixture(autouse=True)
def _empty() -> Any:
    kept_widgets.clear()
    yield
    kept_widgets.clear()


class Settings(forms.Form):
    title = forms.CharField(max_length=40)
    note = forms.CharField(widget=forms.Textarea, required=False)
    reward = forms.DecimalField(decimal_places=2)
    count = forms.IntegerField(disabled=True)
    auto = forms.BooleanField(required=False)
    scheme = forms.ChoiceField(choices=[("a", "Alpha"), ("b", mark_safe("<b>Beta</b>")), ("c", "<i>Gamma</i>")])
    kinds = forms.MultipleChoiceField(
        choices=[("x", gettext_lazy("Yes")), ("y", "Why")], widget=forms.CheckboxSelectMultiple
    )
    when = forms.DateField(widget=forms.SelectDateWidget(years=[2025, 2026]))


def _html(initial: dict[str, Any], renderer: Any) -> list[str]:
    form = Settings(initial=initial, renderer=renderer)
    return [str(field) for field in form]


INITIAL = {"title": 'a "quoted" <title>', "note": "x\ny", "reward": "1.50", "count": 1, "auto": True, "scheme": "b"}


def test_the_kept_html_is_djangos_own_for_every_widget(settings: Any) -> None:
    settings.FORM_WIDGET_CACHE_CHARACTERS = 1_000_000
    django = _html(INITIAL, DjangoTemplates())
    first = _html(INITIAL, KeptWidgetsRenderer())
    assert len(kept_widgets) > 0
    assert first == django
    assert _html(INITIAL, KeptWidgetsRenderer()) == django  # from what was kept


def test_a_widget_differing_in_any_value_is_rendered_anew(settings: Any) -> None:
    settings.FORM_WIDGET_CACHE_CHARACTERS = 1_000_000
    renderer = KeptWidgetsRenderer()
    _html(INITIAL, renderer)
    for change in ({"title": "another"}, {"auto": False}, {"count": True}, {"scheme": "c"}, {"reward": "1.5"}):
        assert _html({**INITIAL, **change}, renderer) == _html({**INITIAL, **change}, DjangoTemplates()), change
    # A choice's label shown escaped and the same text marked safe are two widgets.
    plain = forms.Select(choices=[("b", "<b>Beta</b>")]).render("scheme", "b", renderer=renderer)
    assert "&lt;b&gt;Beta" in plain
    safe = forms.Select(choices=[("b", mark_safe("<b>Beta</b>"))]).render("scheme", "b", renderer=renderer)
    assert "<b>Beta</b>" in safe


def test_a_label_in_another_language_is_rendered_in_it(settings: Any) -> None:
    settings.FORM_WIDGET_CACHE_CHARACTERS = 1_000_000
    renderer = KeptWidgetsRenderer()
    seen = {}
    for language in ("en", "de", "en", "de"):
        with override(language):
            seen[language] = _html(INITIAL, renderer)
            assert seen[language] == _html(INITIAL, DjangoTemplates()), language
    assert seen["en"] != seen["de"]


def test_the_kept_html_stays_within_its_limit_and_none_is_kept_at_zero(settings: Any) -> None:
    settings.FORM_WIDGET_CACHE_CHARACTERS = 400
    renderer = KeptWidgetsRenderer()
    for index in range(20):
        forms.TextInput().render("title", f"value {index}", renderer=renderer)
    assert 0 < len(kept_widgets) < 20
    assert sum(len(html) for html in kept_widgets._entries.values()) <= 400
    kept_widgets.clear()
    settings.FORM_WIDGET_CACHE_CHARACTERS = 0
    assert forms.TextInput().render("title", "v", renderer=renderer) == forms.TextInput().render(
        "title", "v", renderer=DjangoTemplates()
    )
    assert len(kept_widgets) == 0


def test_the_platform_renders_its_forms_through_it() -> None:
    from django.forms.renderers import get_default_renderer

    assert isinstance(get_default_renderer(), KeptWidgetsRenderer)
