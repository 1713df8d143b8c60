"""Packaging: the wheel carries the rubric and the bundled set; the entry point resolves."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import inspect_empathy, sys
from inspect_empathy import load_dialogs
from inspect_empathy.judge._rubric import rubric_template
assert inspect_empathy.__file__.startswith(sys.argv[1]), inspect_empathy.__file__
dataset = load_dialogs("default")
assert len(dataset) >= 100, len(dataset)
assert "{{Dialog}}" in rubric_template()
from inspect_empathy.compare.templating import environment  # the report's templates ship
for name in ("report.html.j2", "report.md.j2", "report.css"):
    assert environment().get_template(name).filename.startswith(sys.argv[1]), name
from inspect_empathy.cli.published import bundled_specs  # the published specs ship
assert str(bundled_specs()).startswith(sys.argv[1]), bundled_specs()
print("ok", len(dataset))
"""


@pytest.mark.slow
def test_wheel_install_loads_bundled_dataset(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    [wheel] = (tmp_path / "dist").glob("inspect_empathy-*.whl")
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names  # MIT
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr
    # run outside the checkout so the wheel, not the source tree, is imported
    run = subprocess.run(
        [sys.executable, "-c", CHECK, str(site)],
        capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(site)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok")


def test_entry_point_registers_the_plugin() -> None:
    from importlib.metadata import entry_points

    [entry] = [e for e in entry_points(group="inspect_ai") if e.name == "inspect_empathy"]
    assert entry.value == "inspect_empathy._registry"
    from inspect_ai._util.registry import registry_lookup

    entry.load()
    assert registry_lookup("task", "inspect_empathy/empathy") is not None
    assert registry_lookup("scorer", "inspect_empathy/empathy_scorer") is not None
