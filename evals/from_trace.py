"""Turning a production trace into a truth-set item: the trace's input, and
the corrected answer a reviewer typed on the trace page."""

import json

from evals import datasets, validation
from evals.models import Dataset
from evals.validation import Invalid
from provenance.models import Trace
from provenance.questions import question


def trace_input(trace: Trace):
    """What the workflow was asked (provenance.questions)."""
    return question(trace)


def typed_value(text: str):
    """A reviewer's typed answer: JSON when it parses (42, {"a": 60}), else the text itself."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        return text


def add_from_trace(project, trace: Trace, form, actor=None) -> tuple[Dataset, datasets.Change, str]:
    """Adds (or replaces) the item; creates the dataset when a new name is given."""
    new_name = (form.get("new_dataset") or "").strip()
    if new_name:
        name = validation.dataset_name(new_name, "new_dataset")
        dataset = Dataset.objects.filter(project=project, name=name).first()
        if dataset is None:
            try:
                dataset = datasets.create_dataset(project, name, f"Started from trace {trace.trace_id}", actor)
            except datasets.NameTaken:
                dataset = Dataset.objects.get(project=project, name=name)
    else:
        dataset = Dataset.objects.filter(project=project, name=form.get("dataset", "")).first()
        if dataset is None:
            raise Invalid("dataset", "choose a truth set, or name a new one")
    expected_text = form.get("expected", "")
    if not expected_text.strip():
        raise Invalid("expected", "type the correct answer")
    item = {
        "id": (form.get("item_id") or "").strip() or trace.trace_id,
        "input": trace_input(trace),
        "expected": typed_value(expected_text),
        "origin": "production",
        "tags": [t.strip() for t in (form.get("tags") or "").split(",") if t.strip()],
    }
    if form.get("kind"):
        item["kind"] = form["kind"]
    parsed = validation.item(item, "item")
    if parsed["kind"] == "label" and not isinstance(item["expected"], str):
        parsed = validation.item({**item, "expected": expected_text.strip()}, "item")
    change = datasets.apply_items(dataset, [parsed], action="trace", note=f"from trace {trace.trace_id}",
                                  actor=actor)
    return dataset, change, parsed["id"]
