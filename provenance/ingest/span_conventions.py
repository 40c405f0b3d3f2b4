"""What OpenInference (Phoenix) and OpenTelemetry GenAI span attributes say
about a node, for spans that carry no (or not every) `denoise.*` attribute.

`read(attrs, ...)` returns the node fields these conventions imply; the OTLP
mapping (`otlp.span_event`) lets any `denoise.*` attribute win over them.

- kind: `openinference.span.kind`, else `gen_ai.operation.name` → source_type
- text: `input.value` / `output.value` → raw_input / content
- who and what: `gen_ai.agent.name`, else `agent.name` → agent_id;
  `gen_ai.tool.name` / `tool.name`, else `gen_ai.operation.name` → step
- model and usage: `gen_ai.response.model`, else `gen_ai.request.model`, else
  `llm.model_name` → model; `gen_ai.usage.input_tokens` / `output_tokens`, else
  `llm.token_count.prompt` / `completion` → usage (a count a span leaves out
  is 0; the attributes themselves stay in metadata as sent)
- retrieval: the best `retrieval.documents.N.document.score` (or a `score` /
  `relevance_score` in the document's metadata, where LangChain retrievers keep
  it) → metrics.retrieval_score, and the confidence when it lies in [0, 1];
  reranker output scores likewise → metrics.rerank_score
- judgement: `eval.NAME.score` → metrics["eval.NAME"]; `eval.NAME.label`
  `correct`/`incorrect` → a review (of the trace for an EVALUATOR span, else of
  the node); a GUARDRAIL span that failed (ERROR status, or a failing label) →
  a `block` fuse on it.
"""

import json
import re
from dataclasses import dataclass, field

SOURCE_TYPES = {
    "LLM": "reasoning",
    "CHAIN": "chain",
    "TOOL": "tool_result",
    "RETRIEVER": "retrieval",
    "RERANKER": "reranking",
    "EMBEDDING": "embedding",
    "AGENT": "agent",
    "GUARDRAIL": "guardrail",
    "EVALUATOR": "evaluation",
    "PROMPT": "prompt",
}
GENAI_SOURCE_TYPES = {
    "chat": "reasoning",
    "text_completion": "reasoning",
    "generate_content": "reasoning",
    "embeddings": "embedding",
    "execute_tool": "tool_result",
    "invoke_agent": "agent",
    "create_agent": "agent",
}
VERDICTS = {"correct": "correct", "incorrect": "incorrect"}
FAILING_LABELS = {"fail", "failed", "block", "blocked", "flagged", "unsafe", "incorrect", "false"}

DOCUMENT_SCORE = re.compile(r"^(retrieval|reranker\.output)\.documents\.(\d+)\.document\.(score|metadata)$")
EVAL_ATTRIBUTE = re.compile(r"^eval\.(.+)\.(score|label|explanation)$")
# (input, output) attribute pairs, the first pair a span carries wins.
TOKEN_ATTRIBUTES = (
    ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"),
    ("llm.token_count.prompt", "llm.token_count.completion"),
)
MODEL_ATTRIBUTES = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "embedding.model_name",
                    "reranker.model_name")


@dataclass
class Implied:
    """Node fields a span's conventions imply; None or empty: they say nothing."""

    source_type: str | None = None
    agent_id: str | None = None
    step: str | None = None
    raw_input: str | None = None
    content: str | None = None
    confidence: float | None = None
    model: str | None = None
    # {"input_tokens", "output_tokens"} as sent (ingest validation judges the values)
    usage: dict | None = None
    metrics: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)
    fuse: dict | None = None
    # (verdict, comment, of the whole trace rather than this node)
    reviews: list[tuple[str, str, bool]] = field(default_factory=list)


def text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def name_of(value) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def read(attrs: dict, failed: bool) -> Implied:
    """`failed`: the span's status is ERROR."""
    implied = Implied()
    kind = name_of(attrs.get("openinference.span.kind"))
    kind = kind.upper() if kind else None
    operation = name_of(attrs.get("gen_ai.operation.name"))
    implied.source_type = SOURCE_TYPES.get(kind) or GENAI_SOURCE_TYPES.get(operation or "")
    implied.agent_id = name_of(attrs.get("gen_ai.agent.name")) or name_of(attrs.get("agent.name"))
    implied.step = name_of(attrs.get("gen_ai.tool.name")) or name_of(attrs.get("tool.name")) or operation
    implied.raw_input = text(attrs.get("input.value"))
    implied.content = text(attrs.get("output.value"))

    implied.model = next((name_of(attrs.get(key)) for key in MODEL_ATTRIBUTES if name_of(attrs.get(key))), None)
    implied.usage = usage(attrs)

    retrieval, rerank = document_scores(attrs)
    if retrieval:
        implied.metrics["retrieval_score"] = max(retrieval)
    if rerank:
        implied.metrics["rerank_score"] = max(rerank)
    best = implied.metrics.get("rerank_score", implied.metrics.get("retrieval_score"))
    if best is not None and 0 <= best <= 1:
        implied.confidence = best

    labels = read_evals(attrs, implied, whole_trace=kind == "EVALUATOR")
    if kind == "GUARDRAIL" and (failed or any(label in FAILING_LABELS for label, _ in labels)):
        reason = next((explanation for label, explanation in labels if explanation), "") or "guardrail failed"
        implied.fuse = {"decision": "block", "reason": reason, "reason_code": "guardrail"}
    return implied


def usage(attrs: dict) -> dict | None:
    for input_key, output_key in TOKEN_ATTRIBUTES:
        if attrs.get(input_key) is not None or attrs.get(output_key) is not None:
            return {"input_tokens": count(attrs.get(input_key)), "output_tokens": count(attrs.get(output_key))}
    return None


def count(value):
    """A token count as an int when it is one (also sent as a string or a whole
    float); anything else as sent, for ingest validation to name."""
    if value is None:
        return 0
    as_float = number(value)
    if as_float is not None and as_float.is_integer() and abs(as_float) < 2**63:
        return int(as_float)
    return value


def document_scores(attrs: dict) -> tuple[list[float], list[float]]:
    """Scores of the retrieved and of the reranked documents, in document order."""
    found: dict[tuple[str, int], float] = {}
    for key, value in attrs.items():
        match = DOCUMENT_SCORE.match(key)
        if not match:
            continue
        where = (match[1], int(match[2]))
        if match[3] == "score":
            score = number(value)
        else:
            score = metadata_score(value)
            if where in found:
                continue  # an explicit document.score wins
        if score is not None:
            found[where] = score
    ordered = sorted(found.items(), key=lambda item: item[0][1])
    return ([s for (kind, _), s in ordered if kind == "retrieval"],
            [s for (kind, _), s in ordered if kind == "reranker.output"])


def metadata_score(value) -> float | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    for key in ("score", "relevance_score", "similarity"):
        if (score := number(value.get(key))) is not None:
            return score
    return None


def read_evals(attrs: dict, implied: Implied, whole_trace: bool) -> list[tuple[str, str]]:
    """`eval.NAME.*` attributes into metrics and reviews; returns (label, explanation) pairs."""
    evals: dict[str, dict] = {}
    for key, value in attrs.items():
        if match := EVAL_ATTRIBUTE.match(key):
            evals.setdefault(match[1], {})[match[2]] = value
    labels = []
    for name, parts in sorted(evals.items()):
        if (score := number(parts.get("score"))) is not None:
            implied.metrics[f"eval.{name}"] = score
        label = name_of(parts.get("label"))
        explanation = text(parts.get("explanation")) or ""
        if label:
            labels.append((label.lower(), explanation))
            if label.lower() in VERDICTS:
                comment = f"{name}: {explanation}" if explanation else name
                implied.reviews.append((VERDICTS[label.lower()], comment, whole_trace))
    return labels
