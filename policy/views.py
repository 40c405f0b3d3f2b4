"""The policy pages: the policy (editable table, history, diff, rollback),
applying Calibration's suggested threshold, and the escalation inbox. Thin
wrappers over policy.store, policy.editing, policy.suggestion, policy.inbox."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.params import number_param, whole_number
from metrics.params import ChartParamsSerializer
from policy import editing, inbox, store, suggestion
from policy.document import PolicyError, diff, parse_document
from policy.models import PolicySource
from provenance.explorer.pages import trace_url
from provenance.models import Escalation, ReviewVerdict
from tenancy.colocation import same_project
from tenancy.membership import changes_need, project_for_user_or_404
from tenancy.models import Role


def person(request) -> str:
    return request.user.get_username()


def version_param(value) -> int | None:
    try:
        return whole_number(value)
    except ValueError:
        return None  # store.rollback names the field


@login_required
@changes_need(Role.EDITOR)
def policy_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    errors, note = {}, ""
    if request.method == "POST":
        rows = editing.rows_from_post(request.POST)
        note = request.POST.get("note", "")
        try:
            profiles, note = parse_document({"profiles": editing.profiles_from_rows(rows), "note": note})
        except PolicyError as error:
            errors = error.fields
        else:
            saved = store.replace(project, profiles, note, person(request), PolicySource.PAGE, actor=request.user)
            messages.success(request, f"Saved as version {saved.version}.")
            return redirect("policy:policy", slug)
    current = store.current(project)
    history = store.history(project)
    versions = [p.version for p in history]
    compare = compare_versions(project, request.GET, current, history)
    return render(request, "policy/policy.html", {
        "project": project,
        "policy": current,
        "rows": rows if errors else editing.rows_from_profiles(current.profiles),
        "blank_rows": editing.blank_rows(),
        "kinds": editing.KINDS,
        "errors": errors,
        "note": note,
        "history": history,
        "versions": versions,
        "compare": compare,
    }, status=400 if errors else 200)


def compare_versions(project, query, current: store.Policy, history: list[store.Policy]) -> dict | None:
    """The diff between ?from=A&to=B (default: the previous version and the current one)."""
    by_version = {p.version: p for p in history}
    after = number_param(query, "to")
    before = number_param(query, "from")
    after = after if after in by_version else current.version
    if before not in by_version:
        before = max((v for v in by_version if v < after), default=None)
    if before is None:
        return None
    return {"from": before, "to": after, "changes": diff(by_version[before].profiles, by_version[after].profiles)}


@login_required
@require_POST
@changes_need(Role.EDITOR)
def rollback(request, slug):
    project = project_for_user_or_404(request.user, slug)
    try:
        policy = store.rollback(project, version_param(request.POST.get("version")), person(request),
                                request.POST.get("note", "").strip()[:500], actor=request.user)
    except PolicyError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Rolled back: version {policy.version} equals version {policy.rolled_back_from}.")
    return redirect("policy:policy", slug)


FILTER_FIELDS = ("range", "start", "end", "agent_id", "step", "source_type", "round")
OBJECTIVE_FIELDS = ("objective", "cost_miss", "cost_review", "budget")


@login_required
@require_POST
@changes_need(Role.EDITOR)
def apply_threshold(request, slug):
    """From the Calibration page, in two steps: first the price of the
    suggested block threshold on the same reviews (nothing written), then,
    once the person confirms that number, a new version."""
    project = project_for_user_or_404(request.user, slug)
    query = {key: value for key, value in request.POST.items() if key in FILTER_FIELDS and value}
    back = reverse("metrics:calibration", args=[slug]) + ("?" + request.POST.get("query", "") if
                                                          request.POST.get("query") else "")
    params = ChartParamsSerializer(data=query)
    if not params.is_valid():
        messages.error(request, "the Calibration filters are not valid: " + "; ".join(
            f"{field}: {' '.join(str(m) for m in problems)}" for field, problems in params.errors.items()))
        return redirect(back)
    scope, _, name = request.POST.get("scope", "profile").partition(":")
    profile = request.POST.get("profile", "default")
    try:
        objective = suggestion.objective_from(request.POST)
        if request.POST.get("confirm") != "yes":
            priced = suggestion.preview(project, params.validated_data, scope, name, profile, objective)
            return render(request, "policy/apply_preview.html", {
                "project": project, "preview": priced, "back": back,
                "fields": [(k, v) for k, v in request.POST.items()
                           if k in (*FILTER_FIELDS, *OBJECTIVE_FIELDS, "scope", "profile", "query")],
            })
        policy = suggestion.apply(project, params.validated_data, scope, name, profile, person(request),
                                  _confirmed_block(request.POST.get("block")), objective, actor=request.user)
    except suggestion.NoSuggestion as refused:
        messages.error(request, str(refused))
        return redirect(back)
    except PolicyError as error:
        messages.error(request, f"not applied: {error}")
        return redirect(back)
    messages.success(request, f"Applied as version {policy.version}: {policy.note}")
    return redirect("policy:policy", slug)


def _confirmed_block(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise PolicyError({"block": "confirm the threshold shown in the preview"}) from None


@login_required
def inbox_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    entries = inbox.entries(project)
    for entry in entries:
        entry.trace_url = trace_url(project, entry.escalation.trace.trace_id, entry.escalation.product_id)
    return render(request, "policy/inbox.html", {
        "project": project, "entries": entries, "open_count": inbox.open_count(project),
        "verdicts": ReviewVerdict.choices,
    })


@login_required
@require_POST
@changes_need(Role.EDITOR)
def give_verdict(request, slug, escalation_id):
    project = project_for_user_or_404(request.user, slug)
    escalation = get_object_or_404(Escalation.objects.select_related("trace").filter(same_project("trace")),
                                   project=project, id=escalation_id)
    if escalation.closed_at is not None:
        messages.info(request, "That escalation was already closed by a review.")
        return redirect("policy:inbox", slug)
    verdict = request.POST.get("verdict", "")
    if verdict not in ReviewVerdict.values:
        messages.error(request, "Choose a verdict: correct or incorrect.")
        return redirect("policy:inbox", slug)
    comment = request.POST.get("comment", "")[:5000]
    corrected = request.POST.get("corrected", "")[:20000]
    try:
        inbox.give_verdict(project, escalation, verdict, comment, corrected, person(request))
    except ValueError as error:
        messages.error(request, f"The verdict was not stored: {error}")
        return redirect("policy:inbox", slug)
    messages.success(request, f"Judged {verdict}: the escalation of {escalation.product_id} is closed.")
    return redirect("policy:inbox", slug)

