"""Cutting old nodes' text to a summary, in batches of node ids.

Each batch is one `UPDATE … WHERE id IN (…)` over a bounded id range, in its
own transaction with the run's progress counter, so the job holds no long
locks, never loads a project's nodes into memory, and a run's counts are
exactly what it committed. The filter excludes summarized nodes, so a batch
repeated after a crash changes nothing twice: the job resumes by running
again. The digests are computed by the database from the text before it is
cut, since every right-hand side of an UPDATE reads the old row.

Batches are independent (summarizing a node changes nothing any rule reads),
so on PostgreSQL a few workers, each with its own connection, take id ranges
in turn: rewriting rows (TOAST reads and deletes, four index entries, WAL)
is the work, and one backend does it on one core.
"""

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, connections, transaction
from django.db.models import Max, Min
from django.db.models.functions import Left

from core.dialect import is_postgres
from provenance.models import Node
from provenance.retention.digest import TextDigest
from provenance.retention.full_text import SUMMARY_CHARS, keeps_full_text, reviewed_answers_and_their_parents
from tenancy.models import Project

BATCH_NODES = 5000


@dataclass(frozen=True)
class Summarizing:
    """What a project's summarizing pass works on."""

    project: Project
    cutoff: datetime  # nodes with a timestamp before this may be summarized
    keep_full_below: float
    kept_for_reviews: list[int]  # sorted: full_text.reviewed_answers_and_their_parents

    @classmethod
    def of(cls, project: Project, cutoff: datetime, keep_full_below: float) -> "Summarizing":
        return cls(project, cutoff, keep_full_below, reviewed_answers_and_their_parents(project))

    def candidates(self, low: int | None = None, high: int | None = None):
        """The nodes this pass summarizes, as a queryset (counted by the
        preview); with `low` and `high`, only those with ids in that range."""
        kept = self.kept_for_reviews
        nodes = Node.objects.filter(project=self.project, summarized_at__isnull=True, timestamp__lt=self.cutoff)
        if low is not None:
            kept = kept[bisect_left(kept, low):bisect_right(kept, high)]
            nodes = nodes.filter(pk__gte=low, pk__lte=high)
        return nodes.exclude(keeps_full_text(self.project.pk, self.keep_full_below, kept))

    def id_ranges(self, batch: int = BATCH_NODES) -> Iterator[tuple[int, int]]:
        bounds = Node.objects.filter(project=self.project, summarized_at__isnull=True).aggregate(
            low=Min("pk"), high=Max("pk"))
        if bounds["low"] is None:
            return
        for low in range(bounds["low"], bounds["high"] + 1, batch):
            yield low, low + batch - 1

    def summarize(self, low: int, high: int, now: datetime, counted: Callable[[int], None] = lambda n: None) -> int:
        """Summarizes the candidates with ids in [low, high]; returns how many,
        after passing the number to `counted` in the same transaction."""
        with transaction.atomic():
            if is_postgres():
                with connection.cursor() as cursor:
                    # The plan's cost estimate crosses the JIT threshold, and compiling
                    # it costs more than running it, on every batch.
                    cursor.execute("SET LOCAL jit = off")
                    # A batch lost to a crash before its WAL reached the disk is simply
                    # redone by the next run: no need to wait for the flush.
                    cursor.execute("SET LOCAL synchronous_commit = off")
                    # The reviewed and escalated product ids are hashed once per batch
                    # (full_text.matters_by_itself); past work_mem PostgreSQL would
                    # rescan the whole set for every node instead.
                    cursor.execute("SET LOCAL work_mem = '64MB'")
                    # A batch is a range of 5,000 ids, which the primary key finds; on a large
                    # project the planner also ANDed in the timestamp index for "older than
                    # the cutoff", reading millions of its entries per batch (10M nodes:
                    # 710 of a batch's 750 ms).
                    cursor.execute("SET LOCAL enable_bitmapscan = off")
            batch = self.candidates(low, high).values("pk")
            summarized = Node.objects.filter(pk__in=batch).update(
                content_sha256=TextDigest("content"),
                raw_input_sha256=TextDigest("raw_input"),
                content=Left("content", SUMMARY_CHARS),
                raw_input=Left("raw_input", SUMMARY_CHARS),
                summarized_at=now,
            )
            counted(summarized)
            return summarized

    def summarize_all(self, batch: int, workers: int, now: Callable[[], datetime],
                      counted: Callable[[int], None]) -> None:
        """Every batch, by `workers` connections at once where that is possible:
        on PostgreSQL, outside a transaction (inside one, other connections would
        not see its rows)."""
        ranges = self.id_ranges(batch)
        if workers <= 1 or not is_postgres() or connection.in_atomic_block:
            for low, high in ranges:
                self.summarize(low, high, now(), counted)
            return
        in_parallel(ranges, workers, lambda low, high: self.summarize(low, high, now(), counted))


def in_parallel(ranges: Iterable[tuple[int, int]], workers: int, work: Callable[[int, int], object]) -> None:
    """Runs `work` over the ranges on `workers` threads, each with its own
    database connection (closed when it is done). The first error stops the
    others taking new ranges and is raised here."""
    ranges = iter(ranges)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker():
        try:
            while not errors:
                with lock:
                    bounds = next(ranges, None)
                if bounds is None:
                    return
                work(*bounds)
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, name=f"retention-{i}") for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
