"""What other apps' pages show of the policy: the inbox count in the
navigation, and Calibration's "Apply this threshold" box."""

from django import template

from metrics.params import ChartParamsSerializer
from policy import inbox, suggestion

register = template.Library()


@register.simple_tag
def open_escalations(project) -> int:
    return inbox.open_count(project) if project is not None else 0


@register.inclusion_tag("policy/apply_threshold_box.html", takes_context=True)
def apply_threshold_box(context, project):
    """The suggestion for the page's filters, or why there is none."""
    request = context["request"]
    params = ChartParamsSerializer(data=request.GET)
    found = {"project": project, "form": request.GET, "query": request.GET.urlencode(),
             "min_reviews": suggestion.MIN_REVIEWS, "min_each": suggestion.MIN_EACH,
             "csrf_token": context.get("csrf_token")}
    if not params.is_valid():
        return found
    try:
        found["suggestion"] = suggestion.suggest(project, params.validated_data)
    except suggestion.TooFewReviews as refused:
        found["refused"] = str(refused)
    filters = params.validated_data.filters
    # The scope carries its name (`by_step:refund`): the page needs no script to keep them together.
    found["scopes"] = [("profile", "the default profile")]
    if filters.agent_id:
        found["scopes"].insert(0, (f"by_agent_type:{filters.agent_id}", f"agent type {filters.agent_id}"))
    if filters.step:
        found["scopes"].insert(0, (f"by_step:{filters.step}", f"step {filters.step}"))
    return found
