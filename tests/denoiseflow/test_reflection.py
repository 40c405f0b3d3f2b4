"""The reflection loop stops on convergence, on the round limit, or when the
critique finds nothing; each draft is a node whose parents show the loop."""

import pytest

import denoiseflow as df


def editor(drafts):
    """A fake model that revises through `drafts` in turn, and a critic that always has a note."""
    queue = iter(drafts)
    return (lambda: next(queue)), (lambda draft: f"tighten: {draft[:20]}"), (lambda draft, note: next(queue))


def test_the_loop_stops_when_two_drafts_in_a_row_agree():
    generate, critique, revise = editor(["Refunds take 14 days.", "Refunds take 14 business days.",
                                         "Refunds take 14 business days!", "never reached"])
    result = df.reflect(generate, critique, revise, max_rounds=5)
    assert result.stopped == "converged" and result.converged
    assert result.rounds == 3 and result.answer == "Refunds take 14 business days!"
    assert result.similarities[-1] >= 0.95 > result.similarities[0]
    assert len(result.critiques) == 2


def test_the_loop_stops_at_the_round_limit():
    generate, critique, revise = editor(["one", "two two", "three three three", "four"])
    result = df.reflect(generate, critique, revise, max_rounds=3)
    assert result.stopped == "round_limit" and result.rounds == 3
    assert result.answer == "three three three"
    single = df.reflect(lambda: "only", critique, revise, max_rounds=1)
    assert single.stopped == "round_limit" and single.drafts == ["only"] and single.critiques == []


def test_the_loop_stops_when_the_critique_finds_nothing():
    result = df.reflect(lambda: "fine as is", lambda draft: None, lambda draft, note: pytest.fail("not revised"))
    assert result.stopped == "no_critique" and result.rounds == 1


def test_structured_drafts_converge_regardless_of_key_order():
    drafts = iter([{"amount": 40, "currency": "EUR"}, {"currency": "EUR", "amount": 40}])
    result = df.reflect(lambda: next(drafts), lambda d: "check", lambda d, n: next(drafts))
    assert result.stopped == "converged" and result.similarities == [1.0]


def test_a_zero_round_limit_is_refused():
    with pytest.raises(ValueError):
        df.reflect(lambda: "x", lambda d: "c", lambda d, n: d, max_rounds=0)
