"""The SDK is its own distribution: a clean virtual environment with only
`denoiseflow` installed (no Django, nothing of the server) records to a live
dashboard. The wheel is built from `sdk/` in this checkout (its build backend,
setuptools, comes from the package index as for any pip build) and installed
with no index at all."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import denoiseflow
from tests.denoiseflow.dashboard import nodes_of

SDK_DIR = Path(__file__).resolve().parents[2] / "sdk"

AGENT = """
import json, sys
import denoiseflow as df
recorder = df.configure(sys.argv[1], api_key=sys.argv[2], flush_interval=0.05)
q = df.record("dist-1", "gateway", "Where is my refund?", source_type="user_input")
vote = df.run_redundant(lambda temperature: "refund_status", n=3)
vote.record("dist-1", "intent_agent", step="intent", parent_ids=[q])
ok = df.flush(timeout=20)
print(json.dumps({"ok": ok, "stats": recorder.stats(), "file": df.__file__, "version": df.__version__,
                  "intent": vote.answer}))
"""


def run(*args, **options) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300, **options)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = out / "sdk"  # built from a copy, so the checkout gets no build/ folder
    shutil.copytree(SDK_DIR, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, source)
    (built,) = out.glob("denoiseflow-*.whl")
    return built


def test_the_wheel_holds_only_the_sdk_and_declares_no_dependencies(wheel):
    assert wheel.name == f"denoiseflow-{denoiseflow.__version__}-py3-none-any.whl"
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert {name.split("/")[0] for name in names} == {"denoiseflow", f"denoiseflow-{denoiseflow.__version__}.dist-info"}
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert requires == ["Requires-Dist: langchain-core>=0.3; extra == \"langchain\""]


def test_a_clean_venv_with_only_the_sdk_records_to_a_live_server(wheel, tmp_path, live_server, project_and_key, api):
    venv = tmp_path / "agent"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index", "--no-deps", wheel)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")
           and not k.startswith("DENOISE_")}

    probe = run(python, "-c", "import importlib.util as u; print(u.find_spec('django') is None)", env=env,
                cwd=tmp_path)
    assert probe.stdout.strip() == "True"  # no Django in the agent's environment
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", env=env, cwd=tmp_path)
    installed = sorted(p.name for p in Path(site.stdout.strip()).iterdir() if not p.name.startswith("_"))
    assert installed == ["denoiseflow", f"denoiseflow-{denoiseflow.__version__}.dist-info"]

    done = run(python, "-c", AGENT, live_server.url, project_and_key[1], env=env, cwd=tmp_path)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"] and report["stats"]["sent"] == 2 and report["stats"]["rejected"] == 0
    assert report["file"].startswith(str(venv))  # the installed copy, not this checkout
    assert report["version"] == denoiseflow.__version__
    intent = nodes_of(api, "dist-1", key="step")["intent"]
    assert intent["confidence"] == 1.0
    stored = api.get(f"/api/v1/traces/dist-1/nodes/{intent['product_id']}").json()
    assert stored["content"] == "refund_status" and stored["metrics"]["vote_ratio"] == 1.0


def test_an_older_python_is_refused_in_one_clear_line(wheel, tmp_path):
    older = shutil.which("python3.11") or shutil.which("python3.10")
    if older is None:
        pytest.skip("no Python older than 3.12 on this machine")
    venv = tmp_path / "old"
    run(older, "-m", "venv", "--without-pip", venv)
    refused = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                              "--no-index", "--no-deps", str(wheel)], capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0
    errors = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, refused.stderr
    assert "requires a different Python" in errors[0] and "'>=3.12'" in errors[0], errors
