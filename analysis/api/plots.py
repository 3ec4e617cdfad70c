"""A benchmark's plots from the API: their names, and each as SVG or PNG."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.plot_files import FILE_TYPES, PlotError, plot_file, plot_filename, plot_names
from annotation.access import Role, benchmark_for
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher


class PlotSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    svg = serializers.CharField(help_text="URL of the SVG")
    png = serializers.CharField(help_text="URL of the PNG")


class PlotListView(PaginatedList, APIView):
    """The plots of the benchmark's scheme (``SchemeFigures.plots``), with their download URLs."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=PlotSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        rows = [
            {
                "name": plot,
                **{
                    file_type: request.build_absolute_uri(f"/api/benchmarks/{benchmark.name}/plots/{plot}.{file_type}")
                    for file_type in FILE_TYPES
                },
            }
            for plot in plot_names(benchmark)
        ]
        return self.paginated(request, rows, PlotSerializer)


class PlotFileView(APIView):
    """One plot as an SVG document or a PNG image (drawn from the same SVG)."""

    permission_classes = [IsResearcher]

    @extend_schema(
        parameters=[OpenApiParameter("file_type", str, OpenApiParameter.PATH, enum=list(FILE_TYPES))],
        responses={(200, media_type): OpenApiTypes.BINARY for media_type in FILE_TYPES.values()},
    )
    def get(self, request: Request, name: str, plot: str, file_type: str) -> HttpResponse:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        try:
            content, media_type = plot_file(benchmark=benchmark, plot=plot, file_type=file_type)
        except PlotError as error:
            return HttpResponse(str(error), status=404, content_type="text/plain; charset=utf-8")
        response = HttpResponse(content, content_type=media_type)
        filename = plot_filename(benchmark=benchmark, plot=plot, file_type=file_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
