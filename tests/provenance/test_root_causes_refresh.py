"""The stored root causes catch up by themselves (`manage.py
refresh_root_causes`, also the periodic job), idempotently; an ingest only
marks what it changed, and the refresh of those marks (the reader's or the
job's) costs a fixed number of statements however many traces a batch
touches."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from provenance.models import AnswerCause, FinalAnswer, RootCauseMark, RootCausePending
from provenance.root_causes import pending, store
from tests.provenance import root_cause_corpus as corpus
from tests.provenance.test_root_causes_api import root_causes
from tests.support.events import node_event, review_event

pytestmark = pytest.mark.django_db(transaction=True)


def stored_rows():
    return (sorted(FinalAnswer.objects.values_list("trace_key", "product_id", "incorrect", "fused", "low_confidence",
                                                   "cause_count")),
            sorted(AnswerCause.objects.values_list("trace_key", "agent_id", "step", "reason", "path_agents")))


def test_an_ingest_marks_its_traces_and_the_catch_up_refreshes_them(api, ingest):
    corpus.load(ingest)
    assert FinalAnswer.objects.count() == 0 and RootCausePending.objects.exists()
    call_command("refresh_root_causes")
    assert not RootCausePending.objects.exists()
    assert root_causes(api) == corpus.EXPECTED_INCORRECT


def test_the_catch_up_rebuilds_what_the_ingest_did_not_store(api, ingest):
    corpus.load(ingest)
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    expected = stored_rows()
    # An installation whose answers predate the table: nothing stored, nothing marked.
    FinalAnswer.objects.all().delete()
    RootCauseMark.objects.all().delete()
    assert not RootCausePending.objects.exists()
    assert root_causes(api)["answers"] == 0
    call_command("refresh_root_causes")
    assert stored_rows() == expected
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    # A second run finds nothing new.
    call_command("refresh_root_causes")
    assert stored_rows() == expected


def test_a_new_threshold_recomputes_the_stored_answers(api, ingest):
    corpus.load(ingest)
    assert api.patch("/api/v1/project", {"high_uncertainty_threshold": 0.35}, format="json").status_code == 200
    causes = {(c["agent_id"], c["reason"]) for c in root_causes(api)["causes"]}
    # t-flip's verifier (0.4) is no longer doubtful: its answer is unexplained.
    assert ("verifier", "low_confidence") not in causes
    assert root_causes(api)["unexplained"] == 2
    # Raised above the answers' own 0.8, every one of them is doubtful now, unreviewed ones too.
    api.patch("/api/v1/project", {"high_uncertainty_threshold": 0.85}, format="json")
    assert root_causes(api, answers="low_confidence")["answers"] == 10


def test_the_refresh_of_an_ingest_costs_the_same_for_one_trace_or_fifty(api, ingest, project):
    def batch(prefix, traces):
        events = []
        for t in range(traces):
            trace = f"{prefix}-{t}"
            events += [node_event(f"{trace}-a", trace, confidence=0.2),
                       node_event(f"{trace}-f", trace, parents=[f"{trace}-a"], seconds=1, source_type="final_answer"),
                       review_event(trace, "incorrect")]
        return events

    ingests, drains = [], []
    # The first request of a key also notes its use: warmed up by the first batch.
    for prefix, traces in (("warm", 1), ("one", 1), ("fifty", 50)):
        with CaptureQueriesContext(connection) as queries:
            ingest(*batch(prefix, traces))
        ingests.append(len(queries))
        with CaptureQueriesContext(connection) as queries:
            assert pending.drain(project) == traces
        drains.append(len(queries))
    assert ingests[1] == ingests[2]
    assert drains[1] == drains[2]
    assert FinalAnswer.objects.count() == 52


def test_a_backlog_drains_in_bounded_transactions_and_a_killed_drain_loses_nothing(api, ingest, project, monkeypatch):
    """A backlog is drained a bounded number of traces per transaction (the
    refresh locks each trace until commit, and PostgreSQL's lock table is
    small). A drain that dies after its first transaction has removed only
    the marks it refreshed; the next drain finishes, with exact figures."""
    corpus.load(ingest)
    marks = RootCausePending.objects.count()
    assert marks >= 2
    monkeypatch.setattr(pending, "TRACES_PER_TRANSACTION", 1)
    real_refresh, calls = pending.store.refresh, []

    def dies_on_the_second(project, traces):
        calls.append(traces)
        if len(calls) == 2:
            raise RuntimeError("worker killed")
        return real_refresh(project, traces)

    monkeypatch.setattr(pending.store, "refresh", dies_on_the_second)
    with pytest.raises(RuntimeError):
        pending.drain(project)
    assert RootCausePending.objects.count() == marks - 1
    monkeypatch.setattr(pending.store, "refresh", real_refresh)
    pending.drain(project)
    assert not RootCausePending.objects.exists()
    assert root_causes(api) == corpus.EXPECTED_INCORRECT


def test_a_drain_in_chunks_of_one_trace_stores_what_one_chunk_stores(api, ingest, monkeypatch):
    # The refresh reads its traces a chunk at a time: an answer whose causes
    # sit in another chunk's trace (t-source's fused fragment) is still found.
    corpus.load(ingest)
    monkeypatch.setattr(store, "NODES_PER_CHUNK", 1)
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    chunked = stored_rows()
    FinalAnswer.objects.all().delete()
    monkeypatch.undo()
    call_command("refresh_root_causes")
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    assert stored_rows() == chunked


def sent_tasks(app) -> list[tuple[str, list]]:
    """The tasks waiting in the broker's default queue (the in-memory one when
    no broker is configured), taken off it as a worker would: (name, args)."""
    found = []
    with app.connection_for_read() as conn:
        queue = conn.SimpleQueue(app.conf.task_default_queue)
        while True:
            try:
                message = queue.get(block=False)
            except queue.Empty:
                return found
            message.ack()
            found.append((message.headers["task"], message.decode()[0]))


def test_with_a_broker_the_ingest_asks_a_worker_to_refresh_after_its_commit(api, ingest, settings, project):
    from provenance import tasks

    settings.CELERY_TASK_ALWAYS_EAGER = False  # what a REDIS_URL sets: tasks go to the broker
    sent_tasks(tasks.settle_root_causes.app)
    corpus.load(ingest)  # two batches
    sent = sent_tasks(tasks.settle_root_causes.app)
    # The second batch found the first's request still waiting: that one drains both.
    assert sent == [("provenance.tasks.settle_root_causes", [project.pk])]
    [(name, args)] = sent
    tasks.settle_root_causes.app.tasks[name].apply(args=args)  # a worker runs it
    assert not RootCausePending.objects.exists()
    settings.CELERY_TASK_ALWAYS_EAGER = True
    expected = stored_rows()
    assert root_causes(api) == corpus.EXPECTED_INCORRECT
    assert stored_rows() == expected


def test_with_a_broker_a_batch_after_the_waiting_drain_started_asks_for_another(api, ingest, settings, project):
    from provenance import tasks

    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent_tasks(tasks.settle_root_causes.app)
    ingest(node_event("late-a", trace_id="t-late", confidence=0.9))
    [(name, args)] = sent_tasks(tasks.settle_root_causes.app)
    started = []

    def batch_during_the_drain(drained_project):
        # The worker has taken the request and not yet read the marks: this batch's mark may come too late for it.
        started.append(ingest(node_event("late-b", trace_id="t-late", parents=["late-a"], seconds=1, confidence=0.2)))
        return real_drain(drained_project)

    real_drain = pending.drain
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pending, "drain", batch_during_the_drain)
        tasks.settle_root_causes.app.tasks[name].apply(args=args)
    assert started
    assert sent_tasks(tasks.settle_root_causes.app) == [("provenance.tasks.settle_root_causes", [project.pk])]
