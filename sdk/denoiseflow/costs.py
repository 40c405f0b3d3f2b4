"""What a model call used and cost, read from the response the caller already has.

`llm_fields(response)` gives the node fields a response implies — `model` and
`usage` (`{"input_tokens", "output_tokens"}`) — for `record(**fields)`. It
reads, as objects or as dicts:

- OpenAI chat completions: `usage.prompt_tokens` / `usage.completion_tokens`, `model`;
- OpenAI responses and Anthropic messages: `usage.input_tokens` / `usage.output_tokens`, `model`;
- LangChain messages: `usage_metadata` (`input_tokens` / `output_tokens`) and
  `response_metadata` (`model_name` or `model`);
- LangChain `LLMResult` (what a callback's `on_llm_end` gets): `llm_output`
  (`token_usage` or `usage`, `model_name`), else its generations' messages.

Anything else says nothing (an empty dict). The dashboard prices the usage
from the project's price table; `cost_usd` passed to `record` wins.

The expensive path: nodes that would not exist without the practice carry
`metadata["expensive_path"]` naming what they are (`EXPENSIVE_PATHS`) and
`metadata["expensive_path_of"]`, the product id of the node they served.
"""

import math

REDUNDANT_SAMPLE = "redundant_sample"  # a vote's samples beyond the first call
REFLECTION_ROUND = "reflection_round"  # a critique and a revision after the first draft
FUSE_RETRY = "fuse_retry"  # an attempt made because a fuse blocked the one before
CROSS_CHECK = "cross_check"  # a judge's verdict on another step's answer
EXPENSIVE_PATHS = (REDUNDANT_SAMPLE, REFLECTION_ROUND, FUSE_RETRY, CROSS_CHECK)


def _get(source, name):
    if source is None:
        return None
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)


def _count(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        return None
    return int(value) if value >= 0 else None


def _pair(usage, input_key: str, output_key: str) -> dict | None:
    input_tokens, output_tokens = _count(_get(usage, input_key)), _count(_get(usage, output_key))
    if input_tokens is None and output_tokens is None:
        return None
    return {"input_tokens": input_tokens or 0, "output_tokens": output_tokens or 0}


def usage_of(response) -> dict | None:
    """`{"input_tokens", "output_tokens"}` of a model response, or None."""
    for holder in ("usage_metadata", "usage"):
        usage = _get(response, holder)
        if usage is not None:
            found = _pair(usage, "input_tokens", "output_tokens") or _pair(usage, "prompt_tokens", "completion_tokens")
            if found:
                return found
    llm_output = _get(response, "llm_output")
    if isinstance(llm_output, dict):
        usage = llm_output.get("token_usage") or llm_output.get("usage")
        if usage is not None:
            found = _pair(usage, "prompt_tokens", "completion_tokens") or _pair(usage, "input_tokens", "output_tokens")
            if found:
                return found
    generations = _get(response, "generations")
    if isinstance(generations, list):
        total = None
        for generation in (g for batch in generations for g in (batch if isinstance(batch, list) else [batch])):
            found = usage_of(_get(generation, "message"))
            if found:
                total = total or {"input_tokens": 0, "output_tokens": 0}
                total["input_tokens"] += found["input_tokens"]
                total["output_tokens"] += found["output_tokens"]
        return total
    return None


def model_of(response) -> str | None:
    """The model a response names, or None."""
    candidates = [_get(response, "model"), _get(_get(response, "response_metadata"), "model_name"),
                  _get(_get(response, "response_metadata"), "model"), _get(_get(response, "llm_output"), "model_name"),
                  _get(_get(response, "llm_output"), "model")]
    generations = _get(response, "generations")
    if isinstance(generations, list) and generations:
        first = generations[0][0] if isinstance(generations[0], list) and generations[0] else generations[0]
        candidates.append(model_of(_get(first, "message")))
    return next((c for c in candidates if isinstance(c, str) and c.strip()), None)


def llm_fields(response) -> dict:
    """`{"model": ..., "usage": ...}` with the keys a response tells; `record(**llm_fields(r))`."""
    fields = {}
    if (model := model_of(response)) is not None:
        fields["model"] = model
    if (usage := usage_of(response)) is not None:
        fields["usage"] = usage
    return fields


def marked(metadata: dict | None, path: str, of=None, **details) -> dict:
    """`metadata` with the expensive-path marks of a node that serves `of`."""
    found = dict(metadata or {})
    found["expensive_path"] = path
    if of is not None:
        found["expensive_path_of"] = str(of)
    found.update(details)
    return found


class Priced:
    """What a call returns when it can say what it cost: its value (what the
    vote, the loop or the ladder reads) and the call's model, usage and cost.

        return df.Priced.of(response, value=response.choices[0].message.content)
    """

    __slots__ = ("value", "model", "usage", "cost_usd")

    def __init__(self, value, *, model: str | None = None, usage: dict | None = None, cost_usd: float | None = None):
        self.value, self.model, self.usage, self.cost_usd = value, model, usage, cost_usd

    @classmethod
    def of(cls, response, value=None, cost_usd: float | None = None) -> "Priced":
        """The model and usage of a model response; `value` defaults to the response itself."""
        fields = llm_fields(response)
        return cls(response if value is None else value, model=fields.get("model"), usage=fields.get("usage"),
                   cost_usd=cost_usd)

    def fields(self) -> dict:
        return {name: value for name, value in (("model", self.model), ("usage", self.usage),
                                                ("cost_usd", self.cost_usd)) if value is not None}

    def __repr__(self):
        return f"Priced({self.value!r}, {self.fields()})"


def unwrap(result) -> tuple:
    """(value, the call's priced fields): a `Priced` opened, anything else as it is."""
    if isinstance(result, Priced):
        return result.value, result.fields()
    return result, {}
