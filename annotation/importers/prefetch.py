"""Making a file's records in a thread of their own while the writer stores those before them.

Most of an import's time is the database's: while the writer waits on a COPY or a lookup (which
lets other Python threads run), this thread parses and checks the next records, so the two
overlap. A parser's records must not touch the database: this thread has a connection of its own,
outside the import's transaction.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterable
from typing import cast

from annotation.importers.records import TargetRecord

# Records are handed over in batches of at most this many records or candidates, and this many
# batches may wait: about one of the writer's chunks (writer.CHUNK_CANDIDATES), enough to keep it
# busy while memory stays a chunk's worth.
BATCH_RECORDS = 50
BATCH_CANDIDATES = 500
BATCHES_AHEAD = 10
_POLL_SECONDS = 0.1


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


_DONE = object()


def records_ahead(records: Iterable[TargetRecord]) -> Generator[TargetRecord, None, None]:
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
        candidates = 0
        try:
            for record in records:
                batch.append(record)
                candidates += len(record.candidates)
                if len(batch) == BATCH_RECORDS or candidates >= BATCH_CANDIDATES:
                    if not hand(batch):
                        return
                    batch, candidates = [], 0
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
