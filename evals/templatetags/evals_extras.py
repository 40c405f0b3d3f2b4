import json

from django import template

from evals import runs
from evals.from_trace import trace_input
from evals.judge import KINDS
from evals.models import Dataset

register = template.Library()


@register.filter
def pct(value) -> str:
    """0.855 → 85.5%; no value → —."""
    if value is None or value == "":
        return "—"
    return f"{float(value) * 100:.1f}%"


@register.filter
def delta_pct(value) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:+.1f} pts"


@register.inclusion_tag("evals/_add_to_truth_set.html", takes_context=True)
def add_to_truth_set(context, trace):
    """The trace page's "Add to truth set" form: the trace's input and the
    corrected answer a reviewer types."""
    project = context["project"]
    return {
        "project": project, "trace": trace, "csrf_token": context.get("csrf_token"),
        "csp_nonce": context.get("csp_nonce"),
        "datasets": list(Dataset.objects.filter(project=project).order_by("name").values_list("name", flat=True)),
        "input": trace_input(trace), "kinds": KINDS,
    }


@register.inclusion_tag("evals/_eval_case.html", takes_context=True)
def eval_case(context, trace):
    """On the trace page of an evaluation case: the run's verdict and the expected answer."""
    found = runs.case_of_trace(context["project"], trace.trace_id)
    if found is None:
        return {"case": None}
    return {"case": {**found, "expected_text": _json(found["expected"]), "actual_text": _json(found["actual"]),
                     "run_url": found["run"].get_absolute_url()}}


def _json(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
