"""Reviewed nodes whose confidence tells correct from incorrect answers, for
Calibration's ROC (and so its suggested threshold)."""

from datetime import datetime, timedelta

from tests.support.events import BASE_TIME, node_event, review_event


def reviewed_nodes(count: int, agent_id: str = "retrieval_agent_v2", step: str = "retrieval",
                   prefix: str = "cal", start: datetime = BASE_TIME) -> list[dict]:
    events = []
    for i in range(count):
        confidence = round(0.05 + 0.9 * i / max(1, count - 1), 3)
        correct = confidence >= 0.42 if i % 7 else confidence < 0.42  # mostly separable, a few surprises
        product = f"{prefix}-{i}"
        node = node_event(product, f"{prefix}-t{i}", confidence=confidence, agent_id=agent_id, step=step)
        review = review_event(f"{prefix}-t{i}", "correct" if correct else "incorrect", product,
                              event_id=f"review-{product}")
        node["timestamp"] = review["timestamp"] = (start + timedelta(seconds=i)).isoformat()
        events += [node, review]
    return events
