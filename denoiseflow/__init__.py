"""denoiseflow: the agent side of Denoise Dashboard.

Standard library only. Record what each agent step produced and consumed,
fuse low-confidence artifacts, let redundant samples vote; everything reaches
the dashboard over its public HTTP API.

    import denoiseflow as df
    df.configure("http://127.0.0.1:8000", api_key="dd_...")
    question = df.record("ticket-1", "gateway", "Where is my refund?", source_type="user_input")
"""

from denoiseflow.evaluation import Answer, Case, EvaluationError, current_case, evaluate
from denoiseflow.fuse import ACCEPT, BLOCK, DOWNWEIGHT, ConfidenceFuse, Thresholds, Verdict, normalize
from denoiseflow.recorder import NodeRef, Recorder, configure, flush, fuse, get_recorder, new_id, record, review
from denoiseflow.redundancy import RedundantResult, diversity, run_redundant, text_similarity
from denoiseflow.transport import HttpTransport, Reply, TransportError

__all__ = [
    "ACCEPT", "Answer", "BLOCK", "Case", "DOWNWEIGHT", "ConfidenceFuse", "EvaluationError", "HttpTransport",
    "NodeRef", "Recorder", "RedundantResult", "Reply", "Thresholds", "TransportError", "Verdict", "configure",
    "current_case", "diversity", "evaluate", "flush", "fuse", "get_recorder", "new_id", "normalize", "record",
    "review", "run_redundant", "text_similarity",
]
