"""Dialogs and datasets: users' files, public corpora and the hub, as Inspect samples.

- `_dataset`: `load_dialogs` and `DialogDataset`, the samples a task runs on;
- `loaders/`: one module per source format, each mapping onto `dialogs.DialogRecord`;
- `per_turn`: one record per bot turn of a conversation (``-T per_turn=true``);
- `_samples`: the Inspect `Sample` of a record (chat messages, or the rubric prompt).

The dialog records themselves are `inspect_empathy.dialogs`, shared by every layer.
"""

from ._dataset import DialogDataset, bundled_path, load_dialogs, skipped_summary

__all__ = ["DialogDataset", "bundled_path", "load_dialogs", "skipped_summary"]
