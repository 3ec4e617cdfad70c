"""Forms of the researcher's benchmark pages."""

from django import forms
from django.contrib.auth.models import User

from annotation.importers import import_formats, validate_upload_size
from annotation.models import Benchmark, Role, default_scheme, scheme_choices
from annotation.roles import is_researcher


def format_choices() -> list[tuple[str, str]]:
    """Every registered import format (schemes add theirs), after detection from the content."""
    return [("auto", "detect from the content (JSONL, CSV, SWORDS JSON)")] + [
        (found.name, found.title) for found in import_formats()
    ]


class BenchmarkCreateForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="letters, digits, hyphens, underscores; used in URLs")
    title = forms.CharField(max_length=200, required=False)
    scheme = forms.ChoiceField(choices=scheme_choices, initial=default_scheme)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if Benchmark.objects.filter(name=name).exists():
            raise forms.ValidationError("A benchmark with this name exists already.")
        return name


class BenchmarkImportForm(forms.Form):
    file = forms.FileField(help_text="any format below, gzipped or not", validators=[validate_upload_size])
    format = forms.ChoiceField(choices=format_choices, initial="auto", required=False)
    origin = forms.CharField(
        max_length=200,
        required=False,
        help_text="the name its labels are kept under; default: the file name. Keep it to import a file again.",
    )
    new_label_set = forms.BooleanField(
        required=False,
        label="These labels are a new label set",
        help_text="a new annotation of candidates that another import labelled (a re-annotation). Without it, "
        "labels for candidates that already have imported labels are refused, so none is counted twice.",
    )

    def clean_format(self) -> str:
        return self.cleaned_data.get("format") or "auto"


class AccessGrantForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="a researcher's account")
    role = forms.TypedChoiceField(choices=Role.choices, coerce=int, initial=Role.VIEWER)

    def clean_username(self) -> User:
        username: str = self.cleaned_data["username"].strip()
        user = User.objects.filter(username=username).first()
        if user is None or not is_researcher(user):
            raise forms.ValidationError("No researcher has this account.")
        return user
