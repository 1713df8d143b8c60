"""The module paths of the flat 0.1 layout still import, as the modules at their new places."""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_layers import modules

from inspect_empathy import _moved

FLAT_LAYOUT = """
_answer _compat _file_kind _geval _judge_call _providers _registry _resample _rubric _samples
_score_text _stats _summary _usage alt_metric alttest baseline calibration cli compare
consistency dataset dialogs errors human_scale_cli humans loaders metrics per_turn
published_cli reducer scorer solver tasks
loaders._column_records loaders._files loaders._options loaders._pandas_csv loaders._problems
loaders._ratings loaders._roles loaders._text loaders._transcript loaders.empathetic_dialogues
loaders.empathetic_exchanges loaders.epitome loaders.esconv loaders.hub loaders.ieval
loaders.jsonl loaders.raters loaders.spec loaders.tabular loaders.transcript loaders.turns
""".split()
"""Every module of the package before the concept packages (git f6586eb), compare/ aside
(it did not move)."""


def current_modules() -> set[str]:
    return set(modules()) - {""}


@pytest.mark.parametrize("old", FLAT_LAYOUT)
def test_every_old_path_imports(old: str) -> None:
    module = importlib.import_module(f"inspect_empathy.{old}")
    new = _moved.new_path(f"inspect_empathy.{old}")
    if isinstance(new, str):
        assert module is importlib.import_module(new)  # the same object, not a copy
        assert module.__name__ == new
    elif new is None:
        assert old in current_modules()  # it did not move


def test_the_finder_never_answers_for_a_module_that_exists() -> None:
    for name in current_modules():
        assert _moved.new_path(f"inspect_empathy.{name}") is None, name
    assert set(_moved.MOVED) <= {old.split(".")[0] for old in FLAT_LAYOUT}


DATASET_NAMES = """
BOT_LABELS BOT_ROLES BUILD_CHUNK BUNDLED CONTROL_BYTES DECODED DUPLICATE_ID DatasetError
DialogDataset FORMATS HUMAN_KEY JSON_CONTROL_BYTES JSON_FORMATS ON_INVALID RUN_RATED_KEY
RUN_SAMPLES_KEY SAMPLE_KEYS SPEC_SUFFIXES USER_LABELS USER_ROLES bundled_path input_length
load_dialogs problem_report skipped_summary
""".split()
"""The public names of the 0.1 module ``inspect_empathy.dataset`` (now a package)."""


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_the_dataset_package_holds_the_names_of_the_old_module(name: str) -> None:
    import inspect_empathy.dataset
    from inspect_empathy.dataset import _dataset

    assert getattr(inspect_empathy.dataset, name) is getattr(_dataset, name)


def test_the_dataset_package_refuses_a_name_it_never_had() -> None:
    import inspect_empathy.dataset

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        inspect_empathy.dataset.nope  # noqa: B018


def test_from_the_package_import_an_old_module() -> None:
    from inspect_empathy import humans, metrics
    from inspect_empathy.stats import humans as new_humans
    from inspect_empathy.stats import metrics as new_metrics

    assert humans is new_humans and metrics is new_metrics


def test_patching_the_old_path_patches_the_module() -> None:
    import inspect_empathy.metrics as old

    from inspect_empathy.stats import metrics

    before = metrics.LIVE_HEADLINE_RATIO
    try:
        old.LIVE_HEADLINE_RATIO = before + 1
        assert metrics.LIVE_HEADLINE_RATIO == before + 1
    finally:
        old.LIVE_HEADLINE_RATIO = before


def test_the_split_per_turn_holds_both_halves() -> None:
    from inspect_empathy.per_turn import (
        CONVERSATION_KEY as OLD_KEY,
    )
    from inspect_empathy.per_turn import (
        conversation_metrics as old_metrics,
    )
    from inspect_empathy.per_turn import (
        expand_turns as old_expand,
    )

    from inspect_empathy.dataset.per_turn import CONVERSATION_KEY, expand_turns
    from inspect_empathy.stats.conversation import conversation_metrics

    assert old_expand is expand_turns and old_metrics is conversation_metrics
    assert OLD_KEY == CONVERSATION_KEY


def test_names_pickled_under_an_old_path_load() -> None:
    from inspect_empathy.dataset.loaders.jsonl import load_jsonl
    from inspect_empathy.stats.metrics import judge_agreement

    # protocol 0 names a global by module and name, as an object pickled before did
    assert pickle.loads(b"cinspect_empathy.metrics\njudge_agreement\n.") is judge_agreement
    assert pickle.loads(b"cinspect_empathy.loaders.jsonl\nload_jsonl\n.") is load_jsonl


@pytest.mark.parametrize(
    "missing",
    ["inspect_empathy.nope", "inspect_empathy.loaders.nope", "inspect_empathy.per_turn.nope"],
)
def test_a_path_that_never_existed_still_fails(missing: str) -> None:
    import importlib.util

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(missing)


def test_find_spec_under_an_old_package_finds_what_exists_only() -> None:
    import importlib.util

    assert importlib.util.find_spec("inspect_empathy.loaders.nope") is None
    assert importlib.util.find_spec("inspect_empathy.loaders.jsonl") is not None


def test_a_loader_run_by_hand_gives_the_module_s_names() -> None:
    from inspect_empathy.stats import humans

    spec = _moved._Finder().find_spec("inspect_empathy.humans")
    assert spec is not None and spec.loader is not None
    placeholder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(placeholder)
    assert placeholder.ratings_frame is humans.ratings_frame
    assert sys.modules["inspect_empathy.humans"] is humans


def test_install_is_once_per_process() -> None:
    _moved.install()
    _moved.install()
    assert sum(isinstance(f, _moved._Finder) for f in sys.meta_path) == 1


@pytest.mark.slow
def test_an_old_deep_import_works_in_a_fresh_process() -> None:
    code = (
        "from inspect_empathy.loaders.jsonl import load_jsonl\n"
        "import inspect_empathy.dataset.loaders.jsonl as new\n"
        "from inspect_empathy._rubric import render_prompt\n"
        "from inspect_empathy.judge._rubric import render_prompt as new_render\n"
        "assert load_jsonl is new.load_jsonl and render_prompt is new_render\n"
        "import importlib, inspect_empathy._registry, inspect_empathy\n"
        "new = importlib.import_module('inspect_empathy.stats.metrics')\n"
        "assert inspect_empathy.metrics is new\n"
        "assert inspect_empathy.dataset.problem_report\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


SEGMENTS = sorted(
    {part for name in FLAT_LAYOUT for part in name.split(".")}
    | {part for name in modules() for part in name.split(".") if part}
)


IDENTIFIERS = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SEGMENTS), IDENTIFIERS), min_size=1, max_size=3))
def test_the_finder_answers_only_for_an_old_path_whose_module_exists(parts: list[str]) -> None:
    """Over generated paths below the package: a spec only where the first part moved and the
    module it moved to exists; never for a path that exists as it is."""
    import importlib.util

    name = ".".join(["inspect_empathy", *parts])
    new = _moved.new_path(name)
    if parts[0] not in _moved.MOVED:
        assert new is None
    try:
        spec = _moved._Finder().find_spec(name)
    except ModuleNotFoundError:
        return  # below a module that is no package: Python says so, as it did before
    if spec is None:
        return
    assert new is not None and ".".join(parts) not in modules()
    if isinstance(new, str):
        assert importlib.util.find_spec(new) is not None
    else:
        assert len(parts) == 1
