"""Migration 0014 gives the root causes stored before it their trace's
environment and their final answer node's model, so an existing database
filters them right without a rebuild."""

import pytest

from provenance.models import AnswerCause, FinalAnswer
from provenance.root_causes import pending
from tests.provenance import root_cause_corpus as corpus
from tests.support.migrating import migrate, migrate_to_newest

pytestmark = pytest.mark.django_db(transaction=True)


def test_existing_rows_get_their_environment_and_answer_model(ingest, project):
    assert ingest(*corpus.environments_and_models())["errors"] == []
    pending.drain(project)  # stored before the migration, as a reader or the catch-up would have
    try:
        migrate("0013_cost_latency_environment")
        migrate("0014_root_cause_environment_model")
    finally:
        migrate_to_newest()
    expected = {"m-prod-a": ("production", "model-a"), "m-prod-b": ("production", "model-b"),
                "m-stage-a": ("staging", "model-a")}
    assert {a.trace_key: (a.environment, a.model) for a in FinalAnswer.objects.all()} == expected
    assert {c.trace_key: (c.environment, c.answer_model) for c in AnswerCause.objects.all()} == expected
