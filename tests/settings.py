"""The settings the suite runs under: the project's own, as on a development machine.

DEBUG is off unless set (crowdlex.settings), so the suite asks for the development defaults
here: a generated key, the plain static-file storage that needs no ``collectstatic``. Requests
still run with DEBUG off, as pytest-django does. Production settings are tested in a
subprocess (tests/test_deploy.py).
"""

import os

os.environ.setdefault("DEBUG", "1")

from crowdlex.settings import *  # noqa: F403

# No test reaches Amazon: MTurk calls go to a closed local port unless a test stubs the client.
MTURK_ENDPOINT_URL = "http://127.0.0.1:9"
# Nor Prolific: its calls go to a closed local port unless a test starts its fake Prolific (and
# points a worker process of its own at it with TEST_PROLIFIC_API_URL).
PROLIFIC_API_URL = os.environ.get("TEST_PROLIFIC_API_URL", "http://127.0.0.1:9")
PROLIFIC_API_TOKEN = "test-token"

# A test's Celery worker consumes a queue of its own (tests/celery_worker.py); the tasks it queues
# itself (a refresh queueing the bot signals) go there too.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("TEST_CELERY_DEFAULT_QUEUE", "celery")

# The toy panel (tests/crowds/toy/): a crowd of the suite's own, so that every page, API and command
# that serves every crowd serves one no product module names.
CROWD_BACKENDS = [*CROWD_BACKENDS, "tests.crowds.toy.ToyBackend"]  # noqa: F405

# The figures warmed after a change (annotation.warm) run in the committing request under eager
# Celery: off, so a test's statements and time are its own; the tests of the warm turn it on.
BENCHMARK_FIGURES_WARM = False
