"""`toolgate doctor` on the embedded model: its self-check, against runtimes that answer or die.

As in test_install_self_check.py, a stub `llama_cpp` stands for the runtime (one that answers,
one that kills its own process with SIGSEGV as a build for another CPU does) and a sparse file
the sidecar vouches for stands for the assembled model: nothing is compiled or loaded here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolgate.model.local_assets import MODEL_FILE_NAME, MODEL_SHA256, MODEL_SIZE

CRASHING = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
ANSWERING = """\
class Llama:
    def __init__(self, model_path, **kwargs):
        pass

    def create_completion(self, prompt, **kwargs):
        return {"choices": [{"text": " return"}]}
"""

# What local_runtime_available() looks for besides llama_cpp (the [server] extra).
SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context")


def _doctor(tmp_path: Path, runtime: str, repo: Path) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    for name in ("llama_cpp", *SERVER_MODULES):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("", encoding="utf-8")
    (site / "llama_cpp" / "__init__.py").write_text(runtime, encoding="utf-8")
    models = tmp_path / "cache" / "toolgate" / "models"
    models.mkdir(parents=True)
    model = models / MODEL_FILE_NAME
    with model.open("wb") as f:
        f.truncate(MODEL_SIZE)
    (models / f"{MODEL_FILE_NAME}.verified.json").write_text(
        json.dumps(
            {"sha256": MODEL_SHA256, "size": MODEL_SIZE, "mtime_ns": model.stat().st_mtime_ns}
        ),
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "toolgate", "doctor", "--workspace", str(repo), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _checks(done: subprocess.CompletedProcess[str]) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in json.loads(done.stdout)["checks"]}


def test_an_embedded_model_that_answers_lets_a_run_start(tmp_path: Path, repo: Path) -> None:
    done = _doctor(tmp_path, ANSWERING, repo)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = _checks(done)
    assert checks["endpoint"]["summary"] == "none configured: runs use the embedded local model"
    assert checks["embedded model"]["status"] == "ok"
    assert checks["embedded model"]["summary"].endswith("installed; it answers")


@pytest.mark.skipif(sys.platform != "linux", reason="the crash is a Linux signal")
def test_an_embedded_model_whose_runtime_crashes_stops_a_run(tmp_path: Path, repo: Path) -> None:
    done = _doctor(tmp_path, CRASHING, repo)
    assert done.returncode == 1, done.stdout + done.stderr
    embedded = _checks(done)["embedded model"]
    assert embedded["status"] == "fail"
    assert "its self-check died on signal 11 (SIGSEGV)" in embedded["summary"]
    assert embedded["fix"].startswith("toolgate model install")
