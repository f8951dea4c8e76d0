"""The one exception type of the chalk module."""


class ChalkError(ValueError):
    """Bad input, as the CLI's ``chalk: error: <field>: <message>`` (exit 2).

    ``field`` names the offending flag or field as the library does (``"--batch"``,
    ``"config.json: hidden_size"``, ``"compute_tflop_per_s"``); ``str(e)`` is the whole
    one-line message, ``"<field>: <what was wrong>"``.
    """

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    def __reduce__(self):  # picklable, so errors cross Dask workers intact
        return (ChalkError, (self.message, self.field))


def python_field(error: ChalkError, names) -> ChalkError:
    """``error`` with a CLI flag field (``"--kv-dtype"``) renamed to the Python argument the
    caller passed (``"kv_dtype"``), message and all, when ``names`` holds that argument; the
    error itself otherwise (issue 30 review L10: a Python caller never typed ``--model``)."""
    field = error.field
    name = field.lstrip("-").replace("-", "_")
    if not field.startswith("--") or name not in names:
        return error
    message = error.message
    if message.startswith(field):
        message = name + message[len(field):]
    return ChalkError(message, name)
