"""Making a file's records in a thread of their own while the writer stores those before them.

Most of an import's time is the database's: while the writer waits on a COPY or a lookup (which
lets other Python threads run), this thread parses and checks the next records, so the two
overlap. A parser's records must not touch the database: this thread has a connection of its own,
outside the import's transaction.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import cast

from annotation.importers.records import TargetRecord

# Records handed over at a time, and how many such batches may wait: enough to keep the writer
# busy for a chunk, few enough that memory stays one chunk's worth.
BATCH_RECORDS = 50
BATCHES_AHEAD = 20
_POLL_SECONDS = 0.1


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_DONE = object()


def records_ahead(records: Iterable[TargetRecord]) -> Iterator[TargetRecord]:
    """Yield ``records`` as they are, made ahead by a thread; an error making them is raised here,
    where the next record would have come. Stopping early stops the thread."""
    handed: queue.Queue[object] = queue.Queue(maxsize=BATCHES_AHEAD)
    stop = threading.Event()

    def hand(item: object) -> bool:
        while not stop.is_set():
            try:
                handed.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def make() -> None:
        batch: list[TargetRecord] = []
        try:
            for record in records:
                batch.append(record)
                if len(batch) == BATCH_RECORDS:
                    if not hand(batch):
                        return
                    batch = []
            if batch and not hand(batch):
                return
            hand(_DONE)
        except BaseException as error:  # raised again by the consumer, after the records before it
            if not batch or hand(batch):
                hand(_Failed(error))

    thread = threading.Thread(target=make, name="import-records", daemon=True)
    thread.start()
    try:
        while True:
            item = handed.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield from cast(list[TargetRecord], item)
    finally:
        stop.set()
        thread.join()
