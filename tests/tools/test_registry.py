"""The capability registry and `toolgate tools list|validate|resolve|new|trust` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.helpers import toolgate
from tests.tools.helpers import manifest, write_tool

from toolgate.tools.capabilities import Contract, build_registry


def _render_tools(root: Path) -> None:
    for name, stability, priority in (
        ("render_a", "stable", 10),
        ("render_b", "stable", 80),
        ("render_c", "experimental", 99),
    ):
        write_tool(
            root,
            manifest(name, capabilities=["docs.render"], stability=stability, priority=priority),
        )


def test_resolve_prefers_stable_then_priority(tmp_path: Path) -> None:
    _render_tools(tmp_path)
    done = toolgate("tools", "resolve", "docs.render", "--workspace", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["tool"]["name"] == "render_b"
    assert found["candidates"] == ["render_b", "render_a", "render_c"]


def test_resolve_skips_a_tool_whose_contract_does_not_fit(tmp_path: Path) -> None:
    _render_tools(tmp_path)
    wide = manifest(
        "render_pdf",
        capabilities=["docs.render"],
        priority=1,
        output_schema={"type": "object", "properties": {"pdf": {"type": "string"}}},
    )
    write_tool(tmp_path, wide)
    done = toolgate(
        "tools",
        "resolve",
        "docs.render",
        "--input",
        "text",
        "--output",
        "pdf",
        "--workspace",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("docs.render -> render_pdf")
    none = toolgate(
        "tools",
        "resolve",
        "docs.render",
        "--input",
        "markdown",
        "--workspace",
        str(tmp_path),
        "--json",
    )
    assert none.returncode == 1
    gap = json.loads(none.stdout)
    assert gap["tool"] is None and gap["reason"] == "schema_incompatible"
    assert "does not accept the input 'markdown'" in " ".join(
        gap["reason_details"]["candidates"]["render_b"]
    )
    missing = toolgate("tools", "resolve", "docs.publish", "--workspace", str(tmp_path), "--json")
    assert json.loads(missing.stdout)["reason"] == "no_capability_match"
    bad = toolgate("tools", "resolve", "Render", "--workspace", str(tmp_path), "--json")
    assert json.loads(bad.stdout)["reason"] == "invalid_capability"


def test_builtins_declare_capabilities(tmp_path: Path) -> None:
    registry = build_registry(tmp_path)
    assert registry.resolve("fs.read").provider.name == "read_file"  # type: ignore[union-attr]
    found = registry.resolve("fs.read", Contract(("path",), ("content",)))
    assert found.provider is not None and found.provider.source == "builtin"
    assert {"fs.write", "code.search", "tests.run", "git.commit"} <= set(registry.capabilities())


def test_cache_is_written_and_follows_a_changed_manifest(tmp_path: Path) -> None:
    path = write_tool(tmp_path, manifest("render_a", capabilities=["docs.render"]))
    build_registry(tmp_path)
    cache = tmp_path / ".toolgate" / "registry-cache.json"
    doc = json.loads(cache.read_text())
    (entry,) = doc["manifests"].values()
    assert entry["provider"]["capabilities"] == ["docs.render"]
    # A cached entry is used as it is while the file's time and size are unchanged...
    entry["provider"]["priority"] = 7
    cache.write_text(json.dumps(doc))
    assert build_registry(tmp_path).get("render_a").priority == 7  # type: ignore[union-attr]
    # ...and a changed manifest is read again.
    path.write_text(path.read_text().replace("docs.render", "docs.publish"))
    registry = build_registry(tmp_path)
    assert registry.get("render_a").capabilities == ("docs.publish",)  # type: ignore[union-attr]
    assert json.loads(cache.read_text())["manifests"][str(path)]["provider"]["capabilities"] == [
        "docs.publish"
    ]


def test_validate_reports_each_bad_manifest_and_fails(tmp_path: Path) -> None:
    write_tool(tmp_path, manifest("good"))
    bad = write_tool(tmp_path, manifest("bad", stability="beta"))
    done = toolgate("tools", "validate", "--workspace", str(tmp_path))
    assert done.returncode == 1
    assert "ok     good" in done.stdout
    assert (
        f"error  {bad}: stability: 'beta' is not one of ['stable', 'experimental']" in done.stdout
    )


def test_list_shows_workspace_tools_with_capabilities_and_trust(tmp_path: Path) -> None:
    write_tool(tmp_path, manifest("render_a", capabilities=["docs.render"]))
    done = toolgate("tools", "list", "--workspace", str(tmp_path), "--json")
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["render_a"]["capabilities"] == ["docs.render"]
    assert rows["render_a"]["trusted"] is False and rows["render_a"]["gate"] == "auto"
    assert rows["read_file"]["capabilities"] == ["fs.read"]
    trusted = toolgate("tools", "trust", "render_a", "--yes", "--workspace", str(tmp_path))
    assert trusted.returncode == 0, trusted.stderr
    rows = {
        r["name"]: r
        for r in json.loads(
            toolgate("tools", "list", "--workspace", str(tmp_path), "--json").stdout
        )
    }
    assert rows["render_a"]["trusted"] is True


def _scaffold_and_check(root: Path, language: str) -> None:
    done = toolgate(
        "tools",
        "new",
        "render_docs",
        "--capability",
        "docs.render",
        "--language",
        language,
        "--input",
        "markdown",
        "--output",
        "html",
        "--workspace",
        str(root),
    )
    assert done.returncode == 0, done.stderr
    folder = root / "tools" / "render_docs"
    assert (folder / "tool.yaml").is_file()
    valid = toolgate("tools", "validate", "--workspace", str(root))
    assert valid.returncode == 0, valid.stdout
    resolved = toolgate(
        "tools",
        "resolve",
        "docs.render",
        "--input",
        "markdown",
        "--output",
        "html",
        "--workspace",
        str(root),
    )
    assert resolved.stdout.startswith("docs.render -> render_docs"), resolved.stdout
    # The test stub passes as it is, run by pytest in the tool's folder.
    stub = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )
    assert stub.returncode == 0, stub.stdout + stub.stderr
    assert "1 passed" in stub.stdout


def test_scaffolded_python_tool_validates_resolves_and_runs(tmp_path: Path) -> None:
    _scaffold_and_check(tmp_path, "python")
    again = toolgate(
        "tools", "new", "render_docs", "--capability", "docs.render", "--workspace", str(tmp_path)
    )
    assert again.returncode == 2 and "already exists" in again.stderr


def test_scaffolded_shell_tool_validates_resolves_and_runs(tmp_path: Path) -> None:
    _scaffold_and_check(tmp_path, "shell")


def test_scaffolder_refuses_bad_names(tmp_path: Path) -> None:
    done = toolgate("tools", "new", "x", "--capability", "render", "--workspace", str(tmp_path))
    assert done.returncode == 2 and "not a capability name" in done.stderr
    assert not (tmp_path / "tools").exists()
