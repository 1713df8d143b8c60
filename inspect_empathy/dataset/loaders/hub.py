"""``hf:OWNER/NAME`` sources: datasets on the Hugging Face hub.

Needs the ``datasets`` package (imported only when an ``hf:`` source is loaded).
Known corpora pick their format: ``thu-coai/esconv`` (the ``ESConv.json`` file of
the repository) and ``facebook/empathetic_dialogues``. Any other dataset needs a
``format`` (``jsonl``/``json`` for rows with ``turns``/``messages``, or ``csv`` for
rows mapped like CSV columns) and takes ``split`` (default ``test`` for
EmpatheticDialogues, ``train`` otherwise). Every load names its revision
(``hf:OWNER/NAME@REVISION``, also in a spec's ``path``), recorded with the source.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from ...errors import DatasetError
from ._problems import LoadReport, Located
from .empathetic_dialogues import records_from_utterances
from .esconv import load_esconv
from .jsonl import json_options, records_from_objects
from .tabular import load_rows

HUB_FORMATS = {
    "thu-coai/esconv": "esconv",
    "facebook/empathetic_dialogues": "empathetic_dialogues",
    "empathetic_dialogues": "empathetic_dialogues",
}
ESCONV_FILE = "ESConv.json"
INSTALL = "hf: sources need the Hugging Face 'datasets' package: pip install datasets"


def hub_library() -> ModuleType:
    """The ``datasets`` library, or a DatasetError saying how to install it."""
    try:
        import datasets
    except ImportError as ex:
        raise DatasetError(INSTALL) from ex
    # a folder named datasets/ (like this project's) imports as an empty namespace package
    if not hasattr(datasets, "load_dataset"):
        raise DatasetError(INSTALL)
    return datasets


def pinned(name: str, revision: Any = None) -> tuple[str, str]:
    """``OWNER/NAME`` and its revision, from ``OWNER/NAME@REVISION`` or ``revision``; a
    DatasetError when there is none: an unpinned load is not reproducible."""
    repo, _, at = name.partition("@")
    revision = str(revision or at).strip()
    if not revision:
        raise DatasetError(
            f"hf:{repo}: pin a revision (a commit hash or tag), e.g. hf:{repo}@<commit>: the "
            "hub's files change, and an unpinned load cannot be reproduced"
        )
    return repo.strip(), revision


def hub_format(name: str, format: str | None) -> str:
    name = name.partition("@")[0].strip()
    fmt = format or HUB_FORMATS.get(name.lower())
    if fmt is None:
        raise DatasetError(
            f"hf:{name}: unknown hub dataset; name its format (format=jsonl or csv) and "
            "mapping in a spec file"
        )
    return fmt


def load_hub(
    name: str, format: str | None, report: LoadReport, **mapping: Any
) -> Iterator[Located]:
    """Records from a hub dataset, mapped by ``format``."""
    fmt = hub_format(name, format)
    library = hub_library()
    name, revision = pinned(name, mapping.pop("revision", None))
    if fmt == "esconv":
        file = str(mapping.pop("file", ESCONV_FILE))
        yield from load_esconv(_download(name, file, revision), report, **mapping)
        return
    split = str(mapping.pop("split", "test" if fmt == "empathetic_dialogues" else "train"))
    origin = f"hf:{name}@{revision} ({split})"
    try:
        rows = library.load_dataset(name, split=split, revision=revision)
    except Exception as ex:  # network, missing split, script-based repo, ...
        raise DatasetError(f"{origin}: cannot load from the hub: {ex}") from ex
    if fmt == "empathetic_dialogues":
        items = ((f"{origin}: row {i}", row) for i, row in enumerate(rows, start=1))
        yield from records_from_utterances(items, report, **mapping)
    elif fmt in ("jsonl", "json"):
        roles, scale, options = json_options(mapping, fmt)
        yield from records_from_objects(rows, report, origin, roles, scale, options)
    elif fmt in ("csv", "tsv"):
        yield from load_rows(rows, report, origin, **mapping)
    else:
        raise DatasetError(f"{origin}: format {fmt!r} cannot be read from the hub")


def _download(name: str, file: str, revision: str) -> Path:
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as ex:
        raise DatasetError(INSTALL) from ex
    try:
        return Path(
            hf_hub_download(repo_id=name, filename=file, repo_type="dataset", revision=revision)
        )
    except Exception as ex:
        raise DatasetError(f"hf:{name}: cannot download {file}: {ex}") from ex
