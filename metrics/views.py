"""The metrics pages: server-rendered filters, charts drawn by one script per
page from the page's JSON endpoint (the same builders as the API)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from rest_framework.utils.encoders import JSONEncoder

from metrics import overview_panels, page_filters
from metrics.dashboards import DASHBOARDS
from metrics.filter_options import data_extent, filter_options
from metrics.params import DEFAULT_RANGE, RANGES, ChartParamsSerializer
from tenancy.membership import project_for_user_or_404

# (url name, title, dashboard its data comes from)
PAGES = [
    ("overview", "Overview", "overview"),
    ("fuses", "Fuse rates", "fuses"),
    ("uncertainty", "Uncertainty", "distributions"),
    ("drift", "Drift", "drift"),
    ("calibration", "Calibration", "calibration"),
    ("cost", "Cost & latency", "cost"),
]
DATA_OF = {name: data for name, _, data in PAGES}
TITLES = {name: title for name, title, _ in PAGES}
BY_CHOICES = [("step", "step"), ("agent_id", "agent"), ("source_type", "source type"), ("round", "round")]
COST_BY_CHOICES = [("agent_id", "agent"), ("step", "step"), ("model", "model")]


def settings_url(slug: str) -> str:
    """The project settings page, where the price table is set."""
    return reverse("provenance:settings", args=[slug])


def page(name: str):
    @login_required
    def view(request, slug):
        project = project_for_user_or_404(request.user, slug)
        serializer = page_params(request, project, DATA_OF[name])
        valid = serializer.is_valid()
        options = filter_options(project)
        params, resolved = page_filters.resolve(serializer.validated_data, options) if valid else (None, {})
        data_url = reverse("metrics:data", args=[slug, DATA_OF[name]])
        if request.GET:
            data_url += "?" + request.GET.urlencode()
        return render(request, f"metrics/{name}.html", {
            "project": project,
            "page_title": TITLES[name],
            "pages": [(url_name, title, reverse(f"metrics:{url_name}", args=[slug])) for url_name, title, _ in PAGES],
            "current_page": name,
            "form": request.GET,
            "errors": serializer.errors if not valid else {},
            "params": params,
            "resolved": resolved,
            "ranges": list(RANGES),
            "selected_range": selected_range(request, params),
            "options": {column: [str(v) for v in values] for column, values in options.items()},
            "metric_names": options["metric"],
            "by_choices": BY_CHOICES,
            "data_url": data_url if valid else "",
            "recent_alerts": overview_panels.rows("recent_alerts", project) if name == "overview" else None,
            "checks_not_running": overview_panels.rows("checks_not_running", project) if name == "overview" else None,
            "cost_by_choices": COST_BY_CHOICES,
            "settings_url": settings_url(slug),
        })

    view.__name__ = name
    return view


@login_required
def data(request, slug, name):
    project = project_for_user_or_404(request.user, slug)
    if name not in DASHBOARDS:
        raise Http404
    serializer = page_params(request, project, name)
    if not serializer.is_valid():
        return JsonResponse({"error": "invalid request", "fields": serializer.errors}, status=400)
    params, _ = page_filters.resolve(serializer.validated_data, filter_options(project))
    return JsonResponse(DASHBOARDS[name](project, params), encoder=JSONEncoder)


# Dashboards that compare nothing with a previous period: their default range holds all the data it can.
FIT_ALL = {"calibration"}


def page_params(request, project, dashboard: str) -> ChartParamsSerializer:
    """The pages (unlike the API) fit a missing range to the project's data."""
    return ChartParamsSerializer(data=request.GET, context={"fit_to": lambda: data_extent(project),
                                                            "fit_all": dashboard in FIT_ALL})


def selected_range(request, params) -> str:
    if params:
        return params.range
    return "" if request.GET.get("start") else request.GET.get("range", DEFAULT_RANGE)
