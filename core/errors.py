"""Errors a user can fix. The CLI prints a `TauError` as one line; anything else is a bug and
keeps its traceback."""


class TauError(Exception):
    """Something the user can fix (a bad file, option or plugin); the message says what and where."""


class DataError(TauError, ValueError):
    """A data file (tasks, database, graph) is malformed; the message names the file and the field."""
