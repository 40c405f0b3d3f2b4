"""A NUL character typed into any field of the destinations page or the rule
builder (its own fields, a condition's, a destination's) is a form error, never a
500, and stores nothing: PostgreSQL text cannot hold NUL, so it must be refused
before anything is written. Every field and every destination type, not a sample."""

import pytest

from alerts.builder import CONDITION_INPUTS, DESTINATION_INPUTS, DESTINATION_TYPES
from alerts.models import AlertRule, Destination, SharedDestination

NUL_VALUES = ["\x00", "a\x00b"]
GOOD_ADDRESS = {"webhook": "https://example.org/hook", "slack": "https://hooks.slack.example/services/T/B/x",
                "email": "oncall@example.org", "pagerduty": "R0UT1NGKEY", "inbox": ""}


@pytest.fixture
def member_role():
    return "editor"


def shared_forms():
    for kind in DESTINATION_TYPES:
        good = {"name": "chat", "type": kind, "address": GOOD_ADDRESS[kind], "secret": ""}
        for field in good:
            for value in NUL_VALUES:
                yield {**good, field: value}


def builder_forms():
    good = {"name": "fuses", "match": "all", "for": "0m",
            **{f"condition_{key}": "" for key in CONDITION_INPUTS},
            "condition_metric": "fuse_rate", "condition_window": "15m", "condition_op": ">",
            "condition_threshold": "20", "destination_type": "webhook",
            "destination_address": GOOD_ADDRESS["webhook"], "destination_secret": ""}
    for field in good:
        for value in NUL_VALUES:
            yield {**good, field: value}
    for kind in DESTINATION_TYPES:
        for field in DESTINATION_INPUTS:
            yield {**good, "destination_type": kind, "destination_address": GOOD_ADDRESS[kind], f"destination_{field}": "a\x00b"}


def test_a_nul_in_any_field_of_the_destinations_page_is_refused_and_stores_nothing(member):
    for form in shared_forms():
        response = member.post("/alerts/acme/destinations/", form)
        assert response.status_code in (200, 400), (form, response.status_code, response.content[:300])
        assert not SharedDestination.objects.exists(), form


def test_a_nul_in_any_field_of_the_rule_builder_is_refused_and_stores_nothing(member):
    for form in builder_forms():
        response = member.post("/alerts/acme/new/", form)
        assert response.status_code in (200, 400), (form, response.status_code, response.content[:300])
        assert not AlertRule.objects.exists() and not Destination.objects.exists(), form
