"""Progress bars for long management commands: on a terminal only, silent in logs and pipes.

Services take an optional ``progress(done, total)`` callback and call it as they go; a command
passes the one ``progress_bar`` gives it, which is None when stderr is not a terminal, so a
service run by cron, Celery or a test pays nothing and prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from tqdm import tqdm

Progress = Callable[[int, int | None], None]


class _Stream(Protocol):
    def write(self, text: str, /) -> Any: ...

    def isatty(self) -> bool: ...


@contextmanager
def progress_bar(stream: _Stream, *, desc: str, unit: str) -> Iterator[Progress | None]:
    """A callback drawing a bar of ``unit``s on ``stream`` (a command's ``self.stderr``), or None
    when ``stream`` is not a terminal. The bar appears at the first report and is cleared at the end."""
    if not stream.isatty():
        yield None
        return
    # A command's OutputWrapper ends every write with a newline: tqdm redraws its line with "\r".
    target = getattr(stream, "_out", stream)
    bar: tqdm[Any] | None = None

    def report(done: int, total: int | None) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit=unit, file=target, leave=False, dynamic_ncols=True)
        elif total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    try:
        yield report
    finally:
        if bar is not None:
            bar.close()
