"""`toolgate run` as a person meets it on a terminal and at the command line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.helpers import on_scripted, toolgate, toolgate_task
from tests.cli.terminal import Terminal
from tests.support.net import canned_endpoint, closed_port
from tests.support.scripted_model import ScriptedModel, tool_call


def test_ctrl_c_at_an_approval_prompt_leaves_at_once_with_130(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("write_file", path="new.txt", content="x\n")]
    with Terminal(
        "run",
        "Write it.",
        *on_scripted(repo, scripted),
    ) as term:
        term.expect("Apply?")
        started = time.monotonic()
        term.interrupt()
        status = term.wait(timeout=30)  # no Enter is ever typed
        assert status == 130, term.seen
        assert time.monotonic() - started < 30
        assert "interrupted" in term.seen
    assert not (repo / "new.txt").exists()


def test_bare_toolgate_prints_help_not_an_error() -> None:
    done = toolgate()
    assert done.returncode == 2
    assert "usage: toolgate" in done.stderr and "run" in done.stderr and "error" not in done.stderr


def test_run_help_has_an_example_exit_statuses_and_variables() -> None:
    done = toolgate("run", "--help")
    assert done.returncode == 0
    for text in ("example:", "exit status:", "130", "TOOLGATE_MODEL", "NO_COLOR"):
        assert text in done.stdout


def test_an_empty_task_is_a_usage_error_and_never_reaches_the_model(
    repo: Path, scripted: ScriptedModel
) -> None:
    done = toolgate_task("run", "  ", repo, scripted)
    assert done.returncode == 2 and "task is empty" in done.stderr
    assert scripted.requests == []


def test_verbose_after_the_subcommand_shows_toolgates_log_not_httpcores(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "Hello."}]
    done = toolgate_task("run", "Say hello.", repo, scripted, "-v")
    assert done.returncode == 0, done.stderr
    assert "DEBUG toolgate" in done.stderr
    assert "httpcore" not in done.stderr


def test_trust_on_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = toolgate("trust", "--workspace", str(tmp_path / "nope"))
    assert done.returncode == 2 and "not a folder" in done.stderr


def test_no_color_turns_colour_off_on_a_terminal(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("write_file", path="new.txt", content="x\n")]
    with Terminal(
        "run",
        "Write it.",
        *on_scripted(repo, scripted),
        env={"NO_COLOR": "1"},
    ) as term:
        screen = term.expect("Apply?")
        assert "+x" in screen and "\033[" not in screen


def test_lsp_says_it_waits_for_a_client_on_a_terminal() -> None:
    with Terminal("lsp") as term:
        term.expect("waiting for a client on stdio", timeout=60)


def test_an_html_page_answering_200_is_a_failed_run_not_completed(repo: Path) -> None:
    page = b"<html><body>Welcome to nginx!</body></html>"
    with canned_endpoint(200, "text/html", page) as url:
        done = toolgate(
            "run",
            "Do it.",
            "--workspace",
            str(repo),
            "--model",
            "m",
            "--base-url",
            url,
            "--tool-calling",
            "native",
        )
    assert done.returncode == 1, done.stderr
    assert "completed" not in done.stderr, done.stderr


def test_the_end_of_run_account_names_files_tests_and_the_run_log(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "test_calc.py").write_text(
        "def test_one():\n    assert 1 == 1\n\n\ndef test_two():\n    assert 1 == 2\n"
    )
    scripted.script = [
        tool_call("write_file", path="notes.txt", content="a\nb\n"),
        tool_call("run_tests"),
        {"content": "Wrote the notes; one test fails."},
    ]
    done = toolgate_task("run", "Write notes.", repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr
    assert "changed: notes.txt +2 -0" in done.stderr
    assert '→ write_file path="notes.txt"' in done.stderr and '{"path"' not in done.stderr
    assert "proposals: 1 accepted, 0 partly accepted, 0 rejected" in done.stderr
    assert "tests: failed (1 passed, 1 failed)" in done.stderr
    assert "test_calc.py::test_two" in done.stderr
    log = next((repo / ".toolgate" / "runs").glob("*.json"))
    assert f"run log: {log}" in done.stderr
    account = json.loads(log.read_text())["account"]
    assert account["files"] == [{"path": "notes.txt", "added": 2, "removed": 0}]
    assert account["tests"]["failing"] == ["test_calc.py::test_two"]
    assert done.stderr.strip().splitlines()[-2].startswith("run ")  # the status comes last


def test_a_run_says_which_model_endpoint_and_mode_it_uses(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "Hi."}]
    done = toolgate_task("run", "Hi.", repo, scripted)
    assert f"{scripted.model} at {scripted.base_url} (native tool calling)" in done.stderr


def test_a_run_names_the_rules_files_it_used(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "AGENTS.md").write_text("Keep functions short.\n")
    (repo / ".cursor" / "rules").mkdir(parents=True)
    (repo / ".cursor" / "rules" / "docs.mdc").write_text("---\nglobs: docs/*\n---\nOne line.\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "a.md").write_text("# A\n")
    scripted.script = [tool_call("read_file", path="docs/a.md"), {"content": "Read it."}]
    done = toolgate_task("run", "Read docs/a.md.", repo, scripted)
    assert done.returncode == 0, done.stderr
    assert "(native tool calling; rules: AGENTS.md)" in done.stderr
    assert "(rules for the files touched: .cursor/rules/docs.mdc)" in done.stderr
    assert "rules: AGENTS.md, .cursor/rules/docs.mdc" in done.stderr


def test_each_request_says_its_prompt_tokens_and_what_the_server_had_cached(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "a.txt").write_text("a\n")
    scripted.script = [
        {  # OpenAI's and vLLM's count
            **tool_call("read_file", path="a.txt"),
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 10,
                "total_tokens": 910,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        },
        {  # llama.cpp's server
            "content": "It holds a.",
            "usage": {"prompt_tokens": 950, "completion_tokens": 5, "total_tokens": 955},
            "timings": {"cache_n": 880, "prompt_n": 70},
        },
    ]
    done = toolgate_task("run", "Read a.txt.", repo, scripted)
    assert done.returncode == 0, done.stderr
    assert "(request 1: 900 prompt tokens, 0 cached)" in done.stderr
    assert "(request 2: 950 prompt tokens, 880 cached)" in done.stderr
    assert "tokens used: 1865 (1850 prompt, 15 completion, 880 of the prompt cached)" in (
        done.stderr
    )


def test_a_partly_accepted_change_says_so_and_a_failed_edit_is_not_denied(
    repo: Path, scripted: ScriptedModel
) -> None:
    original = "".join(f"line {i}\n" for i in range(1, 21))
    (repo / "f.txt").write_text(original)
    proposed = original.replace("line 2\n", "line two\n").replace("line 19\n", "line 19!\n")
    scripted.script = [
        tool_call("write_file", path="f.txt", content=proposed),
        tool_call("edit_file", path="f.txt", search="no such text", replace="x"),
        {"content": "Done."},
    ]
    with Terminal(
        "run",
        "Edit f.",
        *on_scripted(repo, scripted),
        env={"NO_COLOR": "1"},
    ) as term:
        term.expect("Apply?")
        term.type("h\r")
        term.expect("Apply hunk 1/2?")
        term.type("y\r")
        term.expect("Apply hunk 2/2?")
        term.type("n\r")
        term.expect("Reason for the rejected hunks")
        term.type("\r")
        term.expect("[partly accepted: 1 of 2 hunks]")
        after = term.expect("run ")
        assert "edit_file [failed]" in after and "[denied]" not in after
        # The last change asked for did not land, so "Done." is not taken at its word.
        assert term.wait(timeout=60) == 1
        assert "the last change the model asked for did not land (edit_file:" in term.seen
    assert (repo / "f.txt").read_text() == original.replace("line 2\n", "line two\n")


def test_configuration_errors_point_at_what_was_meant(repo: Path, tmp_path: Path) -> None:
    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text("[limits]\nmax_step = 3\n")
    done = toolgate("run", "x", "--workspace", str(repo), "--model", "m")
    assert done.returncode == 2
    assert "unknown key 'limits.max_step'" in done.stderr and "max_steps" in done.stderr
    (repo / ".toolgate" / "config.toml").write_text('[tool.toolgate.model]\nname = "m"\n')
    done = toolgate("run", "x", "--workspace", str(repo), "--model", "m")
    assert done.returncode == 2 and "top level" in done.stderr


def test_a_workspace_venv_without_pytest_says_so(repo: Path, scripted: ScriptedModel) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (repo / "test_a.py").write_text("def test_a():\n    assert True\n")
    scripted.script = [tool_call("run_tests"), {"content": "Ran them."}]
    done = toolgate_task("run", "Run the tests.", repo, scripted, "--approve", "deny")
    assert "No module named pytest" in done.stderr, done.stderr
    assert ".venv/bin/python" in done.stderr
    # Said as what happened, in the run's lines and its account; never "passed".
    shown = done.stdout + done.stderr
    assert "tests did not run: No module named pytest in " in shown, shown
    assert "tests: passed" not in shown and "0 passed" not in shown, shown
    # "Ran them." claims what never happened: the run is incomplete.
    assert done.returncode == 1, shown
    assert "the last test run did not run" in shown


def test_without_model_a_refused_connection_is_named_not_a_missing_model(repo: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = toolgate("run", "x", "--workspace", str(repo), "--base-url", url)
    assert done.returncode == 1, done.stderr
    assert "cannot reach the model" in done.stderr and "no model configured" not in done.stderr


def test_without_model_a_refused_key_is_named(repo: Path) -> None:
    refusal = b'{"error": {"message": "Incorrect API key provided"}}'
    with canned_endpoint(401, "application/json", refusal) as url:
        done = toolgate("run", "x", "--workspace", str(repo), "--base-url", url)
    assert done.returncode == 1, done.stderr
    assert "refused the API key" in done.stderr and "no model configured" not in done.stderr


def test_a_spinner_shows_the_model_and_the_wait_on_a_terminal(
    repo: Path, scripted: ScriptedModel
) -> None:
    def slow(body: dict[str, object]) -> dict[str, object]:
        time.sleep(2.5)
        return {"content": "Thought about it."}

    scripted.script = [slow]
    with Terminal(
        "run",
        "Think.",
        *on_scripted(repo, scripted),
        env={"TERM": "xterm", "NO_COLOR": "1"},
    ) as term:
        term.expect(f"waiting for {scripted.model} · step 1 · 2 s")
        term.expect("Thought about it.")
        assert term.wait(timeout=60) == 0


def test_in_text_mode_a_hidden_hint_never_joins_two_turns_words(
    repo: Path, scripted: ScriptedModel
) -> None:
    # A call inside a code fence does not run: the model gets a hint the person never sees,
    # and its next turn starts on a line of its own.
    fenced = '```\n<tool name="read_file">{"path": "README.md"}</tool>\n```\n'
    scripted.script = [
        {"content": "Let me check.\n" + fenced + "It looks fine."},
        {"content": "All done."},
    ]
    done = toolgate_task("run", "Check it.", repo, scripted, "--tool-calling", "text")
    assert done.returncode == 0, done.stderr
    assert "fine.All done." not in done.stderr
    assert "It looks fine.\nAll done.\n" in done.stderr
    assert "code fence" in scripted.requests[1]["messages"][-1]["content"]  # the hint was sent


def test_a_wrong_model_names_the_models_the_endpoint_serves(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"status": 404, "error": "The model `gpt-9` does not exist"}]
    done = toolgate(
        "run", "x", "--workspace", str(repo), "--base-url", scripted.base_url, "--model", "gpt-9"
    )
    assert done.returncode == 1, done.stderr
    assert "model 'gpt-9' or endpoint not found" in done.stderr
    assert f"it serves: {scripted.model}" in done.stderr


def test_a_wrong_model_where_the_list_fails_too_says_so(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.models_status = 500
    scripted.script = [{"status": 404, "error": "no such model"}]
    done = toolgate(
        "run", "x", "--workspace", str(repo), "--base-url", scripted.base_url, "--model", "gpt-9"
    )
    assert done.returncode == 1, done.stderr
    assert "asking it which models it serves failed too" in done.stderr


def test_a_refusal_by_policy_names_the_rule_and_never_the_person(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text('[policy]\ndeny_tools = ["git_commit"]\n')
    scripted.script = [
        tool_call("git_commit", message="x"),
        tool_call("write_file", path="a.txt", content="a\n"),
        tool_call("git_add", files=["a.txt"]),
        {"content": "Could not commit."},
    ]
    done = toolgate_task(
        "run", "Commit.", repo, scripted, "--approve", "deny", env={"NO_COLOR": "1"}
    )
    err = done.stderr
    assert "the person rejected" not in err and "[denied]" not in err
    assert (
        "✗ git_commit [refused by policy] " in err
        and "git_commit is denied by policy (policy.deny_tools lists git_commit)" in err
    )
    assert "✗ write_file [refused: --approve deny]" in err
    assert "the change to a.txt was refused by --approve deny, nobody was asked" in err
    assert "✗ git_add [refused: --approve deny]" in err
    assert "refused by --approve deny, nobody was asked: gated calls are refused" in err
    assert not (repo / "a.txt").exists()
