"""root_cause_share (spec/api-v1.md, "Reading"): among the final answers
reviewed incorrect whose timestamp is in the window, the share whose root
causes include a node matching the filters' agent_id and step (0.0 when no
answer was), among the answers of the filters' environment (production by
default) and, when `model` is set, whose final answer node names that model.
Read from the root causes provenance keeps per final answer
(provenance.root_causes), never from a walk. source_type and round do not
apply to it."""

from provenance.root_causes import aggregate

ROOT_CAUSE_METRICS = ("root_cause_share",)


def window(project, start, end, filters, metrics) -> dict[str, float]:
    if "root_cause_share" not in metrics:
        return {}
    answers = aggregate.Answers(start, end, "incorrect", environment=filters.environment, model=filters.model)
    return {"root_cause_share": aggregate.share_matching(project, answers, filters.agent_id, filters.step)}
