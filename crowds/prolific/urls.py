"""Prolific's study page, by random token (hits.models.new_public_token); the database-id form only sends
a published, open study on to its token URL (docs/prolific.md)."""

from django.urls import URLPattern, path, re_path

from crowds.prolific.views import prolific_study, prolific_study_by_id

urlpatterns: list[URLPattern] = [
    re_path(r"^prolific/study/(?P<token>[A-Za-z0-9_-]{20,32})/$", prolific_study, name="prolific-study"),
    path("prolific/study/<int:batch_id>/", prolific_study_by_id, name="prolific-study-by-id"),
]
