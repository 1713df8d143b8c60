"""Datasets: bundled sets, users' files, public corpora and the hub, as Inspect samples.

`load_dialogs` resolves a source (bundled name, file path, ``hf:OWNER/NAME`` or a
YAML/JSON spec file), reads it with the loader of its format (`loaders`),
validates every record, and returns a `DialogDataset`. Invalid records fail the
load with one error listing them (``on_invalid="fail"``, the default) or are
skipped and counted (``on_invalid="skip"``); `skipped_summary` gives the counts
for the eval log.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import mmap
import random
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from inspect_ai.dataset import Dataset, Sample

from ..dialogs import HUMAN_KEY, SAMPLE_KEYS, DialogRecord
from ..errors import DatasetError
from ._samples import RUN_RATED_KEY, RUN_SAMPLES_KEY, record_to_sample
from .loaders import FORMATS, JSON_FORMATS, infer_format, normalise_format
from .loaders._problems import DUPLICATE_ID, LoadReport, Located, RecordBlock, RecordProblem
from .loaders._roles import BOT_LABELS, USER_LABELS
from .loaders._text import (
    CONTROL_BYTES,
    JSON_CONTROL_BYTES,
    check_data_metadata,
    check_record_text,
    check_turn_controls,
)
from .loaders.hub import hub_format, load_hub
from .loaders.spec import SPEC_SUFFIXES, read_spec
from .per_turn import expand_turns

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

logger = logging.getLogger(__name__)

BUNDLED: dict[str, str] = {"default": "empathy_reference.jsonl"}
"""Bundled datasets by name, files in the project's ``datasets/`` folder."""

USER_ROLES = USER_LABELS
BOT_ROLES = BOT_LABELS

BUILD_CHUNK = 1000
"""Samples built at once when the dataset is iterated (see `DialogDataset._build`)."""

OnInvalid = Literal["fail", "skip"]
ON_INVALID = ("fail", "skip")


def bundled_places(name: str) -> tuple[Path, Path]:
    """Where a file or folder of ``datasets/`` ships: in a wheel install
    (``inspect_empathy/_bundled/<name>``), then in a source checkout (``datasets/<name>``)."""
    installed = Path(str(files("inspect_empathy"))) / "_bundled" / name
    checkout = Path(__file__).resolve().parents[2] / "datasets" / name
    return installed, checkout


def bundled_path(name: str) -> Path:
    """Path of a bundled dataset, in a wheel install or in a source checkout."""
    if name not in BUNDLED:
        raise DatasetError(f"no bundled dataset {name!r} (bundled: {', '.join(BUNDLED)})")
    installed, checkout = bundled_places(BUNDLED[name])
    for path in (installed, checkout):
        if path.is_file():
            return path
    raise DatasetError(
        f"bundled dataset {name!r} is missing: looked for {installed} and {checkout}"
    )


def input_length(sample: Sample) -> int:
    """The length of a sample's input in characters: the default key of `DialogDataset.sort`,
    as Inspect's own datasets sort (its ``sample_input_len`` is not public API)."""
    if isinstance(sample.input, str):
        return len(sample.input)
    return sum(len(message.text) for message in sample.input)


class DialogDataset(Dataset):
    """Validated dialog records; each Inspect sample is built on first access, then kept.

    Loading only parses and validates; the chat messages and sample of a record
    are built when Inspect (or you) first reads it. A judge-prompt dataset
    (`as_prompts`) then lets go of the record: the sample holds all a run needs.
    """

    def __init__(
        self,
        records: list[DialogRecord],
        cut_reply: bool = False,
        max_turns: int | None = None,
        name: str | None = None,
        location: str | None = None,
        shuffled: bool = False,
        load_report: LoadReport | None = None,
        _samples: list[Sample | None] | None = None,
        prompt_cot: bool | None = None,
        prompt_rubric: str | None = None,
        judge_text: bool = False,
        labelled: bool = False,
    ) -> None:
        self._records: list[DialogRecord | None] = records  # type: ignore[assignment]
        self._samples: list[Sample | None] = (
            _samples if _samples is not None else [None] * len(records)
        )
        self.cut_reply = cut_reply
        self.max_turns = max_turns
        self._name = name
        self._location = location
        self._shuffled = shuffled
        self.load_report = load_report
        self.prompt_cot = prompt_cot
        self.prompt_rubric = prompt_rubric
        self.judge_text = judge_text
        self.labelled = labelled
        self._rated: int | None = None

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def location(self) -> str | None:
        return self._location

    @property
    def shuffled(self) -> bool:
        return self._shuffled

    @property
    def records(self) -> list[DialogRecord]:
        """The validated dialog records, in dataset order.

        Raises for a judge-prompt dataset (`as_prompts`) whose samples were
        read: it has let go of their records.
        """
        if any(record is None for record in self._records):
            raise ValueError(
                "this judge-prompt dataset let go of the records of the samples already "
                "read (they hold everything a run needs): read records before samples"
            )
        return self._records  # type: ignore[return-value]

    @property
    def samples(self) -> list[Sample]:
        """Every sample (built now if not built yet)."""
        return list(self)

    def _sample(self, index: int) -> Sample:
        sample = self._built(index)
        # the run's counts, for metrics that never see unscored samples (coverage,
        # somers_d_all): the dataset Inspect runs (after --limit/--sample-id) reads last
        metadata = sample.metadata if sample.metadata is not None else {}
        metadata[RUN_SAMPLES_KEY] = len(self._records)
        metadata[RUN_RATED_KEY] = self._rated_count()
        return sample

    def _rated_count(self) -> int:
        if self._rated is None:
            self._rated = sum(
                (record.rating is not None and not self.cut_reply)
                if record is not None
                else (sample is not None and (sample.metadata or {}).get(HUMAN_KEY) is not None)
                for record, sample in zip(self._records, self._samples, strict=True)
            )
        return self._rated

    def _built(self, index: int) -> Sample:
        sample = self._samples[index]
        if sample is None:
            record = self._records[index]
            assert record is not None  # released only once its sample is built
            sample = record_to_sample(
                record,
                self.cut_reply,
                self.max_turns,
                self.prompt_cot,
                self.prompt_rubric,
                self.judge_text,
                self.labelled,
            )
            self._samples[index] = sample
            if self.prompt_cot is not None or self.judge_text:
                # the judge-prompt sample holds the whole dialog: keep one copy alive, not
                # two (a record is ~10 objects the garbage collector walks on every pass)
                self._records[index] = None
        return sample

    def _derive(self, indexes: Iterable[int], name: str | None = None) -> DialogDataset:
        picked = list(indexes)
        return DialogDataset(
            [self._records[i] for i in picked],  # type: ignore[misc]
            self.cut_reply,
            self.max_turns,
            name or self._name,
            self._location,
            self._shuffled,
            self.load_report,
            [self._samples[i] for i in picked],
            self.prompt_cot,
            self.prompt_rubric,
            self.judge_text,
            self.labelled,
        )

    def per_turn(self) -> DialogDataset:
        """One sample per bot turn of each dialog, each the dialog up to that turn
        (`per_turn.expand_turns`: ids ``<dialog>#t<k>``, ratings at their own level);
        ``max_turns`` applies to each prefix."""
        if any(record is None for record in self._records):
            raise ValueError("per_turn needs the records: expand before building samples")
        return DialogDataset(
            list(expand_turns(self._records)),  # type: ignore[arg-type]
            cut_reply=self.cut_reply,
            max_turns=self.max_turns,
            name=self._name,
            location=self._location,
            shuffled=self._shuffled,
            load_report=self.load_report,
            labelled=self.labelled,
        )

    def labelled_replies(self) -> DialogDataset:
        """The same response-mode dialogs with each input message opening with who speaks
        (``USER: ``, ``BOT: ``; metadata ``labelled_input: True``), so the viewer's sample
        header shows who said what; the `empathy_response` task's reply solver sends the
        messages without the labels."""
        if not self.cut_reply:
            raise ValueError("labelled replies are response mode's: with cut_reply only")
        return DialogDataset(
            list(self._records),  # type: ignore[arg-type]
            cut_reply=True,
            max_turns=self.max_turns,
            name=self._name,
            location=self._location,
            shuffled=self._shuffled,
            load_report=self.load_report,
            labelled=True,
        )

    def as_prompts(self, cot: bool = False, rubric: str | None = None) -> DialogDataset:
        """The same dialogs with the rubric prompt as each sample's input (judge mode;
        ``rubric``: a variant, `_rubric.load_rubric`, instead of the seed).

        For ``generate()`` alone: Inspect handles one plain-string message per
        sample, as in a bare task (see docs/performance.md). Each sample carries
        ``judge_prompt: True`` in its metadata; the new dataset lets go of a
        record once its sample is built.
        """
        return self._judge_inputs(prompt_cot=cot, prompt_rubric=rubric)

    def as_judge_dialogs(self) -> DialogDataset:
        """The same dialogs with the dialog as ``USER:`` / ``BOT:`` lines as each sample's
        input (judge mode's default, for `judge_generate`, which sends the rubric prompt).

        One plain-string input per sample, as in a bare task, and the viewer opens each
        sample on the conversation. Each sample carries ``judge_dialog: True`` in its
        metadata; the new dataset lets go of a record once its sample is built.
        """
        return self._judge_inputs(judge_text=True)

    def _judge_inputs(self, **input_kind: Any) -> DialogDataset:
        """The same dialogs as judge-mode samples of one input kind (`as_prompts`,
        `as_judge_dialogs`)."""
        if self.cut_reply:
            raise ValueError("a judge-mode input needs the bot reply: not with cut_reply")
        return DialogDataset(
            list(self._records),  # type: ignore[arg-type]
            max_turns=self.max_turns,
            name=self._name,
            location=self._location,
            shuffled=self._shuffled,
            load_report=self.load_report,
            **input_kind,
        )

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | slice) -> Sample | Dataset:
        if isinstance(index, slice):
            return self._derive(range(len(self._records))[index])
        if index < 0:
            index += len(self._records)
        if not 0 <= index < len(self._records):
            raise IndexError("dataset index out of range")
        return self._sample(index)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Sample]:
        for start in range(0, len(self._records), BUILD_CHUNK):
            stop = min(start + BUILD_CHUNK, len(self._records))
            self._build(start, stop)
            for index in range(start, stop):
                yield self._sample(index)

    def _build(self, start: int, stop: int) -> None:
        """Build the samples ``start:stop`` not built yet, with the garbage collector paused.

        Building allocates many acyclic objects; each burst would trigger collections
        that walk every live object (two thirds of the build time with 20,000 dialogs).
        """
        if all(self._samples[i] is not None for i in range(start, stop)):
            return
        with _no_gc():
            for index in range(start, stop):
                self._sample(index)

    def shuffle(self, seed: int | None = None) -> None:
        # the same permutation MemoryDataset.shuffle would apply for this seed
        order = list(range(len(self._records)))
        if seed is not None:
            random.Random(seed).shuffle(order)
        else:
            random.shuffle(order)
        self._records = [self._records[i] for i in order]
        self._samples = [self._samples[i] for i in order]
        self._shuffled = True

    def shuffle_choices(self, seed: int | None = None) -> None:
        """Dialog samples have no choices: nothing to shuffle."""

    def sort(
        self,
        reverse: bool = False,
        key: Callable[[Sample], SupportsRichComparison] = input_length,
    ) -> None:
        order = sorted(range(len(self._records)), key=lambda i: key(self._sample(i)),
                       reverse=reverse)  # fmt: skip
        self._records = [self._records[i] for i in order]
        self._samples = [self._samples[i] for i in order]

    def filter(self, predicate: Callable[[Sample], bool], name: str | None = None) -> Dataset:
        return self._derive((i for i in range(len(self._records)) if predicate(self._sample(i))),
                            name)  # fmt: skip


def skipped_summary(dataset: Any) -> dict[str, Any] | None:
    """How a dataset was loaded, for the eval log: loaded, skipped and excluded by reason,
    and the records' content hash (``sha256``, `content_hash`).

    None for datasets not made by `load_dialogs`. Put it in ``Task(metadata=...)``
    so that it lands in the log header (``log.eval.metadata``).
    """
    report = getattr(dataset, "load_report", None)
    if not isinstance(report, LoadReport):
        return None
    return {**report.summary(), **({"sha256": report.sha256} if report.sha256 else {})}


def content_hash(records: Iterable[DialogRecord], *context: Any) -> str:
    """The sha256 of the records as loaded, in order (ids, turns, ratings, scales,
    metadata) and of ``context`` (a spec's bytes, the mapping). Two loads of one file
    agree; any change to what a sample holds (a text, a rating, a dialog added or left
    out) changes it. A lazy CSV record is hashed by its row's cells, never built."""
    from .loaders._column_records import lazy_row

    digest = hashlib.sha256()
    for item in context:
        digest.update(json.dumps(item, sort_keys=True, default=repr).encode("utf-8"))
    for record in records:
        row = lazy_row(record)
        if row is not None:
            item: Any = row
        else:
            turns = [[turn.role, turn.content] for turn in record.turns]
            item = [record.id, turns, record.rating, list(record.scale), record.metadata]
        digest.update(json.dumps(item, sort_keys=True, default=repr).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def load_dialogs(
    source: str | Path = "default",
    format: str | None = None,
    *,
    cut_reply: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
    on_invalid: OnInvalid | None = None,
    max_turns: int | None = None,
    **mapping: Any,
) -> DialogDataset:
    """Load dialogs as an Inspect dataset, validating every record first.

    Args:
      source: A bundled dataset name (``default``), a file or folder path,
        ``hf:OWNER/NAME``, or a YAML/JSON spec file holding ``path``, ``format``
        and mapping keys (relative paths are resolved against the spec's folder).
      format: ``jsonl``, ``json``, ``csv``, ``tsv``, ``transcript``,
        ``empathetic_exchanges``, ``ieval``, ``esconv``, ``epitome`` or
        ``empathetic_dialogues``; inferred from the file when None.
      cut_reply: Response mode: cut the final bot reply off the input.
      shuffle: Shuffle the samples.
      seed: Seed for the shuffle.
      on_invalid: ``fail`` (default): raise a DatasetError listing the invalid
        records; ``skip``: load the rest, and count the skipped ones by reason
        (`skipped_summary`, and a logged warning).
      max_turns: Keep only the last N turns of each dialog, led by a
        ``[K earlier turns left out]`` marker.
      **mapping: Format options, e.g. ``transcript``, ``rating``, ``roles``,
        ``scale`` for CSV, ``layout``, ``trailing_user`` (see docs/datasets.md).
    """
    src = _resolve(source, normalise_format(format), mapping)
    with _naming(src):
        on_invalid = on_invalid or src.options.get("on_invalid") or "fail"
        if on_invalid not in ON_INVALID:
            raise DatasetError(f"on_invalid must be 'fail' or 'skip', not {on_invalid!r}")
        max_turns = _check_max_turns(
            max_turns if max_turns is not None else src.options.get("max_turns")
        )
        report, records = _read(src)
    _settle_problems(report, on_invalid)
    if not records:
        excluded = "; ".join(f"{k}: {n}" for k, n in report.excluded.items())
        raise DatasetError(
            f"{report.source}: no dialogs to load" + (f" ({excluded})" if excluded else "")
        )
    report.loaded = len(records)
    spec = src.spec_file.read_bytes().hex() if src.spec_file is not None else None
    report.sha256 = content_hash(records, spec, src.mapping, src.options)
    dataset = DialogDataset(
        records,
        cut_reply=cut_reply,
        max_turns=max_turns,
        name=src.name or (src.hub if src.hub is not None else src.path.stem),
        location=report.source,
        load_report=report,
    )
    if shuffle:
        dataset.shuffle(seed=seed)
    return dataset


@dataclass
class _Source:
    """Where dialogs come from, once a name, path, hub id or spec file is resolved."""

    path: Path
    format: str | None
    mapping: dict[str, Any]
    hub: str | None = None
    data: Any = None
    """A JSON document already parsed while telling the format (not parsed twice)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Load options a spec file set (``on_invalid``, ``max_turns``)."""
    name: str | None = None
    spec_file: Path | None = None
    """The spec file the source was read from, if any."""
    notes: list[str] = field(default_factory=list)
    """Notes for the load's report (a spec's files read from outside its folder)."""


@contextmanager
def _naming(src: _Source) -> Iterator[None]:
    """Put the file in an error that does not name one (``format 'csv' does not take ...``):
    the spec file that set the options, else the data file or hub id. Under a spec, an error
    naming the data (a folder member that leads outside it) names the spec first."""
    try:
        yield
    except DatasetError as ex:
        spec = str(src.spec_file) if src.spec_file is not None else None
        if spec is not None and src.path is not None and str(ex).startswith(str(src.path)):
            raise DatasetError(
                f"{spec} (path {src.path}): {str(ex)[len(str(src.path)) :].lstrip(': ')}"
            ) from ex
        where = [str(w) for w in (src.spec_file, src.path) if w is not None]
        where = [f"hf:{src.hub}"] if src.hub is not None and src.spec_file is None else where
        if any(str(ex).startswith(w) for w in where):
            raise
        raise DatasetError(f"{where[0]}: {ex}") from ex


def _resolve(source: str | Path, fmt: str | None, mapping: dict[str, Any]) -> _Source:
    """The path (or hub id), format and mapping of a source, a spec file read."""
    text = str(source)
    if text in BUNDLED:
        src = _Source(bundled_path(text), fmt, mapping)
    elif text.startswith("hf:"):
        return _Source(Path(text), fmt, mapping, hub=text[3:].strip())
    else:
        src = _Source(Path(text).expanduser(), fmt, mapping)
    path = src.path
    if not path.exists():
        raise DatasetError(f"{path}: no such file (bundled datasets: {', '.join(BUNDLED)})")
    if path.suffix.lower() in SPEC_SUFFIXES or path.suffix.lower() == ".json" or fmt is None:
        inferred, data = infer_format(path)
        if inferred == "spec":
            return _from_spec(path, data, fmt, mapping)
        if fmt is None:
            src.format, src.data = inferred, data
        elif fmt in JSON_FORMATS:
            src.data = data
    return src


def _from_spec(path: Path, data: Any, fmt: str | None, mapping: dict[str, Any]) -> _Source:
    """The source a spec file describes; keys given to `load_dialogs` win over the spec's."""
    spec = read_spec(path, data)
    fmt = fmt or normalise_format(spec.format)
    src = _Source(Path(spec.source), fmt, {**spec.mapping, **mapping},
                  options=spec.options, name=spec.name, spec_file=path,
                  notes=spec.notes)  # fmt: skip
    if spec.source.startswith("hf:"):
        src.hub = spec.source[3:].strip()
        return src
    if not src.path.exists():
        raise DatasetError(f"{spec.file}: path {src.path} does not exist")
    if fmt is None:
        src.format, src.data = infer_format(src.path)
        if src.format == "spec":
            raise DatasetError(f"{spec.file}: path points at another spec file")
    return src


def _read(src: _Source) -> tuple[LoadReport, list[DialogRecord]]:
    """Every valid record of a source, in order, and the report of what was not valid."""
    if src.hub is not None:
        fmt = hub_format(src.hub, src.format)
        report = LoadReport(f"hf:{src.hub}", fmt)
        located = load_hub(src.hub, fmt, report, **src.mapping)
    else:
        assert src.format is not None
        fmt = src.format
        report = LoadReport(str(src.path), fmt)
        loader = FORMATS[fmt]
        if src.data is not None and fmt in JSON_FORMATS:
            located = loader(src.path, report, data=src.data, **src.mapping)
        else:
            located = loader(src.path, report, **src.mapping)
    for note in src.notes:
        report.note(note)
    with _no_gc():
        # an exotic encoding (unicode_escape) could decode to a lone surrogate: check then
        check_text = src.hub is not None or fmt not in DECODED or "encoding" in src.mapping
        controls = src.hub is not None or _may_hold_controls(src.path, fmt)
        records = _unique(located, report, check_text, controls)
    return report, records


def _settle_problems(report: LoadReport, on_invalid: str) -> None:
    """Fail the load on invalid records (``fail``), or note and log the skipped ones."""
    if not report.problems:
        return
    if on_invalid == "fail":
        raise DatasetError(report.error_message())
    report.skipped = True
    summary = report.summary()
    logger.warning(
        f"{report.source}: skipped {summary['skipped_total']} invalid record(s) "
        f"({', '.join(f'{k}: {n}' for k, n in summary['skipped'].items())}); "
        f"first: {report.problems[0]}"
    )


@contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while many acyclic objects are built.

    Loading makes no reference cycles, but each allocation burst triggers
    collections that walk every live object: with it paused, a 100,000-dialog
    file loads about 40% faster.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_max_turns(value: Any) -> int | None:
    """A turn limit of at least 1, or None (also for 0) to keep whole dialogs."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DatasetError(f"max_turns must be a whole number of at least 1, not {value!r}")
    return value or None


DECODED = frozenset({"csv", "tsv", "transcript", "empathetic_exchanges", "epitome",
                     "empathetic_dialogues"})  # fmt: skip
"""Formats read as text decoded strictly from bytes, with flat string metadata: their
strings cannot hold a lone surrogate (the decoder refuses one), so none is looked for."""


def _may_hold_controls(path: Path, fmt: str) -> bool:
    """Whether a source's turns or ids may hold a C0 control character: its bytes are
    searched at C speed (`CONTROL_BYTES`, for JSON `JSON_CONTROL_BYTES`), so the
    records are checked one by one only then."""
    if fmt == "epitome" or not path.is_file():
        return True  # several files
    pattern = JSON_CONTROL_BYTES if fmt in JSON_FORMATS or fmt == "jsonl" else CONTROL_BYTES
    try:
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return pattern.search(m) is not None  # type: ignore[call-overload]
    except (OSError, ValueError):  # ValueError: an empty file
        return False


def _unique(
    located: Iterable[Located | RecordBlock],
    report: LoadReport,
    check_text: bool = True,
    controls: bool = True,
) -> list[DialogRecord]:
    """The records, with any repeated id, bad text or reserved metadata key reported.

    The first record with an id stays. Every string that reaches the log (id, turns,
    metadata) must be valid Unicode (``check_text``: off for `DECODED` formats), the id
    and turns free of control characters (``controls``: where the file may hold one), and no
    record may carry a key the plugin sets (`SAMPLE_KEYS`): a problem is reported for
    the record's file and line. A `RecordBlock` (valid records, ids unlike each other)
    is taken whole when none of its ids was seen before and no text is checked.
    """
    records: list[DialogRecord] = []
    seen: dict[str, str | RecordBlock] = {}
    taken: list[RecordBlock] = []  # blocks whose ids are not in seen yet (often none follow)
    for item in located:
        for block in taken:
            seen.update(zip(block.ids, repeat(block)))
        taken.clear()
        if isinstance(item, RecordBlock):
            if not (check_text or controls) and (not seen or seen.keys().isdisjoint(item.ids)):
                records.extend(item.records)
                taken.append(item)
                continue
            items: Iterable[Located] = item.located()
        else:
            items = (item,)
        for where, record in items:
            first = seen.get(record.id)
            if first is not None:
                if isinstance(first, RecordBlock):
                    first = first.where_of(record.id)
                report.problem(
                    where, DUPLICATE_ID, f"duplicate id {record.id!r} (first at {first})"
                )
                continue
            try:
                if check_text:
                    check_record_text(record)
                if controls:
                    check_turn_controls(record)
                if record.metadata and not SAMPLE_KEYS.isdisjoint(record.metadata):
                    check_data_metadata({k: None for k in record.metadata if k in SAMPLE_KEYS})
            except RecordProblem as ex:
                report.problem(where, ex.kind, ex.detail)
                continue
            seen[record.id] = where
            records.append(record)
    return records


def problem_report(path: Path | str, problems: list[str], limit: int = 20) -> str:
    """One error message listing the first ``limit`` problems and how many there were."""
    head = f"{path}: {len(problems)} invalid record(s)"
    shown = "\n".join(f"  - {p}" for p in problems[:limit])
    more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
    return f"{head}\n{shown}{more}"
