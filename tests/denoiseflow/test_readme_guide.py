"""The README's SDK guide runs as printed: every Python example in it is
executed against a live dashboard, and what each records arrives."""

import contextlib
import io
import re
from pathlib import Path

import pytest

import denoiseflow as df

README = Path(__file__).resolve().parents[2] / "README.md"


def sdk_examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("### Agents: the denoiseflow SDK"):]
    section = section[:section.index("\n### ", 1)]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


EXAMPLES = sdk_examples()


def test_the_guide_has_an_example_per_tool():
    code = "\n".join(EXAMPLES)
    for tool in ("df.record", "fuse.gate", "df.run_redundant", "validate=", "df.reflect", "df.cross_check",
                 "df.semantic_entropy", "df.check_tool_result", "df.fuse_signals", "DenoiseCallbackHandler"):
        assert tool in code, tool


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{i + 1}" for i in range(len(EXAMPLES))])
def test_each_example_runs_as_printed(example, live_server, project_and_key, api, monkeypatch):
    monkeypatch.setenv("DENOISE_URL", live_server.url)
    monkeypatch.setenv("DENOISE_API_KEY", project_and_key[1])
    recorder = df.configure(flush_interval=0.05)  # what an agent gets from those two variables
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(example, "README.md", "exec"), {"__name__": "readme_example"})  # noqa: S102
        assert recorder.flush(timeout=10)
    finally:
        recorder.close()

    for line in example.splitlines():  # a `print(...)  # shown` line promises what it prints
        if line.startswith("print(") and "  # " in line:
            assert line.split("  # ", 1)[1] in printed.getvalue()
    stats = recorder.stats()
    assert stats["rejected"] == stats["dropped"] == stats["unserializable"] == 0
    for trace_id in set(re.findall(r'"(ticket-\d+)"', example)):
        assert api.get(f"/api/v1/traces/{trace_id}").json()["node_count"] >= 1, trace_id
