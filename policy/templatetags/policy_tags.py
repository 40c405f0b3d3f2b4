"""What other apps' pages show of the policy: the inbox count in the
navigation, and Calibration's "Apply this threshold" box."""

from django import template

from policy import inbox, suggestion

register = template.Library()


@register.simple_tag
def open_escalations(project) -> int:
    return inbox.open_count(project) if project is not None else 0


@register.inclusion_tag("policy/apply_threshold_box.html", takes_context=True)
def apply_threshold_box(context, project):
    """The suggestion for the page's filters and range, or why there is none.

    The page's own parameters (its range fitted to the data when none was
    chosen), so the box judges the reviews the charts show; the form carries
    that window as explicit start and end, so applying it judges them too."""
    request = context["request"]
    params = context.get("params")
    found = {"project": project, "form": request.GET, "query": request.GET.urlencode(),
             "min_reviews": suggestion.MIN_REVIEWS, "min_each": suggestion.MIN_EACH,
             "csrf_token": context.get("csrf_token")}
    if params is None:
        return found
    found["window"] = {"start": params.query()["start"], "end": params.query()["end"]}
    try:
        found["suggestion"] = suggestion.suggest(project, params)
    except suggestion.NoSuggestion as refused:
        found["refused"] = str(refused)
        found["fix_signal"] = isinstance(refused, suggestion.FixSignalFirst)
    filters = params.filters
    # The scope carries its name (`by_step:refund`): the page needs no script to keep them together.
    found["scopes"] = [("profile", "the default profile")]
    if filters.agent_id:
        found["scopes"].insert(0, (f"by_agent_type:{filters.agent_id}", f"agent type {filters.agent_id}"))
    if filters.step:
        found["scopes"].insert(0, (f"by_step:{filters.step}", f"step {filters.step}"))
    return found


@register.filter
def share(value) -> str:
    """0.361 → 36.1%; no value → –."""
    return "–" if value is None else f"{float(value) * 100:.1f}%"


@register.filter
def per_day(value) -> str:
    return "–" if value is None else f"{float(value):.1f}"
