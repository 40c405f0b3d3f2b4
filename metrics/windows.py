"""Answers metric requests over arbitrary windows."""

from metrics.figures import Filters, Question, Totals
from metrics.raw import grouped


def totals_for(project, requests, metrics) -> list[Totals]:
    with_runs = "consecutive_fuses" in metrics
    answers = answer(project, [Question(start, end, filters) for start, end, filters in requests], with_runs)
    return [found.get((question.start, None), Totals()) for question, found in answers]


def answer(project, questions: list[Question], with_runs: bool = True):
    return [(q, grouped(project, q, with_runs)) for q in questions]
