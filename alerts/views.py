import json
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from alerts import alert_rules, builder, delivery, evaluation, examples, notifications, shared_destinations, silences
from alerts.conditions import FILTER_KEYS, MATCHES, OPS, RATE_METRICS, RULE_METRICS, load_values
from alerts.models import (
    AlertEvent,
    AlertRule,
    Delivery,
    DeliveryAttempt,
    Destination,
    InboxMessage,
    SharedDestination,
    Silence,
    destinations_of,
    uses_of,
)
from alerts.serializers import AlertRuleSerializer, SharedDestinationSerializer, SilenceSerializer
from alerts.tasks import send_after_commit
from alerts.transports.inbox import verified
from core.errors import flatten_errors
from metrics.filter_options import filter_options
from tenancy.colocation import same_project
from tenancy.membership import changes_need, project_for_user_or_404
from tenancy.models import Role

MUTE_CHOICES = [("15", "15 minutes"), ("60", "1 hour"), ("240", "4 hours"), ("1440", "1 day"), ("10080", "1 week")]
HISTORY_SIZE = 100
DELIVERIES_SHOWN = 30


def _rule(request, slug, rule_id):
    project = project_for_user_or_404(request.user, slug)
    rule = get_object_or_404(AlertRule.objects.select_related("project"), project=project, pk=rule_id)
    return project, rule


def _preview(project, rule_data: dict) -> dict:
    result, conditions = evaluation.preview(project, rule_data["match"], rule_data["conditions"], timezone.now())
    return {"holding": result.holding,
            "values": [{"condition": c, "value": v, "holds": h}
                       for c, v, h in zip(rule_data["conditions"], result.values, result.holds)]}


@login_required
def rule_list(request, slug):
    project = project_for_user_or_404(request.user, slug)
    found = list(AlertRule.objects.filter(project=project).prefetch_related(destinations_of(project)))
    active = silences.Active([project.pk], timezone.now())
    for rule in found:
        rule.active_silence = active.for_rule(rule)
    return render(request, "alerts/rule_list.html", {"project": project, "rules": found,
                                                     "project_silence": active.project_wide.get(project.pk)})


def _builder(request, project, rule: AlertRule | None):
    preview = errors = None
    known = known_values(project)
    if request.method == "POST":
        rows = builder.rows_from_post(request.POST)
        unresolved = builder.resolve_filters(rows, known, rule)
        data = builder.data_from_rows(rows)
        serializer = AlertRuleSerializer(data=data, partial=rule is not None, context={"project": project})
        valid = serializer.is_valid()
        errors = {**(flatten_errors(serializer.errors) if not valid else {}), **builder.percent_errors(rows),
                  **unresolved}
        if not errors and request.POST.get("action") == "preview":
            preview = _preview(project, serializer.validated_data)
        elif not errors:
            if rule is None:
                rule = alert_rules.create_rule(project, serializer.validated_data, request.user)
                messages.success(request, "Rule created.")
            else:
                alert_rules.update_rule(rule, serializer.validated_data, request.user)
                messages.success(request, "Rule saved.")
            return redirect(rule)
    else:
        rows = builder.rows_from_rule(rule)
    return render(request, "alerts/rule_form.html", {
        "project": project, "rule": rule, "rows": rows, "errors": errors, "preview": preview,
        "metrics": RULE_METRICS, "ops": list(OPS), "matches": MATCHES, "filter_keys": FILTER_KEYS,
        "blank_condition": builder.BLANK_CONDITION, "blank_destination": builder.BLANK_DESTINATION,
        "known": known, "rate_metrics": RATE_METRICS,
        "destination_types": [t for t in builder.DESTINATION_TYPES if t != "inbox" or settings.WEBHOOK_INBOX],
        "shared_destinations": SharedDestination.objects.filter(project=project),
        "shared_prefix": builder.SHARED_PREFIX, "allow_private": settings.WEBHOOK_ALLOW_PRIVATE,
        "inbox_on": settings.WEBHOOK_INBOX,
    })


def known_values(project) -> dict[str, list]:
    """What the builder's filter inputs offer: the values the project's data holds."""
    options = filter_options(project)
    return {key: [str(value) for value in options.get(key, [])] for key in (*FILTER_KEYS, "model")}


@login_required
@changes_need(Role.EDITOR)
def rule_new(request, slug):
    return _builder(request, project_for_user_or_404(request.user, slug), None)


@login_required
@changes_need(Role.EDITOR)
def rule_edit(request, slug, rule_id):
    project, rule = _rule(request, slug, rule_id)
    return _builder(request, project, rule)


@login_required
def rule_detail(request, slug, rule_id):
    project, rule = _rule(request, slug, rule_id)
    deliveries = (
        Delivery.objects.filter(project=project, rule=rule)
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.filter(project=project).order_by("number")))
        .order_by("-created_at", "-pk")[:DELIVERIES_SHOWN]
    )
    events = list(AlertEvent.objects.filter(project=project, rule=rule).select_related("silence").order_by("-at", "-pk")[:20])
    for event in events:
        event.shown_values = load_values(event.values)
    destinations = list(rule.destinations_in_project().select_related("shared"))
    return render(request, "alerts/rule_detail.html", {
        "project": project, "rule": rule, "destinations": destinations, "deliveries": deliveries,
        "active_destinations": [d for d in destinations if not d.is_disabled],
        "events": events, "preview": _preview(project, {"match": rule.match, "conditions": rule.conditions}),
        "mute_choices": MUTE_CHOICES, "muted": rule.is_muted(),
        "last_values": load_values(rule.last_values),
    })


@login_required
def history(request, slug):
    project = project_for_user_or_404(request.user, slug)
    events = list(AlertEvent.objects.filter(same_project("rule"), project=project).select_related("rule", "silence")
                  .order_by("-at", "-pk")[:HISTORY_SIZE])
    examples.with_example_traces(events)
    for event in events:
        event.shown_values = load_values(event.values)
        event.trace_links = [(trace_id, reverse("provenance:trace-detail", args=[slug, trace_id]))
                             for trace_id in event.example_trace_ids]
    return render(request, "alerts/history.html", {"project": project, "events": events})


@login_required
@require_POST
@changes_need(Role.EDITOR)
def rule_toggle(request, slug, rule_id):
    _, rule = _rule(request, slug, rule_id)
    alert_rules.set_enabled(rule, not rule.enabled, request.user)
    messages.success(request, "Rule enabled." if rule.enabled else "Rule disabled.")
    return redirect(rule)


def _minutes_ahead(typed: str):
    """Now plus that many minutes; None unless it is a plain number (str.isdigit also
    takes "²", which int() refuses) whose end the calendar still holds."""
    if not (typed.isascii() and typed.isdigit()):
        return None
    try:
        return timezone.now() + timedelta(minutes=int(typed))
    except OverflowError:
        return None


@login_required
@require_POST
@changes_need(Role.EDITOR)
def rule_mute(request, slug, rule_id):
    _, rule = _rule(request, slug, rule_id)
    if request.POST.get("unmute"):
        alert_rules.mute(rule, None, request.user)
        messages.success(request, "Rule unmuted.")
        return redirect(rule)
    until = None
    if request.POST.get("until"):
        try:
            until = parse_datetime(request.POST["until"])
        except ValueError:  # well formed, but no such time (February 30th)
            until = None
        if until is not None and timezone.is_naive(until):
            until = timezone.make_aware(until, timezone.get_default_timezone())
    else:
        until = _minutes_ahead(request.POST.get("minutes", ""))
    if until is None or until <= timezone.now():
        messages.error(request, "Mute until: give a time in the future.")
    else:
        alert_rules.mute(rule, until, request.user)
        messages.success(request, f"Muted until {until:%Y-%m-%d %H:%M} UTC.")
    return redirect(rule)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def rule_test(request, slug, rule_id):
    project, rule = _rule(request, slug, rule_id)
    preview = _preview(project, {"match": rule.match, "conditions": rule.conditions})
    values = [{"metric": v["condition"]["metric"], "value": v["value"]} for v in preview["values"]]
    deliveries = notifications.create_test_deliveries(rule, values)
    send_after_commit([d.pk for d in deliveries])
    if deliveries:
        messages.success(request, f"Test notification sent to {len(deliveries)} destination(s); see the attempts below.")
    else:
        messages.error(request, "This rule has no enabled destination to send a test to.")
    return redirect(rule)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def destination_test(request, slug, rule_id, destination_id):
    """One test to one destination, attempted now, so the page can say what the receiver answered."""
    project, rule = _rule(request, slug, rule_id)
    destination = get_object_or_404(Destination.objects.select_related("shared"), project=project, rule=rule,
                                    pk=destination_id)
    preview = _preview(project, {"match": rule.match, "conditions": rule.conditions})
    values = [{"metric": v["condition"]["metric"], "value": v["value"]} for v in preview["values"]]
    [sent] = notifications.create_test_deliveries(rule, values, destination)
    delivery.attempt_many([sent.pk])
    attempt = DeliveryAttempt.objects.filter(project=project, delivery=sent).order_by("-number").first()
    if attempt is None:
        messages.error(request, "The test could not be attempted; see the deliveries below.")
    elif attempt.success:
        answer = f"{attempt.status_code} {attempt.response_excerpt}".strip()
        messages.success(request, f"Test delivered to {destination.target}: the receiver answered {answer[:300]}")
    else:
        answer = f" (answered {attempt.status_code}: {attempt.response_excerpt[:200]})" if attempt.status_code else ""
        messages.error(request, f"Test to {destination.target} failed: {attempt.error}{answer}")
    return redirect(rule)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def rule_delete(request, slug, rule_id):
    project, rule = _rule(request, slug, rule_id)
    alert_rules.delete_rule(rule, request.user)
    messages.success(request, "Rule deleted.")
    return redirect("alerts:rule-list", project.slug)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def destination_enable(request, slug, rule_id, destination_id):
    _, rule = _rule(request, slug, rule_id)
    alert_rules.enable_destination(get_object_or_404(Destination, project_id=rule.project_id, rule=rule, pk=destination_id), request.user)
    messages.success(request, "Destination enabled again.")
    return redirect(rule)


INBOX_SIZE = 50


@login_required
def inbox(request, slug):
    """The built-in webhook inbox: what inbox destinations received, newest first."""
    project = project_for_user_or_404(request.user, slug)
    found = list(InboxMessage.objects.filter(project=project).select_related("destination__rule")
                 .order_by("-received_at", "-pk")[:INBOX_SIZE])
    for message in found:
        message.verified = verified(message)
        message.webhook_id = message.headers.get("webhook-id", "")
        message.header_rows = sorted(message.headers.items())
        message.pretty_body = _pretty(message.body)
    enabled = settings.WEBHOOK_INBOX or Destination.objects.filter(project=project, kind="inbox").exists()
    return render(request, "alerts/inbox.html", {"project": project, "messages_received": found, "enabled": enabled})


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, allow_nan=True)
    except ValueError:
        return body


@login_required
@changes_need(Role.EDITOR)
def destinations(request, slug):
    """Project-wide destinations: set once, picked by any rule."""
    project = project_for_user_or_404(request.user, slug)
    errors, typed = None, dict(builder.BLANK_DESTINATION, name="")
    if request.method == "POST":
        typed = {key: request.POST.get(key, "").strip() for key in ("name", *builder.DESTINATION_INPUTS)}
        data = {"name": typed["name"], **builder.destination_from_row(typed)}
        serializer = SharedDestinationSerializer(data=data, project=project)
        if serializer.is_valid():
            created = shared_destinations.create(project, serializer.validated_data, request.user)
            messages.success(request, f"Destination {created.name!r} added: rules can pick it now.")
            return redirect("alerts:destinations", project.slug)
        errors = flatten_errors(serializer.errors)
    found = SharedDestination.objects.filter(project=project).prefetch_related(uses_of(project, "rule"))
    return render(request, "alerts/destinations.html", {
        "project": project, "destinations": found, "errors": errors, "typed": typed,
        "destination_types": [t for t in builder.DESTINATION_TYPES if t != "inbox" or settings.WEBHOOK_INBOX],
        "allow_private": settings.WEBHOOK_ALLOW_PRIVATE, "inbox_on": settings.WEBHOOK_INBOX,
    })


def _shared(request, slug, destination_id):
    project = project_for_user_or_404(request.user, slug)
    return project, get_object_or_404(SharedDestination, project=project, pk=destination_id)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def destination_delete(request, slug, destination_id):
    project, found = _shared(request, slug, destination_id)
    shared_destinations.delete(found, request.user)
    messages.success(request, f"Destination {found.name!r} deleted; the rules that used it no longer send there.")
    return redirect("alerts:destinations", project.slug)


@login_required
@require_POST
@changes_need(Role.EDITOR)
def shared_destination_enable(request, slug, destination_id):
    project, found = _shared(request, slug, destination_id)
    shared_destinations.enable(found, request.user)
    messages.success(request, f"Destination {found.name!r} enabled again.")
    return redirect("alerts:destinations", project.slug)


@login_required
@changes_need(Role.EDITOR)
def silence_list(request, slug):
    """Silences: add one (a rule or every rule, an end, a reason), end one, see the recent ones."""
    project = project_for_user_or_404(request.user, slug)
    errors, typed = None, {"rule_id": "", "minutes": "60", "until": "", "reason": ""}
    if request.method == "POST":
        typed = {key: request.POST.get(key, "").strip() for key in typed}
        until = typed["until"]
        if not until and (ahead := _minutes_ahead(typed["minutes"])):
            until = ahead.isoformat()
        # As typed: the serializer names a bad one (read as "every rule", a typo silenced them all).
        serializer = SilenceSerializer(data={"rule_id": typed["rule_id"] or None,
                                             "until": until, "reason": typed["reason"]},
                                       context={"project": project})
        if serializer.is_valid():
            created = silences.create(project, serializer.validated_data, request.user.get_username(), request.user)
            messages.success(request, f"Silenced until {created.until:%Y-%m-%d %H:%M} UTC.")
            return redirect("alerts:silences", project.slug)
        errors = flatten_errors(serializer.errors)
    now = timezone.now()
    recent = list(Silence.objects.filter(project=project).select_related("rule").order_by("-created_at")[:50])
    return render(request, "alerts/silences.html", {
        "project": project, "active": [s for s in recent if s.is_active(now)],
        "past": [s for s in recent if not s.is_active(now)], "errors": errors, "typed": typed,
        "rules": AlertRule.objects.filter(project=project), "durations": MUTE_CHOICES,
    })


@login_required
@require_POST
@changes_need(Role.EDITOR)
def silence_end(request, slug, silence_id):
    project = project_for_user_or_404(request.user, slug)
    silences.end(get_object_or_404(Silence, project=project, pk=silence_id), request.user.get_username(),
                 request.user)
    messages.success(request, "Silence ended: notifications go out again from the next state change.")
    return redirect("alerts:silences", project.slug)
