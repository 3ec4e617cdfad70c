"""The target search (GET parameters, so a search is a link that can be shared or bookmarked)."""

from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Benchmark, PartOfSpeech, TargetStage
from schemes import get_scheme
from schemes.progress import stage_name


class TargetSearchForm(forms.Form):
    word = forms.CharField(required=False, max_length=200, help_text="word or lemma, or a target id")
    pos = forms.ChoiceField(required=False, choices=[("", "any"), *PartOfSpeech.choices], label="Part of speech")
    stage = forms.ChoiceField(required=False, choices=[("", "any"), *TargetStage.choices])
    score_min = forms.FloatField(required=False, min_value=0, max_value=1, label="Score from")
    score_max = forms.FloatField(required=False, min_value=0, max_value=1, label="to")

    def __init__(self, *args: Any, benchmark: Benchmark | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if benchmark is not None:
            # The stages in the words of the benchmark's scheme (SWORDS's "step 2: reduce", ProLex's "being judged").
            names = get_scheme(benchmark).target_stage_names
            self.fields["stage"].choices = [("", "any"), *((value, stage_name(names, value)) for value in names)]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        low, high = data.get("score_min"), data.get("score_max")
        if low is not None and high is not None and low > high:
            self.add_error("score_max", "must not be below the lower end of the range")
        return data

    def search_arguments(self) -> dict[str, Any]:
        """The cleaned data as keyword arguments of ``analysis.targets.target_search``."""
        return {name: self.cleaned_data.get(name) for name in ("word", "pos", "stage", "score_min", "score_max")}
