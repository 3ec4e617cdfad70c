"""The data browser's pages: a table of a benchmark a page at a time, its CSV, and saved views."""

from __future__ import annotations

from urllib.parse import parse_qsl

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from analysis.browser.core import POSITION, BrowserError, Context, View, csv_chunks, page_read, view_read, view_size
from analysis.browser.services import (
    SavedViewRefused,
    saved_view_delete,
    saved_view_rename,
    saved_view_save,
    saved_views,
)
from analysis.browser.tables import TABLES
from analysis.models import SavedView
from analysis.rows import browser_filters, browser_head, browser_rows, browser_sorts, browser_tables
from annotation.access import Role, benchmark_for, object_for, viewer_role
from annotation.models import Benchmark
from crowdlex.kept_pages import resumable
from crowdlex.permissions import researcher_required


@researcher_required
@require_GET
def data_home(request: HttpRequest, name: str) -> HttpResponse:
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    return redirect("data-items", name=benchmark.name)


@researcher_required
@require_GET
def data_table(request: HttpRequest, name: str, table: str) -> HttpResponse:
    """One table of the benchmark, filtered, sorted and a page at a time (GET parameters)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    found = TABLES[table]
    context = Context.of(benchmark, request.user)
    page, error = None, ""
    view: View | None = None
    try:
        view = view_read(found, context, request.GET)
        page = page_read(found, context, view)
    except BrowserError as problem:
        error = str(problem)
    columns = page.columns if page else found.columns(context)
    numeric = [column.numeric for column in columns]
    shown_rows = [list(zip(row, numeric, strict=True)) for row in page.rows] if page else []
    tables = [(other.name, other.title(context)) for other in TABLES.values()]
    filters = [(each, request.GET.get(each.key, "")) for each in found.filters(context)]
    shown = {
        "benchmark": benchmark,
        "table": found,
        "table_title": found.title(context),
        "note": found.note(context),
        "tables": tables,
        "tables_nav": browser_tables(tables, found.name, context.links, benchmark),
        "filters": filters,
        "filter_fields": browser_filters(filters),
        "sort_options": browser_sorts(columns, view),
        "head": browser_head(columns, view) if page and view else "",
        "columns": columns,
        "page": page,
        "rows": shown_rows,
        "body": browser_rows(shown_rows),
        "view": view,
        "error": error,
        "saved": [saved for saved in saved_views(benchmark=benchmark) if saved.table == found.name],
        "can_delete_any": (viewer_role(request.user, benchmark) or 0) >= Role.EDITOR,
        "csv_cap": settings.DATA_BROWSER_CSV_MAX_ROWS,
    }
    return render(request, "analysis/browser/table.html", shown, status=400 if error else 200)


@researcher_required
@require_GET
def data_table_csv(request: HttpRequest, name: str, table: str) -> HttpResponseBase:
    """Every row of the view (not only a page) as CSV, streamed, no cell a spreadsheet formula; a view
    above DATA_BROWSER_CSV_MAX_ROWS rows is refused (narrow it, or use an export)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    found = TABLES[table]
    context = Context.of(benchmark, request.user, links=False)
    back = reverse(f"data-{table}", args=[benchmark.name])
    try:
        view = view_read(found, context, request.GET)
    except BrowserError as problem:
        messages.error(request, str(problem))
        return redirect(back)
    cap = settings.DATA_BROWSER_CSV_MAX_ROWS
    if view_size(found, context, view, cap=cap) > cap:
        messages.error(
            request,
            f"This view holds more than {cap:,} rows, the most one download takes (DATA_BROWSER_CSV_MAX_ROWS): "
            "narrow it with a filter, or use an export.",
        )
        return redirect(f"{back}?{view.query()}")
    chunks = csv_chunks(found, context, view)
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.name}-{table}.csv"'
    # A body longer than the kept pages' cap keeps its head (docs/design.md §7, "Kept pages").
    return resumable(response, chunks)


@researcher_required
@require_POST
def data_view_save(request: HttpRequest, name: str) -> HttpResponse:
    """Save the filters and sort of a table's view under a name (a viewer may: it changes no data)."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    table = request.POST.get("table", "")
    if table not in TABLES:
        messages.error(request, f"The data browser has no table {table[:40]!r}: nothing was saved.")
        return redirect("data-items", name=benchmark.name)
    found = TABLES[table]
    context = Context.of(benchmark, request.user)
    back = reverse(f"data-{table}", args=[benchmark.name])
    try:
        # The filters are read as the page reads them: a saved view always opens.
        view = view_read(found, context, _query_dict(request.POST.get("query", "")))
        saved = saved_view_save(
            benchmark=benchmark, table=table, name=request.POST.get("name", ""), query=view.saved_query, by=request.user
        )
    except (BrowserError, SavedViewRefused) as problem:
        messages.error(request, str(problem))
        return redirect(back)
    messages.success(request, f"View “{saved.name}” saved.")
    return redirect(f"{back}?{saved.query}")


@researcher_required
@require_POST
def data_view_delete(request: HttpRequest, name: str, view_id: int) -> HttpResponse:
    """Delete a saved view: the researcher who saved it, or an editor of the benchmark."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    saved = _own_view(request, benchmark, view_id, "Deleting")
    saved_view_delete(view=saved, by=request.user)
    messages.success(request, f"View “{saved.name}” deleted.")
    return redirect(f"data-{saved.table}", name=benchmark.name)


@researcher_required
@require_POST
def data_view_rename(request: HttpRequest, name: str, view_id: int) -> HttpResponse:
    """Rename a saved view: the researcher who saved it, or an editor of the benchmark."""
    benchmark = benchmark_for(request.user, name, Role.VIEWER)
    saved = _own_view(request, benchmark, view_id, "Renaming")
    try:
        renamed = saved_view_rename(view=saved, name=request.POST.get("name", ""), by=request.user)
    except SavedViewRefused as problem:
        messages.error(request, str(problem))
    else:
        messages.success(request, f"View “{saved.name}” renamed “{renamed.name}”.")
    return redirect(f"data-{saved.table}", name=benchmark.name)


def _own_view(request: HttpRequest, benchmark: Benchmark, view_id: int, doing: str) -> SavedView:
    saved = object_for(request.user, SavedView.objects.filter(benchmark=benchmark), Role.VIEWER, pk=view_id)
    if saved.created_by_id != request.user.pk and (viewer_role(request.user, benchmark) or 0) < Role.EDITOR:
        raise PermissionDenied(f"{doing} another researcher's saved view needs the editor role in the benchmark.")
    return saved


def _query_dict(query: str) -> dict[str, str]:
    """The filters and sort of a query string; a page position is dropped (a saved view opens at its start)."""
    return {key: value for key, value in parse_qsl(query[:4000]) if key not in POSITION}
