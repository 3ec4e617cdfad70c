from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation import selectors
from annotation.models import Benchmark
from crowdlex.permissions import researcher_required


@researcher_required
def benchmark_list(request: HttpRequest) -> HttpResponse:
    return render(request, "annotation/benchmark_list.html", {"benchmarks": selectors.benchmark_list()})


@researcher_required
def benchmark_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The researcher's home for one benchmark: pipeline, batches, workers, statistics, exports."""
    benchmark = get_object_or_404(Benchmark, name=name)
    counts = selectors.benchmark_counts(benchmark=benchmark)
    return render(request, "annotation/benchmark_detail.html", {"benchmark": benchmark, "counts": counts})
