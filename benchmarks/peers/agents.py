"""The agents compared, how each is installed, and how each is run on one task.

Every agent is installed by the benchmark from its registry at a pinned version, into a folder
of its own under the cache (`~/.cache/toolgate/peers/NAME-VERSION/`): a virtual environment for
a Python agent, an npm prefix for a Node agent. Each runs in its own non-interactive mode that
approves everything, pointed at the recording proxy, with a fresh home folder for the run (so
no setting or memory carries from one task to the next) and the same step limit where the
agent has one. The flags come from each agent's own documentation and source:

- Toolgate: `toolgate run TASK --approve auto --base-url URL --model M --max-steps N`;
  `toolgate-text` adds `--tool-calling text`, the documented choice for a model whose calls
  come as text; `toolgate-grammar` adds to that `tool_calling.grammar = true` in the person's
  settings file, the documented choice for a llama.cpp server (its answers held to the tools'
  call grammar).
- aider: `--message TASK --yes-always`, the model as `openai/M` with `--openai-api-base`;
  update checks, analytics and the model-metadata download are off (no network here).
- mini-swe-agent: `mini -y --exit-immediately -t TASK` with the `mini.yaml` config and
  litellm's `api_base`, `agent.step_limit` as the step limit.
- OpenCode: `opencode run --auto TASK` with a provider of the `@ai-sdk/openai-compatible`
  kind in its config file.
- Qwen Code: `qwen TASK --yolo --auth-type openai --openai-base-url URL --max-session-turns N`.
- Cline: `cline auth -p openai -b URL …` once, then `cline -P openai --auto-approve true TASK`,
  headless because its output is not a terminal.
- Codex CLI: `codex exec --dangerously-bypass-approvals-and-sandbox TASK` with a model
  provider in `-c model_providers.…`. Codex speaks only the Responses API (`/v1/responses`)
  since it dropped `wire_api = "chat"`; against a chat-completions endpoint it cannot run, and
  the results say so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import toolgate

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolgate" / "peers"
INSTALL_TIMEOUT = 1800


@dataclass(frozen=True)
class RunContext:
    """What one run of one agent on one task needs to know."""

    repo: Path
    prompt: str
    base_url: str
    model: str
    home: Path
    install_dir: Path
    max_steps: int


@dataclass
class Launch:
    """The command that runs an agent on a task, and what it adds to the environment.

    prepare: commands run first, in the same place (setting a provider up, as a person does
    once); they are not part of the run's time.
    """

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    prepare: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class Agent:
    """One agent: where it comes from, and how it is run."""

    name: str
    ecosystem: str  # "pypi", "npm" or "here" (this repository's Toolgate)
    package: str
    version: str
    mode: str  # the non-interactive, approve-all mode, as a person would write it
    launch: Callable[[RunContext], Launch]
    # Other packages the agent needs in its folder (npm), e.g. a newer Node.
    extra: tuple[str, ...] = ()

    @property
    def install_dir(self) -> Path:
        """The agent's own folder in the cache."""
        return CACHE / f"{self.name}-{self.version}"

    def installed(self) -> bool:
        """Whether the pinned version is installed in the agent's folder."""
        if self.ecosystem == "here":
            return True
        marker = self.install_dir / "installed.json"
        try:
            return json.loads(marker.read_text())["version"] == self.version
        except (OSError, ValueError, KeyError):
            return False

    def install(self, log: Callable[[str], None] = print) -> None:
        """Install the pinned version into the agent's folder (nothing when it is there)."""
        if self.installed():
            return
        target = self.install_dir
        # In place (a venv's scripts name their folder, so it cannot be moved afterwards); the
        # marker written last says the folder is whole, and a folder without it is redone.
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        log(f"installing {self.package}=={self.version} into {target}")
        if self.ecosystem == "pypi":
            _run([sys.executable, "-m", "venv", str(target / "venv")])
            pip = [str(target / "venv" / "bin" / "python"), "-m", "pip", "install", "-q"]
            _run([*pip, "--disable-pip-version-check", f"{self.package}=={self.version}"])
        else:
            npm = ["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund"]
            _run([*npm, "--loglevel=error", f"{self.package}@{self.version}", *self.extra])
            # npm leaves packages' install scripts unrun unless allowed; some ship binaries
            # (ripgrep) whose mode bits only those scripts would set.
            for vendored in target.glob("node_modules/**/vendor/**/rg"):
                vendored.chmod(0o755)
        (target / "installed.json").write_text(json.dumps({"version": self.version}))

    def bin(self, name: str) -> str:
        """The path of one of the agent's programs in its folder."""
        if self.ecosystem == "pypi":
            return str(self.install_dir / "venv" / "bin" / name)
        return str(self.install_dir / "node_modules" / ".bin" / name)

    def installed_version(self) -> str:
        """The version the agent's folder really holds (its own metadata says)."""
        if self.ecosystem == "here":
            return toolgate_version()
        try:
            if self.ecosystem == "pypi":
                python = self.install_dir / "venv" / "bin" / "python"
                code = "import sys, importlib.metadata as m; print(m.version(sys.argv[1]))"
                done = subprocess.run(
                    [str(python), "-c", code, self.package],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                return done.stdout.strip() or "unknown"
            manifest = self.install_dir / "node_modules" / self.package / "package.json"
            return str(json.loads(manifest.read_text())["version"])
        except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
            return "unknown"


def _run(argv: list[str]) -> None:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(argv[:4])} … failed ({done.returncode}):\n{tail}")


def toolgate_version() -> str:
    """This repository's Toolgate: its version and commit."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=Path(__file__).resolve().parent,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{toolgate.__version__} ({head or 'no git'})"


# --- how each agent is run ----------------------------------------------------------------


def _toolgate(extra: list[str], user_config: str = "") -> Callable[[RunContext], Launch]:
    def launch(ctx: RunContext) -> Launch:
        argv = [sys.executable, "-m", "toolgate", "run", ctx.prompt, "--workspace", str(ctx.repo)]
        argv += ["--approve", "auto", "--base-url", ctx.base_url, "--model", ctx.model]
        argv += ["--max-steps", str(ctx.max_steps), *extra]
        env = {"OPENAI_API_KEY": "local"}
        if user_config:
            # The person's own settings file, in the run's fresh home.
            folder = ctx.home / ".config"
            (folder / "toolgate").mkdir(parents=True, exist_ok=True)
            (folder / "toolgate" / "config.toml").write_text(user_config, encoding="utf-8")
            env["XDG_CONFIG_HOME"] = str(folder)
        return Launch(argv, env)

    return launch


def _aider(ctx: RunContext) -> Launch:
    agent = AGENTS["aider"]
    argv = [agent.bin("aider"), "--model", f"openai/{ctx.model}"]
    argv += ["--openai-api-base", ctx.base_url, "--openai-api-key", "local"]
    argv += ["--message", ctx.prompt, "--yes-always", "--no-check-update", "--analytics-disable"]
    argv += ["--no-show-model-warnings", "--no-show-release-notes", "--no-pretty"]
    argv += ["--no-fancy-input", "--no-gitignore"]
    # Its history files go to the run's home, not into the project.
    argv += ["--chat-history-file", str(ctx.home / "aider.chat.history.md")]
    argv += ["--input-history-file", str(ctx.home / "aider.input.history")]
    return Launch(argv, {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_CHECK_UPDATE": "false"})


def _mini(ctx: RunContext) -> Launch:
    agent = AGENTS["mini-swe-agent"]
    argv = [agent.bin("mini"), "-y", "--exit-immediately", "-t", ctx.prompt]
    argv += ["-m", f"openai/{ctx.model}", "-o", str(ctx.home / "trajectory.json")]
    argv += ["-c", "mini.yaml", "-c", f"model.model_kwargs.api_base={ctx.base_url}"]
    argv += ["-c", "model.model_kwargs.api_key=local", "-c", "model.cost_tracking=ignore_errors"]
    argv += ["-c", f"agent.step_limit={ctx.max_steps}", "-c", "agent.cost_limit=0"]
    env = {
        "MSWEA_CONFIGURED": "true",
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": str(ctx.home / "mini-swe-agent"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return Launch(argv, env)


def _opencode(ctx: RunContext) -> Launch:
    agent = AGENTS["opencode"]
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "bench": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "bench",
                "options": {"baseURL": ctx.base_url, "apiKey": "local"},
                "models": {ctx.model: {"name": ctx.model}},
            }
        },
        "model": f"bench/{ctx.model}",
        "small_model": f"bench/{ctx.model}",
        "autoupdate": False,
        "share": "disabled",
    }
    path = ctx.home / "opencode.json"
    path.write_text(json.dumps(config, indent=1))
    argv = [agent.bin("opencode"), "run", "--auto", "-m", f"bench/{ctx.model}", ctx.prompt]
    env = {
        "OPENCODE_CONFIG": str(path),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    }
    return Launch(argv, env)


def _qwen(ctx: RunContext) -> Launch:
    agent = AGENTS["qwen-code"]
    settings = {"privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
    (ctx.home / ".qwen").mkdir(parents=True, exist_ok=True)
    (ctx.home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    argv = [agent.bin("qwen"), ctx.prompt, "--yolo", "--auth-type", "openai"]
    argv += ["--openai-base-url", ctx.base_url, "--openai-api-key", "local", "-m", ctx.model]
    argv += ["--max-session-turns", str(ctx.max_steps)]
    return Launch(argv, {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})


def _codex(ctx: RunContext) -> Launch:
    agent = AGENTS["codex"]
    (ctx.home / ".codex").mkdir(parents=True, exist_ok=True)  # it must exist before the run
    provider = f'{{name="bench", base_url="{ctx.base_url}", env_key="BENCH_API_KEY"}}'
    argv = [agent.bin("codex"), "exec", "--dangerously-bypass-approvals-and-sandbox"]
    argv += ["--skip-git-repo-check", "-m", ctx.model, "-c", "model_provider=bench"]
    argv += ["-c", f"model_providers.bench={provider}", ctx.prompt]
    return Launch(argv, {"CODEX_HOME": str(ctx.home / ".codex"), "BENCH_API_KEY": "local"})


def _cline(ctx: RunContext) -> Launch:
    agent = AGENTS["cline"]
    auth = [agent.bin("cline"), "auth", "-p", "openai", "-k", "local", "-m", ctx.model]
    auth += ["-b", ctx.base_url]
    # Headless because its output goes to a file; auto-approve is its default for a prompt.
    argv = [agent.bin("cline"), "-P", "openai", "-m", ctx.model, "--auto-approve", "true"]
    argv += ["-c", str(ctx.repo), ctx.prompt]
    return Launch(argv, prepare=[auth])


AGENTS: dict[str, Agent] = {
    a.name: a
    for a in [
        Agent(
            "toolgate",
            "here",
            "toolgate",
            toolgate.__version__,
            "toolgate run --approve auto",
            _toolgate([]),
        ),
        Agent(
            "toolgate-text",
            "here",
            "toolgate",
            toolgate.__version__,
            "toolgate run --approve auto --tool-calling text",
            _toolgate(["--tool-calling", "text"]),
        ),
        Agent(
            "toolgate-grammar",
            "here",
            "toolgate",
            toolgate.__version__,
            "toolgate run --approve auto --tool-calling text, tool_calling.grammar = true",
            _toolgate(["--tool-calling", "text"], "[tool_calling]\ngrammar = true\n"),
        ),
        Agent("aider", "pypi", "aider-chat", "0.86.2", "aider --message --yes-always", _aider),
        Agent(
            "mini-swe-agent",
            "pypi",
            "mini-swe-agent",
            "2.4.6",
            "mini -y --exit-immediately",
            _mini,
        ),
        Agent("opencode", "npm", "opencode-ai", "1.18.33", "opencode run --auto", _opencode),
        Agent("qwen-code", "npm", "@qwen-code/qwen-code", "0.24.4", "qwen --yolo", _qwen),
        Agent(
            "codex",
            "npm",
            "@openai/codex",
            "0.171.0",
            "codex exec --dangerously-bypass-approvals-and-sandbox",
            _codex,
        ),
        Agent("cline", "npm", "cline", "3.0.65", "cline --auto-approve true (headless)", _cline),
    ]
}
DEFAULT_AGENTS = tuple(AGENTS)
