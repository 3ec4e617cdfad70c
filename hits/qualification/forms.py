"""The researcher's form that builds the qualification test on its page: from an uploaded gold file,
or from a finished benchmark's clear scores (``hits.qualification.gold.ClearScores``)."""

from __future__ import annotations

from django import forms

from hits.qualification.gold import ClearScores

FROM_FILE = "file"
FROM_SCORES = "scores"


class QualificationBuildForm(forms.Form):
    source = forms.ChoiceField(
        choices=[(FROM_FILE, "an uploaded gold file"), (FROM_SCORES, "a finished benchmark's clear scores")],
        widget=forms.RadioSelect,
        initial=FROM_FILE,
        label="Gold items from",
    )
    gold_file = forms.FileField(
        required=False, label="Gold file", help_text="JSONL or CSV: context, target, offset, candidate, expected."
    )
    from_benchmark = forms.SlugField(required=False, label="Benchmark", help_text="This one, or another you can see.")
    min_labels = forms.IntegerField(
        min_value=1, max_value=10_000, initial=ClearScores.min_labels, label="At least this many labels"
    )
    accept_min = forms.FloatField(
        min_value=0, max_value=1, initial=ClearScores.accept_min, label="Accept: score at least"
    )
    reject_max = forms.FloatField(
        min_value=0, max_value=1, initial=ClearScores.reject_max, label="Reject: score at most"
    )
    length = forms.IntegerField(min_value=1, max_value=1000, initial=10, label="Items per attempt")
    pass_mark = forms.FloatField(
        min_value=0, max_value=1, initial=0.8, label="Pass mark", help_text="Share of answers as expected, e.g. 0.8."
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0, label="Seed")

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("source") == FROM_FILE and not data.get("gold_file"):
            self.add_error("gold_file", "Choose a gold file to upload.")
        if data.get("source") == FROM_SCORES and not data.get("from_benchmark"):
            self.add_error("from_benchmark", "Name the benchmark whose clear scores give the gold items.")
        return data
