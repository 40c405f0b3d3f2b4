"""The trace explorer's pages and their JSON endpoints: thin wrappers over
`explorer` and `reading`, each scoped to a project the user may see."""

from functools import wraps

import orjson
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache

from provenance import explorer, explorer_reads, reading
from provenance.forms import TraceFilterForm
from provenance.models import Node
from tenancy.membership import project_for_user_or_404, projects_for

PAGE_SIZE = 50


def json_response(data, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(data), status=status, content_type="application/json")


def session_json(view):
    """For the pages' fetches: an expired session answers 401, not a login page."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return json_response({"detail": "not logged in"}, status=401)
        return view(request, *args, **kwargs)

    return wrapped


def visible_trace_or_404(request, slug: str, trace_id: str) -> tuple:
    trace = explorer_reads.visible_trace(request.user, slug, trace_id)
    if trace is None:
        raise Http404("No such trace in a project you may see.")
    return trace.project, trace


def visible_node(request, slug: str, trace_id: str):
    """The node named by `?id=` in a visible trace, or an error response."""
    project, trace = visible_trace_or_404(request, slug, trace_id)
    product_id = request.GET.get("id", "")
    if not product_id:
        return project, None, json_response({"detail": "id: required (the node's product_id)"}, status=400)
    node = get_object_or_404(Node.objects.select_related("trace"), trace=trace, product_id=product_id)
    return project, node, None


@login_required
def home(request):
    projects = list(projects_for(request.user))
    if len(projects) == 1:
        return redirect(projects[0])
    return render(request, "provenance/home.html", {"projects": projects})


@never_cache  # live pages: going back must not show a stale copy
@login_required
def trace_list(request, slug):
    project = project_for_user_or_404(request.user, slug)
    form = TraceFilterForm(request.GET)
    page = Paginator(reading.traces(project, form.to_filters()), PAGE_SIZE).get_page(request.GET.get("page"))
    traces = explorer.list_page(list(page.object_list))
    agents, steps = explorer_reads.recent_agents_and_steps(project)
    return render(
        request,
        "provenance/trace_list.html",
        {"project": project, "form": form, "page": page, "traces": traces, "agents": agents, "steps": steps,
         "live": page.number == 1 and not form.is_filtered},
    )


@never_cache  # live pages: going back must not show a stale copy
@login_required
def bad_answers(request, slug):
    project = project_for_user_or_404(request.user, slug)
    page = Paginator(explorer_reads.bad_answers(project), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "provenance/bad_answers.html", {"project": project, "page": page, "answers": page})


@never_cache  # live pages: going back must not show a stale copy
@login_required
def trace_detail(request, slug, trace_id):
    project, trace = visible_trace_or_404(request, slug, trace_id)
    final = reading.final_answer(trace)
    context = {
        "project": project,
        "trace": trace,
        "final": final,
        "verdict": reading.latest_verdict(trace),
        "fused_count": reading.fused_counts([trace]).get(trace.pk, 0),
        # `?analyze=PRODUCT_ID` opens the page with that node's root cause shown.
        "analyze": request.GET.get("analyze", ""),
        "selected": request.GET.get("analyze") or request.GET.get("node") or (final.product_id if final else ""),
    }
    return render(request, "provenance/trace_detail.html", context)


def graph_view(params) -> explorer.GraphView:
    """`?expand=<cluster>&reveal=<node>&focus=<node>&hops=<n|all>&fold=0|1`; ValueError when malformed."""
    hops = params.get("hops", "all")
    if hops == "all":
        hops = None
    elif not hops.isdigit() or not 1 <= int(hops) <= 10_000:
        raise ValueError("hops: a whole number from 1 to 10000, or all")
    fold = params.get("fold")
    if fold not in (None, "0", "1"):
        raise ValueError("fold: 0 or 1")
    return explorer.GraphView(
        expanded=set(params.getlist("expand")), reveal=set(params.getlist("reveal")),
        focus=params.get("focus", ""), hops=None if hops is None else int(hops),
        fold=None if fold is None else fold == "1",
    )


@session_json
def trace_graph(request, slug, trace_id):
    project, trace = visible_trace_or_404(request, slug, trace_id)
    try:
        view = graph_view(request.GET)
    except ValueError as error:
        return json_response({"error": str(error), "fields": {str(error).split(":")[0]: str(error)}}, status=400)
    return json_response(explorer.graph(project, trace, view))


@session_json
def node_detail(request, slug, trace_id):
    project, node, error = visible_node(request, slug, trace_id)
    return error or json_response(explorer.node_detail(project, node))


@session_json
def node_root_cause(request, slug, trace_id):
    project, node, error = visible_node(request, slug, trace_id)
    return error or json_response(explorer.root_cause(project, node))


@session_json
def node_impact(request, slug, trace_id):
    project, node, error = visible_node(request, slug, trace_id)
    return error or json_response(explorer.impact(project, node))
