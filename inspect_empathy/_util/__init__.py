"""Plumbing every layer shares: Inspect internals (`compat`), what a path names
(`file_kind`), what a judge spent (`usage`), the end-of-task summary hook (`summary`), the
readers (`read`) and the writers (`write`)."""
