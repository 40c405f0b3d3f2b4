"""Why answers go wrong, in aggregate (spec/api-v1.md, `GET /api/v1/root-causes`).

The answers of a window are the final answers (provenance.final_answer)
whose timestamp is in [start, end) and that went wrong in the asked sense:
reviewed `incorrect` by their newest review (of the node or of its trace),
`fused`, or `low_confidence` (below the project's high-uncertainty
threshold). Each answer's root causes are those of the per-trace root-cause
endpoint, grouped by the cause's (agent_id, step, reason); a group's `count`
is the number of answers with at least one root cause in it. Everything is
read from the rows provenance.root_causes.store keeps (FinalAnswer,
AnswerCause): one table scan of the window's wrong answers, never a walk.

Filters narrow the answers: their trace's environment (`production` unless
another is asked, like every figure), the answer's own agent, the answer
node's model (what a person means by "answers from model X", not the model
of a cause's node), the fuse policy version named in its trace
(FinalAnswer.policy_version).
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from datetime import datetime

from django.db.models import Count, Q

from core.replica import reading_connection
from provenance.models import DEFAULT_ENVIRONMENT, AnswerCause, FinalAnswer
from provenance.root_causes import pending, store
from tenancy.models import Project

ANSWER_KINDS = ("incorrect", "fused", "low_confidence")
EXAMPLES = 5
CAUSE = AnswerCause._meta.db_table


@dataclass(frozen=True)
class Answers:
    """Which answers: the window, the kind of wrong, the filters."""

    start: datetime
    end: datetime
    kind: str = "incorrect"
    # One exact value (the API's), or a tuple of values (the page's typed prefix, resolved) any of which is kept.
    agent_id: str | tuple[str, ...] = ""
    policy_version: int | None = None
    environment: str = DEFAULT_ENVIRONMENT
    model: str | tuple[str, ...] = ""

    def __post_init__(self):
        if self.kind not in ANSWER_KINDS:
            raise ValueError(f"answers must be one of {ANSWER_KINDS}")

    def on_causes(self) -> Q:
        """The same test on AnswerCause, which copies the answer's figures."""
        return self.where("answer_agent_id", "answer_model")

    def where(self, answer_agent: str = "agent_id", answer_model: str = "model") -> Q:
        q = Q(timestamp__gte=self.start, timestamp__lt=self.end, environment=self.environment, **{self.kind: True})
        for column, wanted in ((answer_agent, self.agent_id), (answer_model, self.model)):
            if wanted:
                q &= Q(**{f"{column}__in" if isinstance(wanted, tuple) else column: wanted})
        if self.policy_version is not None:
            q &= Q(policy_version=self.policy_version)
        return q


@dataclass(frozen=True)
class Group:
    agent_id: str
    step: str
    reason: str

    def q(self) -> Q:
        return Q(agent_id=self.agent_id, step=self.step, reason=self.reason)


def settle(project: Project) -> None:
    """Before the stored rows are read: what ingests marked pending is
    refreshed (provenance.root_causes.pending), and answers stored under an
    earlier high-uncertainty threshold are recomputed (the catch-up job does
    both too)."""
    pending.drain(project)
    stale = FinalAnswer.objects.filter(project=project).exclude(threshold=project.high_uncertainty_threshold)
    traces = list(stale.values_list("trace_id", flat=True))
    if traces:
        store.refresh(project, traces)


def causes(project: Project, answers: Answers) -> dict:
    """The contract's answer: {"answers", "unexplained", "causes": [...]}, in
    two statements."""
    settle(project)
    totals = FinalAnswer.objects.filter(project=project).filter(answers.where()).aggregate(
        answers=Count("pk"), unexplained=Count("pk", filter=Q(cause_count=0)))
    rows = AnswerCause.objects.filter(project=project).filter(answers.on_causes())
    sql, params = rows.values("agent_id", "step", "reason", "trace_key", "timestamp", "answer_id").query.sql_with_params()
    with reading_connection().cursor() as cursor:
        # Each group's size and its newest answers, in one pass over the window's rows.
        cursor.execute(
            f"""SELECT agent_id, step, reason, trace_key, n FROM (
                    SELECT c.agent_id, c.step, c.reason, c.trace_key,
                           ROW_NUMBER() OVER (PARTITION BY c.agent_id, c.step, c.reason
                                              ORDER BY c.timestamp DESC, c.answer_id DESC) AS k,
                           COUNT(*) OVER (PARTITION BY c.agent_id, c.step, c.reason) AS n
                    FROM ({sql}) AS c) AS ranked
                WHERE k <= %s ORDER BY agent_id, step, reason, k""",
            [*params, EXAMPLES],
        )
        found = cursor.fetchall()
    groups: dict[tuple, dict] = {}
    for agent_id, step, reason, trace_key, count in found:
        group = groups.setdefault((agent_id, step, reason), {
            "agent_id": agent_id, "step": step, "reason": reason, "count": count,
            "share": count / totals["answers"] if totals["answers"] else 0.0, "examples": []})
        group["examples"].append(trace_key)
    ranked = sorted(groups.values(), key=lambda g: (-g["count"], g["agent_id"], g["step"], g["reason"]))
    return {"answers": totals["answers"], "unexplained": totals["unexplained"], "causes": ranked}


def answer_values(project: Project, answers: Answers) -> dict[str, list[str]]:
    """The answering agents and models of the window's answers (any kind): what the page's filters offer."""
    settle(project)
    rows = FinalAnswer.objects.filter(project=project, timestamp__gte=answers.start, timestamp__lt=answers.end,
                                      environment=answers.environment).order_by()
    return {column: sorted(set(rows.values_list(column, flat=True).distinct()) - {""}) for column in ("agent_id", "model")}


def share_matching(project: Project, answers: Answers, agent_id: str = "", step: str = "") -> float:
    """Among the answers, the share whose root causes include a node of this
    agent and step (either may be empty: any). 0.0 without answers."""
    settle(project)
    total = FinalAnswer.objects.filter(project=project).filter(answers.where()).count()
    if not total:
        return 0.0
    matching = AnswerCause.objects.filter(project=project).filter(answers.on_causes())
    if agent_id:
        matching = matching.filter(agent_id=agent_id)
    if step:
        matching = matching.filter(step=step)
    return matching.values("answer_id").distinct().count() / total


def trend(project: Project, answers: Answers, bucket_seconds: int, groups: list[Group]) -> dict:
    """Per bucket (UTC-aligned, `bucket_seconds` wide) of the window: how many
    answers, and each group's share of them."""
    def bucket(moment: datetime) -> int:
        return int(moment.timestamp()) // bucket_seconds * bucket_seconds

    totals = Counter(bucket(ts) for ts in FinalAnswer.objects.filter(project=project).filter(answers.where())
                     .values_list("timestamp", flat=True))
    wanted = {(g.agent_id, g.step, g.reason) for g in groups}
    counts: dict[tuple, Counter] = defaultdict(Counter)
    rows = AnswerCause.objects.filter(project=project).filter(answers.on_causes())
    for agent_id, step, reason, ts in rows.values_list("agent_id", "step", "reason", "timestamp"):
        if (agent_id, step, reason) in wanted:
            counts[(agent_id, step, reason)][bucket(ts)] += 1
    first = bucket(answers.start)
    edges = list(range(first, int(answers.end.timestamp()), bucket_seconds))
    return {
        "buckets": edges,
        "answers": [totals[b] for b in edges],
        "shares": {key: [counts[key][b] / totals[b] if totals[b] else None for b in edges] for key in wanted},
    }


def paths(project: Project, answers: Answers, group: Group, limit: int = 5) -> list[dict]:
    """The group's most common paths (agent sequences from the root cause to
    the answer) with how many answers took each, and an example of each: the
    newest answer's trace, its cause's trace and the path's product ids."""
    rows = AnswerCause.objects.filter(project=project).filter(answers.on_causes()).filter(group.q())
    counted = list(rows.values("path_agents").annotate(n=Count("pk")).order_by("-n", "path_agents")[:limit])
    result = []
    for entry in counted:
        example = rows.filter(path_agents=entry["path_agents"]).order_by("-timestamp", "-answer_id").values(
            "trace_key", "path", "answer__product_id", "cause_trace_key").first()
        result.append({"agents": entry["path_agents"], "count": entry["n"], "trace_id": example["trace_key"],
                       "product_id": example["answer__product_id"], "path": example["path"],
                       "cause_trace_id": example["cause_trace_key"]})
    return result


def blast_radius(project: Project, answers: Answers, group: Group) -> dict:
    """For one cause: how many answers it touched (of the asked kind, and
    wrong in any sense), and per downstream agent how many of those answers it
    passed the error on in (an unfused node of that agent between the cause
    and the answer)."""
    rows = AnswerCause.objects.filter(project=project).filter(group.q())
    chosen = rows.filter(answers.on_causes())
    any_kind = rows.filter(replace(answers, kind="incorrect").on_causes()
                           | replace(answers, kind="fused").on_causes()
                           | replace(answers, kind="low_confidence").on_causes())
    passed = Counter(agent for agents in chosen.values_list("passed_on", flat=True) for agent in agents or ())
    return {
        "answers": chosen.count(),
        "wrong_answers": any_kind.values("answer_id").distinct().count(),
        "passed_on": sorted(({"agent_id": a, "count": n} for a, n in passed.items()),
                            key=lambda e: (-e["count"], e["agent_id"])),
    }


def compare(project: Project, before: Answers, after: Answers) -> dict:
    """Every group of either set with its share in each (0 where absent), the
    largest change first."""
    first, second = causes(project, before), causes(project, after)
    shares: dict[tuple, list] = {}
    for index, answer in enumerate((first, second)):
        for cause in answer["causes"]:
            shares.setdefault((cause["agent_id"], cause["step"], cause["reason"]), [0.0, 0.0])[index] = cause["share"]
    rows = [{"agent_id": k[0], "step": k[1], "reason": k[2], "before": v[0], "after": v[1], "change": v[1] - v[0]}
            for k, v in shares.items()]
    rows.sort(key=lambda r: (-abs(r["change"]), r["agent_id"], r["step"], r["reason"]))
    return {"answers_before": first["answers"], "answers_after": second["answers"], "causes": rows}
