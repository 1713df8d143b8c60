"""The public surface of ``inspect_empathy`` and what importing it costs at start-up."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import inspect_empathy

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "pandas", "pyarrow", "matplotlib", "krippendorff")

IMPORTS = """
import json, sys
heavy = {heavy!r}
{setup}
before = sorted(m for m in heavy if m in sys.modules)
{code}
after = sorted(m for m in heavy if m in sys.modules)
print(json.dumps({{"before": before, "after": after, "inspect_ai": "inspect_ai" in sys.modules}}))
"""


def loaded(code: str, setup: str = "") -> dict:
    script = IMPORTS.format(heavy=HEAVY, setup=setup, code=code)
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("module", ["inspect_empathy", "inspect_empathy._registry"])
def test_loading_the_plugin_imports_no_numpy_scipy_pandas_matplotlib(module: str) -> None:
    """Inspect imports ``inspect_empathy._registry`` at every start, also for other tasks."""
    result = loaded(f"import {module}", setup="import inspect_ai")
    # Inspect itself loads none of them (else this test would be about what we add)
    assert result["before"] == []
    assert result["after"] == []


@pytest.mark.slow
def test_a_judge_mode_run_imports_no_statistics_stack(tmp_path: Path) -> None:
    """Building and running the task loads nothing the bare Inspect task does not: scipy,
    pandas and pyarrow came in through the retry check's import of the calibration module,
    costing every run about 100 MB and a second of CPU."""
    code = (
        "from inspect_ai import eval\n"
        "from inspect_empathy import empathy\n"
        f"eval(empathy(), model='empathy_baseline/lexicon', limit=5, display='none', "
        f"log_dir={str(tmp_path)!r})"
    )
    result = loaded(code, setup="import inspect_ai")
    assert [m for m in result["after"] if m != "numpy"] == []


def test_package_and_cli_do_not_import_inspect() -> None:
    """``inspect-empathy --help`` parses arguments without waiting for Inspect."""
    result = loaded(
        "import inspect_empathy, inspect_empathy.cli\n"
        "try:\n"
        "    inspect_empathy.cli.main(['--help'])\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert result == {"before": [], "after": [], "inspect_ai": False}


def test_public_names_resolve() -> None:
    for name in inspect_empathy.__all__:
        assert getattr(inspect_empathy, name) is not None, name
    assert set(inspect_empathy.__all__) <= set(dir(inspect_empathy))
    with pytest.raises(AttributeError):
        inspect_empathy.render_prompt  # noqa: B018 (internals stay in their modules)


def test_internals_are_not_exported() -> None:
    internals = {"render_prompt", "render_dialog", "rubric_template", "Turn", "Judgement",
                 "parse_score", "record_to_sample", "normalise_rating", "DialogRecord"}  # fmt: skip
    assert not internals & set(inspect_empathy.__all__)


def test_documented_imports_are_public() -> None:
    """Every ``from inspect_empathy import ...`` in README.md and docs/ names a public name
    (or a submodule), and the compare API the docs show is exported."""
    pattern = re.compile(r"^from inspect_empathy import ([\w, ]+)$", re.MULTILINE)
    names: set[str] = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in pattern.finditer(page.read_text("utf-8")):
            names |= {n.strip() for n in match.group(1).split(",")}
    assert names, "no imports found in the docs"
    submodules = {p.stem for p in (ROOT / "inspect_empathy").glob("*.py")}
    for name in names:
        assert name in inspect_empathy.__all__ or name in submodules, name
    assert {"compare_judges", "compare_logs", "write_report"} <= set(inspect_empathy.__all__)


def test_all_lists_exactly_the_lazy_exports() -> None:
    assert sorted(inspect_empathy.__all__) == sorted(inspect_empathy._EXPORTS)
