"""Plumbing every layer shares: Inspect internals (`compat`), what a path names
(`file_kind`), what a judge spent (`usage`) and the end-of-task summary hook (`summary`)."""
