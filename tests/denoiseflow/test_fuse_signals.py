"""Signal fusion: one confidence from several signals, the parts kept."""

import pytest

import denoiseflow as df


def test_all_signals_fuse_with_the_documented_default_weights():
    fused = df.fuse_signals(self_consistency=0.8, semantic_entropy=0.2, retrieval_score=0.9, tool_reliability="high")
    expected = 0.8 ** 0.35 * 0.8 ** 0.25 * 0.9 ** 0.2 * 0.95 ** 0.2
    assert fused.confidence == pytest.approx(expected, abs=1e-6)
    assert fused.metrics == {"self_consistency_score": 0.8, "semantic_entropy": 0.2, "retrieval_score": 0.9,
                             "tool_reliability": 0.95, "fused_confidence": fused.confidence}
    assert fused.node_fields() == {"confidence": fused.confidence, "metrics": fused.metrics}


def test_absent_signals_drop_out_and_weights_renormalize():
    fused = df.fuse_signals(self_consistency=0.6, retrieval_score=0.6)
    assert fused.confidence == pytest.approx(0.6)
    assert fused.weights == pytest.approx({"self_consistency": 0.35 / 0.55, "retrieval_score": 0.2 / 0.55})


def test_one_failing_signal_pulls_the_whole_down():
    good = df.fuse_signals(self_consistency=0.9, retrieval_score=0.9, tool_reliability="high")
    broken = df.fuse_signals(self_consistency=0.9, retrieval_score=0.9,
                             tool_reliability=df.check_tool_result({"error": "timeout"}))
    assert broken.confidence < good.confidence - 0.3
    assert broken.metrics["tool_reliability"] == 0.1


def test_weights_are_overridable():
    heavy_retrieval = df.fuse_signals(self_consistency=1.0, retrieval_score=0.2,
                                      weights={"retrieval_score": 1.0, "self_consistency": 0.0})
    assert heavy_retrieval.confidence == pytest.approx(0.2)


@pytest.mark.parametrize("kwargs", [{}, {"self_consistency": 1.5}, {"retrieval_score": float("nan")},
                                    {"tool_reliability": "great"}, {"self_consistency": 0.5, "weights": {"x": 1}},
                                    {"self_consistency": 0.5, "weights": {"self_consistency": -1}}])
def test_bad_signals_are_refused_clearly(kwargs):
    with pytest.raises(ValueError):
        df.fuse_signals(**kwargs)
