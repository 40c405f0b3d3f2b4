"""denoiseflow: the agent side of Denoise Dashboard.

Standard library only. Record what each agent step produced and consumed,
fuse low-confidence artifacts, let redundant samples vote; everything reaches
the dashboard over its public HTTP API.

    import denoiseflow as df
    df.configure("http://127.0.0.1:8000", api_key="dd_...")
    question = df.record("ticket-1", "gateway", "Where is my refund?", source_type="user_input")
"""

from denoiseflow.fuse import ACCEPT, BLOCK, DOWNWEIGHT, ConfidenceFuse, Thresholds, Verdict, normalize
from denoiseflow.ladder import Feedback, GuardResult, Output, guard
from denoiseflow.policy_client import Policy, PolicyClient, policy, policy_client
from denoiseflow.recorder import NodeRef, Recorder, configure, flush, fuse, get_recorder, new_id, record, review
from denoiseflow.redundancy import RedundantResult, diversity, run_redundant, text_similarity
from denoiseflow.transport import HttpTransport, Reply, TransportError

__all__ = [
    "ACCEPT", "BLOCK", "DOWNWEIGHT", "ConfidenceFuse", "Feedback", "GuardResult", "HttpTransport", "NodeRef",
    "Output", "Policy", "PolicyClient", "Recorder", "RedundantResult", "guard", "policy", "policy_client",
    "Reply", "Thresholds", "TransportError", "Verdict", "configure", "diversity", "flush", "fuse", "get_recorder",
    "new_id", "normalize", "record", "review", "run_redundant", "text_similarity",
]
