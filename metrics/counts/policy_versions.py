"""What each fuse policy version did: the fuse decisions made under it
(`Fuse.policy_version`, sent by the SDK) in a window, and what followed for
the traces they were made in, so the effect of a policy change reads as
before and after, not only its existence.

Per version (None: decisions that named no version):
- decisions, nodes judged, traces;
- fuse_rate: judged nodes blocked / judged nodes;
- incorrect_rate: reviewed traces judged incorrect / reviewed traces (a
  trace's newest review counts; None when none was reviewed);
- escalation_rate: escalations in those traces / traces.

A few queries per version; versions in a window are few.
"""

from django.db.models import Count, Q

from provenance.models import Escalation, Fuse, FuseDecision, Node, Review, Verdict


def compare(project, start, end, filters) -> list[dict]:
    fuses = Fuse.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
    if filters.dimensions:
        fuses = fuses.filter(product_id__in=Node.objects.filter(project=project, **filters.dimensions)
                             .values("product_id"))
    grouped = (fuses.order_by().values("policy_version")
               .annotate(decisions=Count("pk"), nodes=Count("product_id", distinct=True),
                         fused=Count("product_id", distinct=True, filter=Q(decision=FuseDecision.BLOCK)),
                         traces=Count("trace_id", distinct=True)))
    rows = []
    for group in sorted(grouped, key=lambda g: (g["policy_version"] is None, g["policy_version"] or 0)):
        version = group["policy_version"]
        traces = fuses.filter(policy_version=version) if version is not None else fuses.filter(
            policy_version__isnull=True)
        trace_ids = traces.values("trace_id")
        verdicts = newest_verdicts(project, trace_ids)
        escalations = Escalation.objects.filter(project=project, trace__trace_id__in=trace_ids).count()
        rows.append({
            "policy_version": version,
            "decisions": group["decisions"],
            "nodes": group["nodes"],
            "traces": group["traces"],
            "fuse_rate": group["fused"] / group["nodes"] if group["nodes"] else 0.0,
            "reviewed": len(verdicts),
            "incorrect_rate": (sum(v == Verdict.INCORRECT for v in verdicts.values()) / len(verdicts)
                               if verdicts else None),
            "escalations": escalations,
            "escalation_rate": escalations / group["traces"] if group["traces"] else 0.0,
        })
    return rows


def newest_verdicts(project, trace_ids) -> dict[int, str]:
    found = {}
    for trace_pk, verdict in (Review.objects.filter(project=project, trace__trace_id__in=trace_ids)
                              .order_by("timestamp", "pk").values_list("trace_id", "verdict")):
        found[trace_pk] = verdict
    return found
