"""Storm control: a flapping rule tells its destinations at most once per state
change and at most once per ALERT_NOTIFY_INTERVAL_SECONDS (default 5 minutes).

A rule remembers what its destinations were last told (`notified_state`) and
when (`notified_at`). A state change inside the interval is recorded and held
back; one that says what they were last told (firing, held-back resolve,
firing again) has nothing new to say and is held back too. When the interval
has passed and the rule's state still differs from what they were told, the
newest held-back event is sent then (`sent_late_at`), so an incident opened in
a storm is always closed. Silences are apart: a silenced event is never sent,
then or later, and leaves `notified_state` as it was (what was really told),
so a resolution after a silenced firing has nothing new to say either."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from alerts.models import RuleState


def interval() -> timedelta:
    return timedelta(seconds=settings.ALERT_NOTIFY_INTERVAL_SECONDS)


def told_state(rule) -> str:
    """What the destinations should believe now."""
    return "firing" if rule.state == RuleState.FIRING else "resolved"


def quiet(rule, now: datetime) -> bool:
    """Still inside the interval after the last notification?"""
    return rule.notified_at is not None and now - rule.notified_at < interval()


@dataclass(frozen=True)
class Decision:
    send: bool
    held_back: bool


def on_event(rule, event, now: datetime) -> Decision:
    """Decides for a new event (not silenced) and records on the rule what was told."""
    if event.state == rule.notified_state or quiet(rule, now):
        return Decision(send=False, held_back=True)
    rule.notified_state, rule.notified_at = event.state, now
    return Decision(send=True, held_back=False)


def needs_catch_up(rule, now: datetime) -> bool:
    """No event this tick, but the state told is stale and the interval has passed."""
    return rule.notified_state != told_state(rule) and not quiet(rule, now)
