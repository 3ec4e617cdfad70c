"""The cyclic garbage collector paused around a batch's generation, and kept off a web process's
start-up objects (crowdlex.collector)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from crowdlex.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_it_turns_the_collector_off_inside_and_on_again_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_turns_the_collector_on_again_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("planning failed")
    assert gc.isenabled()


def test_it_leaves_the_collector_off_when_it_was_off_before() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_a_web_process_puts_what_it_loaded_at_start_out_of_the_collectors_walks() -> None:
    # A fresh interpreter, as a gunicorn worker loads the application.
    script = (
        "import gc, sys\n"
        "from crowdlex.wsgi import application\n"
        "assert 'hits.views.annotator' in sys.modules, 'the views are loaded before the freeze'\n"
        "print(gc.get_freeze_count())\n"
    )
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "crowdlex.settings", "DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    # Django, the apps, the views and their URLs: well over the collector's young generations.
    assert int(result.stdout.strip()) > 50_000
