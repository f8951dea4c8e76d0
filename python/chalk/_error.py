"""The one exception type of the chalk module."""

import re


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


_SHORT = re.compile(r"(?<![\w-])-([A-Za-z])(?![\w-])")
_LONG = re.compile(r"(?<![\w`-])--([a-z][a-z0-9-]*)(?: ([0-9][\w.:+-]*(?:,[0-9][\w.:+-]*)*))?")


def python_spelling(message: str, options) -> str:
    """``message`` with the CLI's flags of this command spelled as the Python call takes them
    (review 11 L2): ``-n 2`` and ``--chips 2`` read ``chips=2``, a flag that takes no value
    ``--allow-infeasible`` reads ``allow_infeasible=True``, a flag named without a value
    ``--tp`` reads ``tp``. ``options`` are the command's option dicts (``chalk._chalk.
    cli_commands()``: name, flag, short); flags of other commands, and any inside `backticks`
    (a command line to type), are left as written."""
    options = list(options)
    longs = {o["name"].lstrip("-"): o for o in options}
    shorts = {s: o["name"].lstrip("-") for o in options for s in o.get("short", ())}

    def to_long(m):
        name = shorts.get(m.group(1))
        return "--" + name if name else m.group(0)

    def to_python(m):
        o = longs.get(m.group(1))
        if o is None:
            return m.group(0)
        name = m.group(1).replace("-", "_")
        if o.get("flag"):
            return name + "=True" + (" " + m.group(2) if m.group(2) else "")
        return f"{name}={m.group(2)}" if m.group(2) else name

    # Text inside backticks is a command line to type: keep its flags.
    parts = message.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = _LONG.sub(to_python, _SHORT.sub(to_long, parts[i]))
    return "`".join(parts)


def python_field(error: ChalkError, names, options=()) -> ChalkError:
    """``error`` with a CLI flag field (``"--kv-dtype"``) renamed to the Python argument the
    caller passed (``"kv_dtype"``), message and all, when ``names`` holds that argument; the
    error itself otherwise (issue 30 review L10: a Python caller never typed ``--model``).
    With ``options`` (the command's option dicts), the flags the message names are spelled
    as Python arguments too (python_spelling)."""
    field = error.field
    name = field.lstrip("-").replace("-", "_")
    if not field.startswith("--") or name not in names:
        spelled = python_spelling(error.message, options)
        return error if spelled == error.message else ChalkError(spelled, field)
    message = error.message
    if message.startswith(field):
        message = name + python_spelling(message[len(field):], options)
    else:
        message = python_spelling(message, options)
    return ChalkError(message, name)
