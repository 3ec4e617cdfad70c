"""The data browser's URLs under ``/benchmarks/<name>/data/``: one page and one CSV per table."""

from django.urls import URLPattern, path

from analysis.browser import views
from analysis.browser.tables import TABLES
from crowdlex.kept_pages import BY_NAME, kept_page

urlpatterns: list[URLPattern] = [
    path("benchmarks/<slug:name>/data/", views.data_home, name="data-browser"),
    path("benchmarks/<slug:name>/data/views/", views.data_view_save, name="data-view-save"),
    path("benchmarks/<slug:name>/data/views/<int:view_id>/delete", views.data_view_delete, name="data-view-delete"),
    path("benchmarks/<slug:name>/data/views/<int:view_id>/rename", views.data_view_rename, name="data-view-rename"),
]
for _table in TABLES:
    urlpatterns += [
        path(
            f"benchmarks/<slug:name>/data/{_table}/",
            kept_page(benchmark=BY_NAME)(views.data_table),
            {"table": _table},
            name=f"data-{_table}",
        ),
        path(
            f"benchmarks/<slug:name>/data/{_table}.csv",
            # Kept as its table's page is, when the whole download is small (docs/design.md §7).
            kept_page(benchmark=BY_NAME)(views.data_table_csv),
            {"table": _table},
            name=f"data-{_table}-csv",
        ),
    ]
