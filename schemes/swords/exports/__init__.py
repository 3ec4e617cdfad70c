"""SWORDS's export formats (a plug-in of the analysis room, ``schemes.PLUGINS``): the SWORDS JSON
that the swords library reads (``swords_json``) and the dataset folder's layout (``dataset``)."""

from __future__ import annotations

from analysis.exports import ExportFormat, candidates_size, labels_size, register_export_format
from annotation.models import Benchmark, Context, Target
from schemes.swords import SWORDS
from schemes.swords.exports import dataset  # noqa: F401  (registers the dataset layout)
from schemes.swords.exports.swords_json import swords_pieces


def _size(benchmark: Benchmark) -> int:
    contexts = Context.objects.filter(benchmark=benchmark).count()
    targets = Target.objects.filter(benchmark=benchmark).count()
    return contexts + targets + candidates_size(benchmark) + labels_size(benchmark)


register_export_format(
    ExportFormat(
        SWORDS.name,
        ".json",
        "SWORDS JSON (readable by the swords library)",
        lambda request: swords_pieces(benchmark=request.benchmark, counter=request.counter, split=request.split),
        _size,
        schemes=frozenset({SWORDS.name}),
    )
)
