"""The escalation inbox: open escalations newest first, each with its node, the
fuse history that led to it (the node and the attempts it retried), and a
person's verdict, which is a review (it feeds Calibration) and closes it.

The verdict goes through the ingest like any review, so it closes the
escalation the same way an agent's review would.
"""

import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from django.utils import timezone

from provenance.ingest.write import ingest_events
from provenance.models import DEFAULT_ENVIRONMENT, Escalation, Fuse, Node
from provenance.questions import questions
from tenancy.colocation import same_project

PAGE_SIZE = 50
MAX_CHAIN = 50
CORRECTION_PREFIX = "Corrected answer: "


@dataclass
class Entry:
    escalation: Escalation
    node: Node | None
    attempts: list[Node] = field(default_factory=list)  # the retried chain, oldest first, ending at the node
    fuses: list[Fuse] = field(default_factory=list)
    question: str = ""  # what the trace's workflow was asked


def _open(project, environment: str):
    """Open escalations of one environment's traces (production unless asked):
    an evaluation run's escalations are its own business, not the inbox's."""
    return Escalation.objects.filter(same_project("trace"), project=project, closed_at__isnull=True,
                                     trace__environment=environment)


def open_escalations(project, limit: int = PAGE_SIZE, environment: str = DEFAULT_ENVIRONMENT) -> list[Escalation]:
    return list(_open(project, environment).select_related("trace").order_by("-timestamp", "-pk")[:limit])


def open_count(project, environment: str = DEFAULT_ENVIRONMENT) -> int:
    return _open(project, environment).count()


def entries(project, limit: int = PAGE_SIZE) -> list[Entry]:
    """Four queries whatever the number of escalations shown."""
    escalations = open_escalations(project, limit)
    trace_pks = {e.trace_id for e in escalations}
    nodes = Node.objects.filter(project=project, trace_id__in=trace_pks).only(
        "product_id", "trace_id", "agent_id", "step", "confidence", "content", "round", "retry_of", "attempt",
        "fuse_state", "timestamp")
    by_product = {n.product_id: n for n in nodes}
    chains = {e.pk: chain(by_product, e.product_id) for e in escalations}
    wanted = {n.product_id for nodes_ in chains.values() for n in nodes_} | {e.product_id for e in escalations}
    fuses = defaultdict(list)
    for fuse in Fuse.objects.filter(project=project, product_id__in=wanted).order_by("timestamp", "pk"):
        fuses[fuse.product_id].append(fuse)
    asked = questions(project.pk, trace_pks) if escalations else {}
    found = []
    for e in escalations:
        attempts = chains[e.pk]
        history = [f for n in attempts for f in fuses[n.product_id]] or fuses[e.product_id]
        found.append(Entry(e, by_product.get(e.product_id), attempts, history, asked.get(e.trace_id, "")))
    return found


def chain(by_product: dict, product_id: str) -> list[Node]:
    """The node and the nodes it retried (through `retry_of`), oldest first."""
    found, seen = [], set()
    node = by_product.get(product_id)
    while node is not None and node.product_id not in seen and len(found) < MAX_CHAIN:
        found.append(node)
        seen.add(node.product_id)
        node = by_product.get(node.retry_of) if node.retry_of else None
    return found[::-1]


def give_verdict(project, escalation: Escalation, verdict: str, comment: str, corrected: str, who: str) -> None:
    """A person's review of the escalated node; its ingest closes the escalation."""
    text = comment.strip()
    if corrected.strip():
        text = f"{text}\n{CORRECTION_PREFIX}{corrected.strip()}".strip()
    if who:
        text = f"{text} — {who}".strip(" —") if text else f"reviewed by {who}"
    event = {"id": f"inbox-{escalation.pk}-{uuid.uuid4().hex[:12]}", "type": "review",
             "timestamp": timezone.now().isoformat(),
             "body": {"trace_id": escalation.trace.trace_id, "product_id": escalation.product_id,
                      "verdict": verdict, "comment": text}}
    result = ingest_events(project, [event])
    if result.errors:
        raise ValueError(result.errors[0]["message"])
