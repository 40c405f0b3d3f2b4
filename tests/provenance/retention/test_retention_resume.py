"""A retention run killed halfway leaves a consistent state, and the next run
completes it: the same end state as one uninterrupted run."""

import hashlib
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from provenance.models import Node, RetentionRun
from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, node_event
from tests.support.serving import database_url

ROOT = Path(__file__).resolve().parents[3]
TEXT = "a long answer that nobody needs in full any more. " * 8
NOW = (BASE_TIME + timedelta(days=30)).isoformat()


def wait_until(condition, what: str, job: subprocess.Popen, deadline_s: float = 120):
    """Polls a database state (never a fixed sleep as the synchronisation);
    gives up early, with the job's output, when the job has ended."""
    deadline = time.monotonic() + deadline_s
    while not condition():
        if job.poll() is not None:
            raise AssertionError(f"the job ended before {what}: {job.stderr.read().decode()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"never reached: {what}")
        time.sleep(0.05)


def test_a_killed_run_is_completed_by_the_next(transactional_db, make_project):
    if connection.vendor != "postgresql":
        pytest.skip("row locks and a second process need PostgreSQL")
    project, key = make_project("acme-resume", full_content_days=7)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    events = [node_event(f"n{i:03}", f"t{i // 30}", confidence=0.95, content=TEXT, event_id=f"e{i}")
              for i in range(300)]
    for start in range(0, 300, 100):
        assert client.post("/api/v1/ingest", {"batch": events[start:start + 100]}, format="json").status_code == 207
    blocked = Node.objects.get(project=project, product_id="n150")

    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "RETENTION_BATCH_NODES": "20"}
    env.pop("REDIS_URL", None)
    holder = psycopg.connect(database_url(connection.settings_dict).replace("postgres://", "postgresql://"))
    try:
        holder.execute("SELECT 1 FROM provenance_node WHERE id = %s FOR UPDATE", [blocked.pk])
        job = subprocess.Popen([sys.executable, "manage.py", "apply_retention", "--now", NOW, "--project",
                                project.slug], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Halfway: batches before the locked node are committed, and the job waits on the lock.
        wait_until(lambda: RetentionRun.objects.filter(project=project, batches__gte=3).exists(),
                   "the run committed its first batches", job)
        wait_until(lambda: holder.execute(
            # Only the job writes nodes of this test database; its query text is not
            # always the statement it waits in (psycopg sends it as a prepared step).
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()[0] > 0, "the run waits on the locked row", job)
        job.send_signal(signal.SIGKILL)
        job.wait()
    finally:
        holder.rollback()
        holder.close()

    halfway = Node.objects.filter(project=project, summarized_at__isnull=False).count()
    assert 0 < halfway < 300
    [interrupted] = RetentionRun.objects.filter(project=project)
    assert interrupted.status == RetentionRun.Status.RUNNING

    assert "acme-resume: summarized" in apply_retention("--now", NOW, "--project", project.slug)
    runs = list(RetentionRun.objects.filter(project=project).order_by("pk").values_list("status", flat=True))
    assert runs == ["interrupted", "finished"]
    nodes = Node.objects.filter(project=project)
    assert nodes.filter(summarized_at__isnull=True).count() == 0
    assert set(nodes.values_list("content", flat=True)) == {TEXT[:280]}
    assert set(nodes.values_list("content_sha256", flat=True)) == {hashlib.sha256(TEXT.encode()).hexdigest()}
    total = sum(RetentionRun.objects.filter(project=project).values_list("nodes_summarized", flat=True))
    assert total == 300
