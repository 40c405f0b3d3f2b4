"""denoiseflow: the agent side of Denoise Dashboard.

Standard library only. Record what each agent step produced and consumed,
fuse low-confidence artifacts, and measure uncertainty: redundant votes with
validate-first, a bounded reflection loop, a judge's cross-check, semantic
entropy, tool-result checks, and one confidence fused from them all.
Everything reaches the dashboard over its public HTTP API.

    import denoiseflow as df
    df.configure("http://127.0.0.1:8000", api_key="dd_...")
    question = df.record("ticket-1", "gateway", "Where is my refund?", source_type="user_input")
"""

from denoiseflow.costs import EXPENSIVE_PATHS, Priced, llm_fields, model_of, usage_of
from denoiseflow.entropy import semantic_entropy
from denoiseflow.evaluation import Answer, Case, EvaluationError, current_case, evaluate
from denoiseflow.fuse import ACCEPT, BLOCK, DOWNWEIGHT, ConfidenceFuse, FuseResult, Thresholds, normalize
from denoiseflow.judging import CrossCheckResult, cross_check
from denoiseflow.ladder import Feedback, GuardResult, Output, guard
from denoiseflow.policy_client import Policy, PolicyClient, policy, policy_client
from denoiseflow.recorder import (
    NodeRef,
    Recorder,
    configure,
    flush,
    fuse,
    get_recorder,
    new_id,
    new_product_id,
    record,
    review,
)
from denoiseflow.redundancy import RedundantResult, arun_redundant, diversity, run_redundant
from denoiseflow.reflection import Reflection, reflect
from denoiseflow.signals import CombinedConfidence, combine_signals, fuse_signals
from denoiseflow.similarity import canonical, text_similarity
from denoiseflow.steps import Step, step
from denoiseflow.tool_checks import ToolCheck, ToolRules, check_tool_result
from denoiseflow.transport import HttpTransport, Reply, TransportError
from denoiseflow.validators import Invalid, all_of, in_range, one_of, schema
from denoiseflow.version import __version__

__all__ = [
    "ACCEPT", "Answer", "BLOCK", "Case", "CombinedConfidence", "ConfidenceFuse", "CrossCheckResult", "DOWNWEIGHT",
    "EXPENSIVE_PATHS", "EvaluationError", "Feedback", "FuseResult", "GuardResult", "HttpTransport", "Invalid", "NodeRef",
    "Output", "Policy", "PolicyClient", "Priced", "Recorder", "RedundantResult", "Reflection", "Reply", "Step",
    "Thresholds", "ToolCheck", "ToolRules", "TransportError", "__version__", "all_of", "arun_redundant", "canonical",
    "check_tool_result", "combine_signals", "configure", "cross_check", "current_case", "diversity", "evaluate",
    "flush", "fuse", "fuse_signals", "get_recorder", "guard", "in_range", "llm_fields", "model_of", "new_id", "new_product_id",
    "normalize", "one_of", "policy", "policy_client", "record", "reflect", "review", "run_redundant", "schema",
    "semantic_entropy", "step", "text_similarity", "usage_of",
]
