import json
import sys
import textwrap
from pathlib import Path

import pytest

from toolgate.testing import Frame, TestRun, run_pytest
from toolgate.testing.runner import PLUGIN_DIR, pytest_head_length

PY = sys.executable


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def line_of(path: Path, needle: str) -> int:
    """1-based number of the only line of `path` that contains `needle`."""
    numbers = [n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line]
    assert len(numbers) == 1, numbers
    return numbers[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace whose own .venv runs the interpreter of these tests (which has pytest)."""
    root = tmp_path / "work"
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{PY}" "$@"\n')
    python.chmod(0o755)
    # Keep the workspace's pytest away from this repository's configuration.
    write(root, "pytest.ini", "[pytest]\n")
    return root


def by_test(run: TestRun) -> dict:
    return {failure.test_id: failure for failure in run.failures}


async def test_all_pass(project):
    write(
        project,
        "tests/test_ok.py",
        """
        def test_one():
            assert 1 + 1 == 2

        def test_two():
            assert "a" in "abc"
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"])
    assert run.exit_code == 0
    assert not run.report_missing and not run.timed_out
    assert (run.summary.total, run.summary.passed, run.summary.failed) == (2, 2, 0)
    assert run.failures == []
    assert "2 passed" in run.output
    # 'pytest' ran through the workspace's own environment.
    assert run.argv[:3] == [str(project / ".venv" / "bin" / "python"), "-m", "pytest"]
    assert "toolgate_pytest_report" not in run.argv


async def test_assertion_failure_points_at_the_assert(project):
    test_file = write(
        project,
        "test_math.py",
        """
        def add(a, b):
            return a + b


        def test_add():
            total = add(1, 2)
            assert total == 4


        def test_fine():
            pass
        """,
    )
    run = await run_pytest(project, ["pytest", "-q", "--tb=short"])
    assert run.exit_code == 1
    assert (run.summary.total, run.summary.passed, run.summary.failed) == (2, 1, 1)
    [failure] = run.failures
    assert failure.test_id == "test_math.py::test_add"
    assert failure.kind == "failed"
    assert failure.file == "test_math.py"
    assert failure.line == line_of(test_file, "assert total == 4")
    assert failure.message.splitlines()[0] == "assert 3 == 4"
    assert "assert 3 == 4" in failure.longrepr
    data = run.to_data()
    json.dumps(data)
    assert data["summary"]["failed"] == 1
    assert data["failures"][0]["line"] == failure.line
    assert data["exit_code"] == 1 and data["timed_out"] is False


async def test_exception_in_source_module_points_at_the_calling_test_line(project):
    source = write(
        project,
        "calc/ops.py",
        """
        def ratio(a, b):
            scale = 10
            return scale * a / b
        """,
    )
    write(project, "calc/__init__.py", "")
    test_file = write(
        project,
        "tests/unit/test_ops.py",
        """
        from calc.ops import ratio


        def test_ratio_by_zero():
            value = ratio(1, 0)
            assert value == 0
        """,
    )
    run = await run_pytest(project, ["python", "-m", "pytest", "-q"])
    assert run.exit_code == 1
    [failure] = run.failures
    assert failure.test_id == "tests/unit/test_ops.py::test_ratio_by_zero"
    assert failure.file == "tests/unit/test_ops.py"
    assert failure.line == line_of(test_file, "value = ratio(1, 0)")
    assert failure.message == "ZeroDivisionError: division by zero"
    assert Frame("calc/ops.py", line_of(source, "return scale * a / b"), "ratio") in failure.frames
    # Only the project's own frames: no pytest or plugin machinery.
    assert all(not frame.file.startswith("/") for frame in failure.frames)


async def test_helper_in_the_test_file_is_the_deepest_line_there(project):
    test_file = write(
        project,
        "test_helper.py",
        """
        def check_positive(n):
            assert n > 0, "n must be positive"


        def test_negative():
            check_positive(-1)
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"])
    [failure] = run.failures
    assert failure.line == line_of(test_file, "assert n > 0")
    assert failure.message.startswith("AssertionError: n must be positive")
    assert failure.frames == [
        Frame("test_helper.py", line_of(test_file, "check_positive(-1)"), "test_negative")
    ]


async def test_collection_error_is_an_error_at_its_line(project):
    write(project, "tests/test_good.py", "def test_ok():\n    pass\n")
    bad = write(
        project,
        "tests/test_broken.py",
        """
        import os


        def test_x(:
            pass
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"])
    assert run.exit_code == 2
    assert not run.report_missing
    assert run.summary.errors == 1
    [failure] = run.failures
    assert failure.kind == "error"
    assert failure.test_id == "tests/test_broken.py"
    assert failure.file == "tests/test_broken.py"
    assert failure.line == line_of(bad, "def test_x(:")
    assert failure.message.startswith("SyntaxError")
    assert failure.frames == []


async def test_import_error_at_collection_points_at_the_import(project):
    bad = write(project, "test_imports.py", "import os\nimport no_such_module_here\n")
    run = await run_pytest(project, ["pytest", "-q"])
    [failure] = run.failures
    assert failure.kind == "error"
    assert failure.line == line_of(bad, "import no_such_module_here")
    assert failure.message == "ModuleNotFoundError: No module named 'no_such_module_here'"


async def test_setup_and_teardown_errors(project):
    conftest = write(
        project,
        "conftest.py",
        """
        import pytest


        @pytest.fixture
        def database():
            raise ConnectionError("database is down")
        """,
    )
    test_file = write(
        project,
        "test_fixtures.py",
        """
        def test_uses_database(database):
            pass


        def test_cleanup_breaks(request):
            request.addfinalizer(lambda: 1 / 0)
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"])
    failures = by_test(run)
    setup = failures["test_fixtures.py::test_uses_database"]
    assert setup.kind == "error"
    # The test's own file is not in the traceback: the diagnostic goes on the test itself.
    assert (setup.file, setup.line) == ("test_fixtures.py", 1)
    assert setup.message == "ConnectionError: database is down"
    assert Frame("conftest.py", line_of(conftest, "raise ConnectionError"), "database") in (
        setup.frames
    )
    teardown = failures["test_fixtures.py::test_cleanup_breaks"]
    assert teardown.kind == "error"
    assert teardown.line == line_of(test_file, "request.addfinalizer")
    assert (run.summary.passed, run.summary.errors) == (1, 2)


async def test_skipped_and_xfailed_tests_are_counted(project):
    write(
        project,
        "test_skips.py",
        """
        import pytest


        @pytest.mark.skip(reason="not today")
        def test_skipped():
            pass


        def test_skip_inside():
            pytest.skip("later")


        @pytest.mark.xfail(reason="known bug")
        def test_known_bug():
            assert False


        def test_runs():
            pass
        """,
    )
    run = await run_pytest(project, ["pytest", "-q", "-rs"])
    assert run.exit_code == 0
    assert run.failures == []
    assert (run.summary.total, run.summary.passed, run.summary.skipped) == (4, 1, 3)


async def test_timeout_ends_the_run_without_a_report(project):
    write(
        project,
        "test_slow.py",
        """
        import time


        def test_sleeps():
            print("started", flush=True)
            time.sleep(60)
        """,
    )
    run = await run_pytest(project, ["pytest", "-q", "-s"], timeout_seconds=8)
    assert run.timed_out
    assert run.report_missing
    assert run.exit_code is None
    assert run.failures == []
    assert "started" in run.output
    assert run.to_data()["timed_out"] is True


async def test_no_tests_is_exit_5(project):
    write(project, "src/module.py", "VALUE = 1\n")
    run = await run_pytest(project, ["python3", "-m", "pytest", "-q"])
    assert run.exit_code == 5
    assert not run.report_missing
    assert run.summary.total == 0
    assert run.failures == []


async def test_cwd_in_a_subfolder_keeps_paths_relative_to_the_workspace(project):
    test_file = write(
        project,
        "packages/alpha/tests/test_alpha.py",
        """
        def test_alpha():
            assert [1, 2] == [1, 3]
        """,
    )
    write(project, "packages/alpha/pytest.ini", "[pytest]\n")
    run = await run_pytest(project, ["pytest", "-q"], cwd=project / "packages" / "alpha")
    [failure] = run.failures
    # pytest's own id is relative to its rootdir; the location is relative to the workspace.
    assert failure.test_id == "tests/test_alpha.py::test_alpha"
    assert failure.file == "packages/alpha/tests/test_alpha.py"
    assert failure.line == line_of(test_file, "assert [1, 2] == [1, 3]")
    assert run.argv[0] == str(project / ".venv" / "bin" / "python")


@pytest.mark.parametrize("tb", ["short", "line", "no", "native"])
async def test_every_traceback_style_gives_the_same_locations(project, tb):
    test_file = write(
        project,
        "tests/test_styles.py",
        """
        from helpers import explode


        def test_assert():
            four = 4
            assert four == 5


        def test_raise():
            explode()
        """,
    )
    helper = write(project, "helpers.py", "def explode():\n    raise ValueError('boom')\n")
    run = await run_pytest(project, ["pytest", "-q", f"--tb={tb}", "-p", "no:cacheprovider"])
    failures = by_test(run)
    assert failures["tests/test_styles.py::test_assert"].line == line_of(test_file, "four == 5")
    assert failures["tests/test_styles.py::test_assert"].message.startswith("assert 4 == 5")
    raised = failures["tests/test_styles.py::test_raise"]
    assert raised.line == line_of(test_file, "    explode()")
    assert raised.message == "ValueError: boom"
    assert Frame("helpers.py", line_of(helper, "raise ValueError"), "explode") in raised.frames


async def test_stop_after_first_failure(project):
    write(
        project,
        "test_many.py",
        """
        def test_a():
            assert False


        def test_b():
            assert False
        """,
    )
    run = await run_pytest(project, ["pytest", "-x", "-q"])
    assert run.exit_code == 1
    assert [f.test_id for f in run.failures] == ["test_many.py::test_a"]
    assert run.summary.failed == 1


DROP_DETAILS = """
import pytest


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().__dict__.pop("toolgate_failure", None)
"""


@pytest.mark.parametrize("tb", ["short", "native", "line", "no"])
async def test_fallback_from_pytest_reprs(project, tb):
    """Without the details seen from the exception, pytest's reprs still locate the failure."""
    write(project, "conftest.py", DROP_DETAILS)
    write(project, "lib.py", "def boom():\n    raise KeyError('k')\n")
    test_file = write(
        project,
        "test_fallback.py",
        """
        from lib import boom


        def test_assert():
            x = 1
            assert x == 2


        def test_calls():
            boom()
        """,
    )
    run = await run_pytest(project, ["pytest", "-q", f"--tb={tb}"])
    failures = by_test(run)
    asserted = failures["test_fallback.py::test_assert"]
    assert asserted.file == "test_fallback.py"
    assert asserted.line == line_of(test_file, "assert x == 2")
    assert asserted.message.startswith("assert 1 == 2")
    called = failures["test_fallback.py::test_calls"]
    assert called.file == "test_fallback.py"
    assert called.message.startswith("KeyError")
    if tb in ("short", "native"):
        assert called.line == line_of(test_file, "    boom()")
        assert [(f.file, f.line) for f in called.frames] == [("lib.py", 2)]
    else:
        # Only the crash line survives these styles; the test's own line is the fallback.
        assert called.line == line_of(test_file, "def test_calls")


async def test_a_command_that_is_not_pytest_has_no_report(project):
    run = await run_pytest(project, [PY, "-c", "print('not pytest')"])
    assert run.exit_code == 0
    assert run.report_missing
    assert run.output == "not pytest\n"
    assert run.summary.total == 0


async def test_output_is_capped_with_the_summary_kept(project):
    write(
        project,
        "test_noisy.py",
        """
        def test_noisy():
            for i in range(20000):
                print("noise line", i)
            assert False
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"], max_output_bytes=4_000)
    assert run.output_truncated
    assert run.output_size_bytes > 100_000
    assert len(run.output.encode()) <= 4_000
    assert "1 failed" in run.output.splitlines()[-1]
    assert len(run.failures) == 1


def test_pytest_head_length():
    assert pytest_head_length(["pytest", "-q"]) == 1
    assert pytest_head_length(["/venv/bin/py.test"]) == 1
    assert pytest_head_length(["/usr/bin/python3", "-m", "pytest", "-q"]) == 3
    assert pytest_head_length(["python", "-B", "-m", "pytest"]) == 4
    assert pytest_head_length(["python", "-m", "pip"]) == 0
    assert pytest_head_length(["python", "script.py", "-m", "pytest"]) == 0
    assert pytest_head_length(["make", "test"]) == 0


def test_the_plugin_is_a_standalone_module():
    plugin = PLUGIN_DIR / "toolgate_pytest_report.py"
    assert plugin.is_file()
    assert not (PLUGIN_DIR / "__init__.py").exists()
    imports = [
        line for line in plugin.read_text().splitlines() if line.startswith(("import ", "from "))
    ]
    assert not any("toolgate" in line for line in imports)


async def test_unittest_assertions_point_at_the_test_line(project):
    test_file = write(
        project,
        "test_legacy.py",
        """
        import unittest


        class LegacyTest(unittest.TestCase):
            def test_equal(self):
                self.assertEqual(1 + 1, 3)
        """,
    )
    run = await run_pytest(project, ["pytest", "-q"])
    [failure] = run.failures
    assert failure.test_id == "test_legacy.py::LegacyTest::test_equal"
    assert failure.line == line_of(test_file, "self.assertEqual")
    assert failure.message == "AssertionError: 2 != 3"
    # unittest's own frames (assertEqual and friends) are not shown as related places.
    assert failure.frames == []
