"""The health check's round_limit_exceeded finding: traces whose rounds exceed
the policy's max_rounds (default profile), one finding per trace naming its
highest-round node."""

from django.core.management import call_command

from tests.support.events import node_event

DEFAULT = {"accept": 0.8, "block": 0.5, "by_agent_type": {}, "by_step": {}, "max_rounds": 5, "max_retries": 2,
           "escalate_after": 3}


def findings(api) -> list[tuple]:
    call_command("check_dag_health", stdout=open("/dev/null", "w"))
    body = api.get("/api/v1/health/latest", {"kind": "round_limit_exceeded"}).json()
    return [(f["trace_id"], f["product_id"], f["detail"]) for f in body["findings"]]


def looping(trace_id: str, rounds: int) -> list[dict]:
    events, parent = [], []
    for r in range(1, rounds + 1):
        events.append(node_event(f"{trace_id}-r{r}", trace_id, parents=parent, round=r, seconds=r))
        parent = [f"{trace_id}-r{r}"]
    return events


def test_traces_past_max_rounds_are_found_once_each(api, ingest):
    ingest(*looping("runaway", 7), *looping("fine", 5))
    assert findings(api) == [("runaway", "runaway-r7", "round 7 exceeds max_rounds 5")]


def test_the_limit_is_the_policys(api, ingest):
    ingest(*looping("runaway", 7))
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "max_rounds": 8}}}, format="json")
    assert findings(api) == []
    api.put("/api/v1/policy", {"profiles": {"default": {**DEFAULT, "max_rounds": 3}}}, format="json")
    assert findings(api) == [("runaway", "runaway-r7", "round 7 exceeds max_rounds 3")]
