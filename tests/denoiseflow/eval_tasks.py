"""Tasks the evaluation tests run, importable as `tests.denoiseflow.eval_tasks:NAME` by the CLI."""

import denoiseflow

ANSWERS = {"q-1": 10, "q-2": 20.4, "q-3": 31}


def lookup(question):
    """Answers from a table, records a reasoning node under the case's input, escalates q-3."""
    case = denoiseflow.current_case()
    answer = ANSWERS.get(case.item_id)
    if answer is None:
        raise LookupError(f"no answer for {question!r}")
    node = case.record("table_agent", str(answer), step="lookup", source_type="final_answer",
                       product_id=f"{case.trace_id}:final", confidence=0.9)
    return denoiseflow.Answer(answer, escalated=case.item_id == "q-3", node=node)


def perfect(question):
    return question["n"] * 10


def plain(question):
    return 0
