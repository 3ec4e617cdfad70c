"""The target search (GET parameters, so a search is a link that can be shared or bookmarked)."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import PartOfSpeech, TargetStage


class TargetSearchForm(forms.Form):
    word = forms.CharField(required=False, max_length=200, help_text="word or lemma, or a target id")
    pos = forms.ChoiceField(required=False, choices=[("", "any"), *PartOfSpeech.choices], label="Part of speech")
    stage = forms.ChoiceField(required=False, choices=[("", "any"), *TargetStage.choices])
    score_min = forms.FloatField(required=False, min_value=0, max_value=1, label="Score from")
    score_max = forms.FloatField(required=False, min_value=0, max_value=1, label="to")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        low, high = data.get("score_min"), data.get("score_max")
        if low is not None and high is not None and low > high:
            self.add_error("score_max", "must not be below the lower end of the range")
        return data

    def search_arguments(self) -> dict[str, Any]:
        """The cleaned data as keyword arguments of ``analysis.targets.target_search``."""
        return {name: self.cleaned_data.get(name) for name in ("word", "pos", "stage", "score_min", "score_max")}
