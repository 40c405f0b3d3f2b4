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


GUARD_FUSE = denoiseflow.ConfidenceFuse()


def guarded(question):
    """Fetches the case's fragments through `guard()`, one call per fragment on
    the same ticket and step: the confidences of each call's attempts come from
    the input. Answers how many fragments were accepted; a person stepped in
    when any call escalated."""
    case = denoiseflow.current_case()
    accepted, escalated = 0, False
    for confidences in question["fragments"]:
        attempts = iter(confidences)
        result = denoiseflow.guard(
            lambda feedback, attempts=attempts: denoiseflow.Output("fragment", next(attempts)),
            consumer="reasoning_agent", trace_id=case.trace_id, agent_id="retrieval_agent", step="retrieval",
            parent_ids=[case.input_node], fuse=GUARD_FUSE, recorder=case.recorder, max_retries=1,
            escalate_after=3)
        accepted += result.ok
        escalated = escalated or result.needs_person
        if result.needs_person:
            break
    return denoiseflow.Answer(accepted, escalated=escalated)


def priced_answer(question):
    """Answers right, in a timed step whose model call used tokens growing with n."""
    n = question["n"]
    with denoiseflow.step("answer_agent", step="answer", source_type="final_answer") as answer:
        answer.content = str(n * 10)
        answer.set(model="fake-small", usage={"input_tokens": 100 * n, "output_tokens": 10 * n})
    return denoiseflow.Answer(n * 10, node=answer.node)


def pricier_answer(question):
    """priced_answer at ten times the tokens: the same accuracy, a higher cost per passed case."""
    n = question["n"]
    with denoiseflow.step("answer_agent", step="answer", source_type="final_answer") as answer:
        answer.content = str(n * 10)
        answer.set(model="fake-small", usage={"input_tokens": 1000 * n, "output_tokens": 100 * n})
    return denoiseflow.Answer(n * 10, node=answer.node)
