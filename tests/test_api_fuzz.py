"""A schema-driven fuzzer (schemathesis) sends every API operation inputs drawn from the OpenAPI
schema, as a researcher and as an annotator: none may answer a server error, every answer is
one the schema declares (its status code, its media type and its body's shape), and input the
schema allows is not refused as invalid (400), so the schema is as strict as the validation.

Requests go through the WSGI application in this process, so they see the test's rows; path
ids are replaced with those of real rows, so the operations reach their services rather than a
404. MTurk calls go to a closed local port and fail at once, as an unreachable crowd does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import schemathesis
from botocore.config import Config
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from analysis.models import ExportJob
from hits.models import HIT
from hits.services import assignment_claim_next
from review.models import FlagReason, WorkerFlag
from tests.base import make_cast
from tests.crowds.crowd_helpers import make_batch, mturk_worker, publish_locally, submitted_assignment
from tests.hits.factories import make_batch as make_local_batch
from tests.hits.factories import make_hit, make_target

EXAMPLES_PER_OPERATION = 5

# Input the schema allows may still be refused (400) where the refusal rests on stored rows (a name
# or an id that must exist, what a file holds, what a scheme offers) or on a rule across fields that
# a JSON schema cannot state. Every other operation must accept whatever its schema allows: the
# schema states the bounds, patterns and choices its validation enforces.
REFUSED_BY_ROWS_OR_ACROSS_FIELDS = {
    "POST /api/batches/": "the benchmark, its targets and the annotators are named and must exist",
    "POST /api/batches/preview/": "the benchmark, its targets and the annotators are named and must exist",
    "POST /api/batches/{id}/clone/": "the targets named must be the batch's",
    "GET /api/benchmarks/{name}/evaluations": "the split named must exist",
    "POST /api/benchmarks/{name}/evaluations": "the file must hold a system's output, for a split that exists",
    "POST /api/benchmarks/{name}/evaluations/judgements": "the file must hold a system's output, for a split "
    "that exists, with substitutes the benchmark has not scored",
    "POST /api/benchmarks/{name}/evaluations/rescore": "the system named must be saved, with its result file",
    "POST /api/benchmarks/{name}/exports": "the format must be one the benchmark's scheme exports",
    "POST /api/benchmarks/{name}/import": "the file must hold a benchmark",
    "POST /api/benchmarks/{name}/candidates": "the targets named must exist, a prompt's placeholders be known, "
    "and the benchmark's scheme take a model's candidates",
    "PUT /api/benchmarks/{name}/qualification": "items or from_benchmark, not both; the benchmark must exist",
    "PUT /api/benchmarks/{name}/reannotation": "the origin must be one the benchmark's labels came from",
    "PATCH /api/benchmarks/{name}/settings/": "scheme_settings names the settings of the benchmark's scheme",
    "PUT /api/batches/{id}/design/": "the scheme's choices, keys that never clash, an example's word in its text",
    "PUT /api/benchmarks/{name}/design/": "the scheme's choices, keys that never clash, an example's word in its text",
    "POST /api/benchmarks/{name}/splits": "shares or a list, not both; a list names the benchmark's targets",
    "GET /api/benchmarks/{name}/statistics": "conceivable may not be above acceptable",
    "POST /api/people/": "the username and the e-mail address must not be another account's",
    "POST /api/people/import": "the file must list people",
    "POST /api/people/{person_id}/signin-link": "an e-mailed link needs the person's e-mail address",
    "POST /api/people/{person_id}/password-reset": "an e-mailed link needs the person's e-mail address",
    "POST /api/batches/{id}/annotators/": "the usernames must be annotators'; the batch must go to named ones",
    "POST /api/work/assignments/{assignment_id}/flag": "the item must be a row of the HIT",
    "POST /api/work/assignments/{assignment_id}/return": "telemetry's time away answering may not exceed its time away",
    "POST /api/work/assignments/{assignment_id}/submit": "the answers must cover the HIT's rows",
    "POST /api/work/assignments/{assignment_id}/draft": "telemetry's time away answering may not exceed its time "
    "away; a draft holds at most DRAFT_MAX_BYTES and DRAFT_MAX_VIEWS page views",
}

# The coverage phase also sends every boundary value the schema names; it skips the methods an
# operation does not have (Django answers those 405 before any view code runs).
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"unexpected-methods": []}}})
schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True), config=CONFIG)
schema.app = WSGIHandler()


@pytest.fixture
def rows(db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Rows for the path ids and the two tokens; requests keep the test's database connection."""
    cast = make_cast()
    batch = make_batch(name="fuzz")
    publish_locally(batch)
    hit = HIT.objects.filter(batch=batch).first()
    assert hit is not None
    crowd_assignment = submitted_assignment(hit, mturk_worker("W1"), external_id="A1")
    local = make_local_batch(batch.benchmark)
    make_hit(local, make_target(batch.benchmark))
    claimed = assignment_claim_next(worker=cast.alice.worker)  # type: ignore[attr-defined]
    assert claimed is not None
    flag = WorkerFlag.objects.create(benchmark=batch.benchmark, worker=crowd_assignment.worker, reason=FlagReason.FAST)
    job = ExportJob.objects.create(benchmark=batch.benchmark, format="stats")
    unreachable = boto3.client(
        "mturk",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        endpoint_url="http://127.0.0.1:9",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    monkeypatch.setattr("crowds.mturk.client.mturk_client", lambda environment: unreachable)
    # As Django's test client does: the WSGI handler would otherwise close the test's connection.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield {
            "tokens": [Token.objects.create(user=user).key for user in (cast.researcher, cast.alice)],
            "ids": {
                "assignments": crowd_assignment.pk,
                "batches": batch.pk,
                "flags": flag.pk,
                "hits": hit.pk,
                "workers": crowd_assignment.worker_id,
            },
            "name": batch.benchmark.name,
            "job_id": job.pk,
            "assignment_id": claimed.pk,
            "person_id": cast.carol.pk,
        }
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _real_ids(path: str, parameters: dict[str, Any], rows: dict[str, Any]) -> dict[str, Any]:
    collection = re.match(r"^/api/([a-z-]+)/", path)
    ids = dict(parameters)
    for key in parameters:
        if key == "id" and collection is not None:
            ids[key] = rows["ids"][collection.group(1)]
        elif key in ("name", "job_id", "assignment_id", "person_id"):
            ids[key] = rows[key]
    return ids


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_every_operation_answers_as_its_schema_says(case: Any, rows: dict[str, Any]) -> None:
    if case.path_parameters:
        case.path_parameters = _real_ids(case.path, case.path_parameters, rows)
    for token in rows["tokens"]:
        response = case.call(headers={"Authorization": f"Token {token}"})
        assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code}"
        # The schema tells the truth: the code, the media type and the body are all declared.
        checks = [status_code_conformance, content_type_conformance, response_schema_conformance]
        if case.operation.label not in REFUSED_BY_ROWS_OR_ACROSS_FIELDS:
            checks.append(positive_data_acceptance)
        case.validate_response(response, checks=checks)
