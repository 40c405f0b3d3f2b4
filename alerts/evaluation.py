"""Each rule's state at a given time, and the state machine that turns states
into firing and resolved events.

Windows end at the evaluation time: `[now - window, now)`; a relative condition
also reads the window of the same length just before. Conditions of all the
rules of a project are grouped by (window, filters), so one tick asks the
metrics app once per project whatever the number of rules.

Ticks are safe to run concurrently and to repeat: rules are claimed with
`SELECT … FOR UPDATE SKIP LOCKED` and only if not yet evaluated at or after
`now`, so a rule's transition happens once per tick and a repeated (or missed
and later caught up) tick never fires twice.
"""

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q

from alerts import delivery, notifications, silences, storm, watchdog
from alerts.conditions import (
    EVAL_ACCURACY,
    HEALTH_FINDINGS,
    ROUND_LIMIT_BREACHES,
    Condition,
    relative_change,
    rule_holds,
    store_value,
)
from alerts.models import AlertEvent, AlertRule, RuleState
from core.dialect import is_postgres
from evals.runs import finished_accuracies
from metrics.values import many_window_values
from policy.store import max_rounds
from provenance.health import latest_finding_count


@dataclass(frozen=True)
class RuleResult:
    values: list[float | None]  # per condition, what was compared with its threshold
    holds: list[bool]
    holding: bool


def _windows(condition: Condition, now: datetime) -> list[tuple]:
    current = (now - condition.window, now, condition.filters)
    if not condition.relative:
        return [current]
    return [current, (now - 2 * condition.window, now - condition.window, condition.filters)]


# Metrics that read no window of nodes.
WINDOWLESS = (HEALTH_FINDINGS, EVAL_ACCURACY)


def compute(project, rules: list[tuple[str, list[Condition]]], now: datetime) -> list[RuleResult]:
    """The results of (match, conditions) pairs of one project at `now`."""
    needed: dict[tuple, set[str]] = defaultdict(set)  # (start, end, filters) -> metrics wanted there
    for _, conditions in rules:
        for condition in conditions:
            if condition.metric not in WINDOWLESS:
                for window in _windows(condition, now):
                    needed[window].add(condition.metric)
    # One call for all windows, each asking only its own metrics, so the costly
    # ones (consecutive_fuses, trace_count) are computed only where wanted.
    windows = list(needed)
    # round_limit_breaches counts against the policy's round limit (default profile), read only when asked.
    uses_rounds = any(ROUND_LIMIT_BREACHES in wanted for wanted in needed.values())
    round_limit = max_rounds(project) if uses_rounds else None
    found = (many_window_values(project, [(*w, sorted(needed[w])) for w in windows], round_limit=round_limit)
             if windows else [])
    answers = dict(zip(windows, found))
    uses_health = any(c.metric == HEALTH_FINDINGS for _, conditions in rules for c in conditions)
    findings = latest_finding_count(project) if uses_health else 0
    # Per dataset: [newest finished run's accuracy, the one before] as of `now`.
    accuracies = {c.dataset: finished_accuracies(project, c.dataset, now)
                  for _, conditions in rules for c in conditions if c.metric == EVAL_ACCURACY}

    results = []
    for match, conditions in rules:
        values = []
        for condition in conditions:
            if condition.metric == HEALTH_FINDINGS:
                measured = [float(findings)] * (2 if condition.relative else 1)
            elif condition.metric == EVAL_ACCURACY:
                found = accuracies[condition.dataset] + [None, None]
                measured = found[:2] if condition.relative else found[:1]
            else:
                measured = [answers[w][condition.metric] for w in _windows(condition, now)]
            values.append(relative_change(*measured) if condition.relative else measured[0])
        holds = [c.holds(v) for c, v in zip(conditions, values)]
        results.append(RuleResult(values, holds, rule_holds(match, holds)))
    return results


def preview(project, match: str, conditions: list[dict], now: datetime) -> tuple[RuleResult, list[Condition]]:
    """What a rule (saved or not) would say at `now`, without touching any state."""
    parsed = [Condition.from_json(c) for c in conditions]
    return compute(project, [(match, parsed)], now)[0], parsed


@dataclass(frozen=True)
class Transition:
    state: str
    pending_since: datetime | None
    notify: str | None  # "firing", "resolved" or None


def step(state: str, pending_since: datetime | None, holding: bool, now: datetime, for_seconds: int) -> Transition:
    """ok → pending → firing → ok. A rule fires once it has held on every
    evaluation for `for_seconds`; it notifies on entering and on leaving firing."""
    if not holding:
        return Transition(RuleState.OK, None, "resolved" if state == RuleState.FIRING else None)
    if state == RuleState.FIRING:
        return Transition(RuleState.FIRING, pending_since, None)
    since = pending_since if state == RuleState.PENDING and pending_since else now
    if (now - since).total_seconds() >= for_seconds:
        return Transition(RuleState.FIRING, since, "firing")
    return Transition(RuleState.PENDING, since, None)


def _claim_rules(now: datetime) -> list[AlertRule]:
    return list(
        AlertRule.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("project")
        .filter(enabled=True)
        .filter(Q(last_evaluated_at__isnull=True) | Q(last_evaluated_at__lt=now))
        .order_by("pk")
    )


def _event(rule: AlertRule, kind: str, conditions: list[Condition], result: RuleResult, now,
           silence) -> AlertEvent:
    # Example traces come from the window of the first condition that held (or the first one).
    shown = next((c for c, held in zip(conditions, result.holds) if held), conditions[0])
    return AlertEvent(
        project=rule.project, rule=rule, state=kind, at=now,
        values=[{"metric": c.metric, "value": store_value(v)} for c, v in zip(conditions, result.values)],
        window_start=now - shown.window, example_filters=shown.filters.dimensions,
        muted=rule.is_muted(now), silence=silence,
    )


def _notify(rules: list[AlertRule], events: list[AlertEvent], now, silenced: silences.Active) -> list[AlertEvent]:
    """Which events go out now (alerts/storm.py): new ones that are not silenced
    nor held back, and the newest held-back one of each rule whose state its
    destinations were not told and that is no longer held."""
    sending = []
    fresh = {event.rule_id for event in events}
    for event in events:
        if event.silenced:
            continue
        if storm.on_event(event.rule, event, now).send:
            sending.append(event)
        else:
            event.held_back = True
    stale = [r for r in rules if r.pk not in fresh and not r.is_muted(now) and silenced.for_rule(r) is None
             and storm.needs_catch_up(r, now)]
    if stale:
        late = {}
        # Only storm control's held-back events: a silenced one is never sent later.
        for event in (AlertEvent.objects.filter(rule__in=stale, held_back=True, sent_late_at__isnull=True)
                      .select_related("rule__project").order_by("rule_id", "-at", "-pk")):
            late.setdefault(event.rule_id, event)
        by_pk = {r.pk: r for r in stale}
        for rule_id, event in late.items():
            rule = by_pk[rule_id]
            if event.state == storm.told_state(rule):
                event.rule, event.sent_late_at = rule, now
                rule.notified_state, rule.notified_at = event.state, now
                sending.append(event)
        AlertEvent.objects.filter(pk__in=[e.pk for e in sending if e.sent_late_at]).update(
            sent_late_at=now, fan_out_pending=True)
    for event in sending:
        event.fan_out_pending = True
    return sending


def _save_states(rules: list[AlertRule]) -> None:
    """The state-machine columns of every evaluated rule, in one statement on
    PostgreSQL (Django's bulk_update builds a CASE per row and field, which
    costs more than the whole evaluation at a few hundred rules)."""
    if not rules:
        return
    columns = ("state", "pending_since", "last_evaluated_at", "last_holding", "last_values", "notified_state",
               "notified_at")
    rows = [(r.pk, r.state, r.pending_since, r.last_evaluated_at, r.last_holding, json.dumps(r.last_values),
             r.notified_state, r.notified_at) for r in rules]
    table = AlertRule._meta.db_table
    with connection.cursor() as cursor:
        if is_postgres():
            cursor.execute(
                f"UPDATE {table} AS r SET state = u.state, pending_since = u.pending_since, "
                "last_evaluated_at = u.last_evaluated_at, last_holding = u.last_holding, "
                "last_values = u.last_values::jsonb, notified_state = u.notified_state, "
                "notified_at = u.notified_at "
                "FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], %s::timestamptz[], %s::boolean[], "
                "%s::text[], %s::text[], %s::timestamptz[]) AS u(id, state, pending_since, last_evaluated_at, "
                "last_holding, last_values, notified_state, notified_at) "
                "WHERE r.id = u.id",
                [list(column) for column in zip(*rows)],
            )
        else:
            adapt = connection.ops.adapt_datetimefield_value
            assignments = ", ".join(f"{column} = %s" for column in columns)
            cursor.executemany(f"UPDATE {table} SET {assignments} WHERE id = %s",
                               [(state, adapt(pending), adapt(evaluated), holding, values, told, adapt(told_at), pk)
                                for pk, state, pending, evaluated, holding, values, told, told_at in rows])


def evaluate(now: datetime) -> list[int]:
    """One tick over every enabled rule; returns the ids of the events it sends.

    Its transaction writes the rules' states and the events (those to send
    marked `fan_out_pending`), whether the rules have destinations or not:
    their deliveries are made after it commits (`notifications.fan_out`, the
    caller's), so routing rules costs the tick nothing, and a fan-out lost on
    the way is made by the periodic delivery job."""
    with transaction.atomic():
        rules = _claim_rules(now)
        by_project = defaultdict(list)
        for rule in rules:
            by_project[rule.project_id].append(rule)
        silenced = silences.Active(by_project, now)
        events = []
        for project_rules in by_project.values():
            parsed = [[Condition.from_json(c) for c in rule.conditions] for rule in project_rules]
            results = compute(project_rules[0].project, [(r.match, p) for r, p in zip(project_rules, parsed)], now)
            for rule, conditions, result in zip(project_rules, parsed, results):
                transition = step(rule.state, rule.pending_since, result.holding, now, rule.for_seconds)
                rule.state, rule.pending_since = transition.state, transition.pending_since
                rule.last_evaluated_at, rule.last_holding = now, result.holding
                rule.last_values = [{"metric": c.metric, "value": store_value(v)}
                                    for c, v in zip(conditions, result.values)]
                if transition.notify:
                    events.append(_event(rule, transition.notify, conditions, result, now, silenced.for_rule(rule)))
        sending = _notify(rules, events, now, silenced)
        _save_states(rules)
        AlertEvent.objects.bulk_create(events)
    return [event.pk for event in sending]


def send_now(event_ids: list[int]) -> list[int]:
    """These events' deliveries, made and first attempted here; their ids."""
    delivery_ids = notifications.fan_out(event_ids)
    delivery.attempt_many(delivery_ids)
    return delivery_ids


def tick(now: datetime, send=send_now) -> list[int]:
    """What the minute job does: evaluate (its transaction commits first, so no
    rule stays locked while a receiver answers), then `send` the events it
    decided to send: fanned out and first attempted here by default
    (`evaluate_alerts`), or handed to the delivery workers (the Celery task).
    Returns the events' ids."""
    watchdog.beat(watchdog.TICK)
    event_ids = evaluate(now)
    send(event_ids)
    return event_ids
