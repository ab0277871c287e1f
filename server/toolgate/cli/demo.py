"""The demo: a throw-away project, one small task, every step shown."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from toolgate.cli import flags

EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE = 0, 1, 2

# Seconds the demo waits for the endpoint's model list before it says the model is unreachable.
REACH_TIMEOUT_SECONDS = 15.0

DEMO_TASK = (
    'The test fails because greet() in greet.py returns "Hello Ada" instead of "Hello, Ada!". '
    'Step 1: call edit_file with path "greet.py", search "\\"Hello \\" + name" and replace '
    '"\\"Hello, \\" + name + \\"!\\"". '
    "Step 2: call run_tests. "
    'Step 3: call git_add with files ["greet.py"]. '
    'Step 4: call git_commit with message "Fix the greeting". '
    "One tool block per answer."
)

FILES = {
    "README.md": "# greet\n\nA tiny project for the Toolgate demo.\n",
    "greet.py": 'def greet(name):\n    """Return a friendly greeting."""\n'
    '    return "Hello " + name\n',
    "test_greet.py": "from greet import greet\n\n\ndef test_greet():\n"
    '    assert greet("Ada") == "Hello, Ada!"\n',
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


def git_project(
    files: dict[str, str], *, prefix: str, message: str, parent: Path | None = None
) -> Path:
    """A fresh git repository in a new temporary folder, with `files` in one commit."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "demo@toolgate.invalid")
    _git(root, "config", "user.name", "Toolgate demo")
    _git(root, "config", "commit.gpgsign", "false")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", message)
    return root


def make_workspace(parent: Path | None = None) -> Path:
    """Create the demo project as a real git repository with one commit."""
    return git_project(
        FILES, prefix="toolgate-demo-", message="A greeting with a failing test", parent=parent
    )


def summary(root: Path) -> str:
    """What the demo left behind: the commits and the state of the tree."""
    log = _git(root, "log", "--oneline", "--no-decorate").strip()
    status = _git(root, "status", "--short").strip() or "(clean)"
    return f"git log:\n{log}\n\ngit status:\n{status}\n\ngreet.py now:\n" + (
        root / "greet.py"
    ).read_text(encoding="utf-8")


async def model_unreachable(base_url: str, api_key: str | None) -> str | None:
    """None when the endpoint answers, else one line saying why the demo cannot use it.

    Asks for the model list: any HTTP answer but a refused key counts as reachable, since some
    servers do not list their models.
    """
    import openai

    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "not-needed",
        timeout=REACH_TIMEOUT_SECONDS,
        max_retries=0,
    )
    try:
        await client.models.list()
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            return f"the model endpoint {base_url} refused the API key (HTTP {exc.status_code})"
    except (openai.APIConnectionError, openai.APITimeoutError) as exc:
        cause = exc.__cause__ or exc
        return f"cannot reach the model at {base_url}: {str(cause)[:200] or type(cause).__name__}"
    finally:
        await client.close()
    return None


def register(sub: Any) -> None:
    """Add `demo` to the subcommands."""
    demo = sub.add_parser("demo", help="run the agent on a throw-away project and show each step")
    demo.add_argument("--model", help="model name (default: the endpoint's own)")
    demo.add_argument(
        "--base-url", help="OpenAI-compatible base URL (default: the embedded local model)"
    )
    flags.approve(
        demo, ("ask", "auto"), "review each change yourself, or let the demo approve them", "auto"
    )
    flags.agent_limits(demo, max_steps=12)
    demo.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    """Run the demo task on a throw-away project; the run's exit status."""
    from toolgate.config import ConfigError, load_config
    from toolgate.session import SetupError

    try:
        # The demo project has no settings of its own: the person's and the flags' only.
        with tempfile.TemporaryDirectory(prefix="toolgate-demo-config-") as empty:
            config = load_config(Path(empty), overrides=flags.overrides(args))
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(_demo_async(args, config))
    except SetupError as exc:
        print(f"toolgate demo: {exc}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except ConfigError as exc:
        print(f"toolgate: configuration error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("toolgate demo: interrupted", file=sys.stderr)
        return EXIT_RUN_FAILED


async def _demo_async(args: argparse.Namespace, config: Any) -> int:
    from toolgate.cli.run import run_turn
    from toolgate.session import resolve_endpoint

    # The model first: a demo that cannot reach one stops before it makes anything.
    endpoint = await resolve_endpoint(config, lambda m: print(m, file=sys.stderr))
    try:
        problem = await model_unreachable(endpoint.base_url, config.api_key)
        if problem is not None:
            print(f"toolgate demo: {problem}", file=sys.stderr)
            return EXIT_RUN_FAILED
        root = make_workspace()
        print(f"toolgate demo: a throw-away project in {root}", file=sys.stderr)
        print(f"toolgate demo: the task — {DEMO_TASK}\n", file=sys.stderr)
        code = await run_turn(root, config, DEMO_TASK, args.approve, False, endpoint=endpoint)
    finally:
        if endpoint.close is not None:
            await endpoint.close()
    print("\n" + summary(root), file=sys.stderr)
    runs = root / ".toolgate" / "runs"
    if runs.is_dir() and any(runs.iterdir()):
        print(f"toolgate demo: the run log is in {runs}", file=sys.stderr)
    if code != EXIT_OK:
        print("toolgate demo: the run did not complete (see its last line above)", file=sys.stderr)
    return code
