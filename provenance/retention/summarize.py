"""Cutting old nodes' text to a summary, in batches of node ids.

Each batch is one `UPDATE … WHERE id IN (…)` in its own transaction over a
bounded id range, so the job holds no long locks and never loads a project's
nodes into memory. The filter excludes summarized nodes, so a batch repeated
after a crash changes nothing twice: the job resumes by running again. The
digests are computed by the database from the text before it is cut, since
every right-hand side of an UPDATE reads the old row.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Max, Min
from django.db.models.functions import SHA256, Left

from provenance.models import Node, Project
from provenance.retention.rules import SUMMARY_CHARS, keeps_full_text, reviewed_final_answers

BATCH_NODES = 5000


class TextDigest(SHA256):
    """Hex SHA-256 of a text column. Django's SHA256 needs pgcrypto on
    PostgreSQL; its built-in sha256() (11+) does without. On SQLite Django
    registers SHA256 itself."""

    def as_postgresql(self, compiler, connection, **extra_context):
        return self.as_sql(compiler, connection, template="encode(sha256(convert_to(%(expressions)s, 'UTF8')), 'hex')",
                           **extra_context)


@dataclass(frozen=True)
class Summarizing:
    """What a project's summarizing pass works on."""

    project: Project
    cutoff: datetime  # nodes with a timestamp before this may be summarized
    keep_full_below: float
    final_answer_pks: list[int]

    @classmethod
    def of(cls, project: Project, cutoff: datetime, keep_full_below: float) -> "Summarizing":
        return cls(project, cutoff, keep_full_below, reviewed_final_answers(project))

    def candidates(self):
        """The nodes this pass summarizes, as a queryset (counted by the preview)."""
        return (
            Node.objects.filter(project=self.project, summarized_at__isnull=True, timestamp__lt=self.cutoff)
            .exclude(keeps_full_text(self.keep_full_below, self.final_answer_pks))
        )

    def id_ranges(self, batch: int = BATCH_NODES) -> Iterator[tuple[int, int]]:
        bounds = Node.objects.filter(project=self.project, summarized_at__isnull=True).aggregate(
            low=Min("pk"), high=Max("pk"))
        if bounds["low"] is None:
            return
        for low in range(bounds["low"], bounds["high"] + 1, batch):
            yield low, low + batch - 1

    def summarize(self, low: int, high: int, now: datetime) -> int:
        """Summarizes the candidates with ids in [low, high]; returns how many."""
        with transaction.atomic():
            if connection.vendor == "postgresql":
                # The plan's cost estimate crosses the JIT threshold, and compiling
                # it costs more than running it, on every batch.
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL jit = off")
            batch = self.candidates().filter(pk__gte=low, pk__lte=high).values("pk")
            return Node.objects.filter(pk__in=batch).update(
                content_sha256=TextDigest("content"),
                raw_input_sha256=TextDigest("raw_input"),
                content=Left("content", SUMMARY_CHARS),
                raw_input=Left("raw_input", SUMMARY_CHARS),
                summarized_at=now,
            )
