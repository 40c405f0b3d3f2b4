"""Semantic entropy: 0 when every sample means the same, near 1 when none agree."""

import pytest

import denoiseflow as df
from denoiseflow.similarity import MISSING


def test_identical_samples_have_zero_entropy():
    assert df.semantic_entropy(["Refunds take 14 days."] * 5) == 0.0
    assert df.semantic_entropy([{"a": 1, "b": 2}, {"b": 2, "a": 1}, '{"a":1,"b":2}']) == 0.0
    assert df.semantic_entropy(["only one"]) == 0.0 and df.semantic_entropy([]) == 0.0


def test_all_different_samples_have_entropy_near_one():
    samples = ["Refunds take 14 days.", "Your order shipped yesterday.", "Please contact billing.",
               "The warranty is void.", "Lisbon is the capital."]
    assert df.semantic_entropy(samples) == pytest.approx(1.0, abs=0.01)


def test_rewordings_count_as_one_meaning():
    samples = ["Refunds take 14 days.", "Refunds take 14 days!", "refunds take 14  days",
               "Your order shipped yesterday."]
    value = df.semantic_entropy(samples)
    assert 0.3 < value < 0.5  # two meanings, 3 + 1


def test_an_embedding_callable_clusters_by_cosine_similarity():
    vectors = {"yes": (1.0, 0.0), "sure": (0.96, 0.28), "no": (0.0, 1.0), "nope": (0.1, 0.99)}
    assert df.semantic_entropy(["yes", "sure", "no", "nope"], embed=vectors.get) == pytest.approx(0.5)
    assert df.semantic_entropy(["yes", "sure"], embed=vectors.get) == 0.0
    assert df.semantic_entropy(["yes", "sure"], embed=vectors.get, threshold=0.99) == 1.0


def test_failed_samples_are_left_out():
    assert df.semantic_entropy(["a", MISSING, "a"]) == 0.0
