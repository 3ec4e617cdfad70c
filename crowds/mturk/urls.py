"""MTurk's public page, by random token (hits.models.new_public_token); the database-id form only sends a
published, open HIT on to its token URL (docs/mturk.md)."""

from django.urls import URLPattern, path, re_path

from crowds.mturk.views import mturk_hit, mturk_hit_by_id

urlpatterns: list[URLPattern] = [
    re_path(r"^mturk/hit/(?P<token>[A-Za-z0-9_-]{20,32})/$", mturk_hit, name="mturk-hit"),
    path("mturk/hit/<int:hit_id>/", mturk_hit_by_id, name="mturk-hit-by-id"),
]
