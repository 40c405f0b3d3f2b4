"""The evaluation pages: truth sets, their runs, one run, a comparison. Thin
wrappers over the domain modules, each scoped to a project the user may see."""

import json
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.params import number_param, whole_number
from evals import api_json, comparison, datasets, jsonl, runs, validation
from evals.from_trace import add_from_trace
from evals.models import Dataset, Run, RunStatus
from evals.validation import Invalid
from provenance.models import Trace
from tenancy.colocation import same_project
from tenancy.membership import changes_need, project_for_user_or_404
from tenancy.models import Role

PAGE_SIZE = 50
RESULTS_PAGE_SIZE = 100
CHART_RUNS = 100


def _dataset(request, slug: str, name: str) -> tuple:
    project = project_for_user_or_404(request.user, slug)
    return project, get_object_or_404(Dataset.objects.select_related("project"), project=project, name=name)


def _run(request, slug: str, run_id: int) -> tuple:
    project = project_for_user_or_404(request.user, slug)
    return project, get_object_or_404(Run.objects.select_related("dataset", "project").filter(same_project("dataset")),
                                      project=project, id=run_id)


def _version(request, dataset: Dataset) -> int:
    raw = request.GET.get("version", "")
    if not raw:
        return dataset.version
    version = number_param(request.GET, "version")
    if version > dataset.version:
        raise Http404(f"no version {raw} of {dataset.name}")
    return version


def _api_base(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")


@login_required
@changes_need(Role.EDITOR)
def dataset_list(request, slug):
    project = project_for_user_or_404(request.user, slug)
    if request.method == "POST":
        return _create_dataset(request, project)
    page = Paginator(Dataset.objects.filter(project=project).order_by("name"), PAGE_SIZE).get_page(
        request.GET.get("page"))
    listed = api_json.datasets_json(list(page.object_list))
    latest = {}
    for dataset in page.object_list:
        newest = runs.runs_of(dataset).first()
        if newest is not None:
            latest[dataset.pk] = api_json.runs_json([newest])[0]
    for entry, dataset in zip(listed, page.object_list):
        entry["url"] = dataset.get_absolute_url()
        entry["runs_url"] = reverse("evals:dataset-runs", args=[slug, dataset.name])
        entry["latest_run"] = latest.get(dataset.pk)
    return render(request, "evals/dataset_list.html",
                  {"project": project, "page": page, "datasets": listed, "api_base": _api_base(request)})


def _create_dataset(request, project):
    try:
        name = validation.dataset_name(request.POST.get("name", "").strip())
        description = validation.text(request.POST.get("description", ""), "description")
        dataset = datasets.create_dataset(project, name, description, request.user)
    except Invalid as error:
        messages.error(request, f"Not created: {error}")
        return redirect("evals:dataset-list", project.slug)
    except datasets.NameTaken:
        messages.error(request, "Not created: a dataset of that name already exists.")
        return redirect("evals:dataset-list", project.slug)
    messages.success(request, f"Dataset {dataset.name} created.")
    return redirect(dataset)


@login_required
def dataset_detail(request, slug, name):
    project, dataset = _dataset(request, slug, name)
    version = _version(request, dataset)
    rows = list(datasets.items_at(dataset, version).order_by("item_id"))
    tags = sorted({tag for row in rows for tag in row.tags})
    drifted = [row for row in rows if row.drifted]
    tag, origin = request.GET.get("tag", ""), request.GET.get("origin", "")
    shown = [row for row in rows if (not tag or tag in row.tags) and (not origin or row.origin == origin)]
    if request.GET.get("drifted"):
        shown = [row for row in shown if row.drifted]
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "project": project, "dataset": dataset, "version": version, "is_newest": version == dataset.version,
        "item_count": len(rows), "page": page, "items": [_item_row(row) for row in page.object_list],
        "drifted": [_item_row(row) for row in drifted], "tags": tags, "tag": tag, "origin": origin,
        "origins": validation.ORIGINS, "versions": datasets.version_changes(dataset),
        "run_count": dataset.runs.filter(project_id=dataset.project_id).count(), "api_base": _api_base(request),
    }
    return render(request, "evals/dataset_detail.html", context)


def _show(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _item_row(row) -> dict:
    return {"id": row.item_id, "input": _show(row.input), "expected": _show(row.expected), "kind": row.kind,
            "tags": row.tags, "origin": row.origin, "tolerance": _show(row.tolerance) if row.tolerance else "",
            "drifted": row.drifted, "drift_current": _show(row.drift_current) if row.drifted else "",
            "drifted_at": row.drifted_at}


@login_required
def dataset_export(request, slug, name):
    _, dataset = _dataset(request, slug, name)
    version = _version(request, dataset)
    items = [api_json.item_json(row) for row in datasets.items_at(dataset, version).order_by("item_id")]
    response = HttpResponse(jsonl.dump(items), content_type=jsonl.MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{dataset.name}-v{version}.jsonl"'
    return response


@require_POST
@login_required
@changes_need(Role.EDITOR)
def dataset_import(request, slug, name):
    _, dataset = _dataset(request, slug, name)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a .jsonl file to import.")
        return redirect(dataset)
    try:
        items = validation.items(jsonl.parse(upload.read()))
        change = datasets.apply_items(dataset, items, remove_others=bool(request.POST.get("replace")),
                                      action="import", note=f"imported {upload.name}"[:300], actor=request.user)
    except Invalid as error:
        messages.error(request, f"Nothing imported: {error}")
        return redirect(dataset)
    if change.version == dataset.version:
        messages.info(request, f"Nothing changed: the file's {change.unchanged} items are already there.")
    else:
        messages.success(request, f"Version {change.version}: {change.created} added, {change.updated} updated, "
                                  f"{change.unchanged} unchanged, {change.deleted} removed.")
    return redirect(dataset)


@require_POST
@login_required
@changes_need(Role.EDITOR)
def dataset_rollback(request, slug, name):
    _, dataset = _dataset(request, slug, name)
    raw = request.POST.get("version", "")
    try:
        change = datasets.rollback(dataset, whole_number(raw), request.user)
    except ValueError as error:
        messages.error(request, f"Not rolled back: version: {error}")
        return redirect(dataset)
    except Invalid as error:
        messages.error(request, f"Not rolled back: {error}")
        return redirect(dataset)
    if change.version == dataset.version:
        messages.info(request, f"Nothing changed: the newest version already equals version {raw}.")
    else:
        messages.success(request, f"Version {change.version} now equals version {raw}.")
    return redirect(dataset)


@login_required
def dataset_runs(request, slug, name):
    project, dataset = _dataset(request, slug, name)
    page = Paginator(runs.runs_of(dataset), PAGE_SIZE).get_page(request.GET.get("page"))
    listed = api_json.runs_json(list(page.object_list))
    for entry in listed:
        entry["url"] = reverse("evals:run-detail", args=[slug, entry["id"]])
    history = api_json.runs_json(list(runs.runs_of(dataset)[:CHART_RUNS]))[::-1]
    chart = [{"id": r["id"], "name": r["name"] or f"run {r['id']}", "at": r["created_at"].isoformat(),
              "accuracy": r["accuracy"], "intervention_rate": r["intervention_rate"], "status": r["status"],
              "url": reverse("evals:run-detail", args=[slug, r["id"]])} for r in history]
    return render(request, "evals/dataset_runs.html", {
        "project": project, "dataset": dataset, "page": page, "runs": listed, "chart": chart,
        "api_base": _api_base(request),
    })


def _trace_links(project, trace_ids) -> dict[str, str]:
    """Trace page URLs for the traces that exist (an eval trace may not have arrived)."""
    found = Trace.objects.filter(project=project, trace_id__in=[t for t in trace_ids if t]).values_list(
        "trace_id", flat=True)
    return {trace_id: reverse("provenance:trace-detail", args=[project.slug, trace_id]) for trace_id in found}


def _shown(result: dict, links: dict[str, str]) -> dict:
    """A result for a template: its values as JSON text, and its trace page opened on its node."""
    url = links.get(result["trace_id"], "")
    if url and result["product_id"]:
        # A failed case opens with "why is this wrong?" already answered.
        url += "?" + urlencode({"node" if result["passed"] else "analyze": result["product_id"]})
    return {**result, "expected_text": _show(result["expected"]), "actual_text": _show(result["actual"]),
            "trace_url": url}


def _result_rows(project, results: list[dict]) -> list[dict]:
    links = _trace_links(project, {r["trace_id"] for r in results})
    return [_shown(r, links) for r in results]


@login_required
def run_detail(request, slug, run_id):
    project, run = _run(request, slug, run_id)
    summary = api_json.summary_json(run)
    tag, origin, outcome = request.GET.get("tag", ""), request.GET.get("origin", ""), request.GET.get("outcome", "")
    results = [r for r in summary["results"]
               if (not tag or tag in r["tags"]) and (not origin or r["origin"] == origin)
               and (outcome != "failed" or not r["passed"]) and (outcome != "passed" or r["passed"])]
    # Failed cases first: they are what the page is opened for.
    results.sort(key=lambda r: (r["passed"], r["item_id"]))
    page = Paginator(results, RESULTS_PAGE_SIZE).get_page(request.GET.get("page"))
    previous = runs.previous_finished(run)
    return render(request, "evals/run_detail.html", {
        "project": project, "run": run, "summary": summary, "page": page,
        "results": _result_rows(project, list(page.object_list)),
        "tags": sorted(summary["by_tag"]), "tag": tag, "origin": origin, "outcome": outcome,
        "origins": validation.ORIGINS, "previous": previous, "api_base": _api_base(request),
        "by_tag": [{"tag": k, **v} for k, v in summary["by_tag"].items()],
    })


@login_required
def run_compare(request, slug, run_id):
    project, run = _run(request, slug, run_id)
    to = number_param(request.GET, "to")
    if to is not None:
        other = get_object_or_404(Run.objects.select_related("dataset").filter(same_project("dataset")),
                                  project=project, id=to,
                                  dataset=run.dataset)
    else:
        other = runs.previous_finished(run)
        if other is None:
            messages.info(request, "There is no earlier finished run of this dataset to compare with.")
            return redirect(run)
    compared = comparison.compare(run, other)
    here = {r["item_id"]: r for r in runs.summary(run)["results"]}
    there = {r["item_id"]: r for r in runs.summary(other)["results"]}

    links_here = _trace_links(project, {r["trace_id"] for r in here.values()})
    links_there = _trace_links(project, {r["trace_id"] for r in there.values()})

    def side(result, links):
        return {"missing": True} if result is None else _shown(result, links)

    def rows(item_ids):
        listed = []
        for item_id in item_ids:
            mine, theirs = side(here.get(item_id), links_here), side(there.get(item_id), links_there)
            expected = mine.get("expected_text") or theirs.get("expected_text") or ""
            listed.append({"item_id": item_id, "expected_text": expected, "here": mine, "there": theirs})
        return listed

    others = runs.runs_of(run.dataset).exclude(pk=run.pk).filter(status=RunStatus.FINISHED)[:50]
    return render(request, "evals/run_compare.html", {
        "project": project, "run": run, "other": other, "compared": compared,
        "trade_off": comparison.trade_off_rows(compared["trade_off"]),
        "fixed": rows(compared["fixed"]), "broken": rows(compared["broken"]),
        "still_failing": rows(compared["still_failing"]), "others": others,
    })


@require_POST
@login_required
@changes_need(Role.EDITOR)
def truth_from_trace(request, slug):
    project = project_for_user_or_404(request.user, slug)
    trace = get_object_or_404(Trace, project=project, trace_id=request.POST.get("trace_id", ""))
    try:
        dataset, change, item_id = add_from_trace(project, trace, request.POST, request.user)
    except Invalid as error:
        messages.error(request, f"Not added to the truth set: {error}")
        return redirect(trace)
    messages.success(request, f"Added {item_id} to {dataset.name} (version {change.version}).")
    return redirect(trace)
