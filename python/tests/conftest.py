"""Shared fixtures: the `chalk` binary to compare against, and the source tree."""
import json
import os
import subprocess

import pytest

SOURCE_DIR = os.environ.get("CHALK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def _binary():
    path = os.environ.get("CHALK_BIN", os.path.join(SOURCE_DIR, "build", "release", "chalk"))
    if not os.path.exists(path):
        pytest.skip(f"no chalk binary at {path} (ctest sets CHALK_BIN)")
    return path


@pytest.fixture(scope="session")
def cli():
    """cli(*args) runs `chalk <args> --json` as a process and returns its parsed JSON."""
    binary = _binary()

    def run(*args):
        out = subprocess.run([binary, *map(str, args), "--json"], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"chalk {' '.join(map(str, args))}: exit {out.returncode}: {out.stderr}"
        return json.loads(out.stdout)

    return run


@pytest.fixture(scope="session")
def cli_error():
    """cli_error(*args) runs `chalk <args>`, expects exit 2 and returns the error line."""
    binary = _binary()

    def run(*args):
        out = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, f"chalk {' '.join(map(str, args))}: exit {out.returncode}, expected 2"
        return out.stderr.strip()

    return run


@pytest.fixture(scope="session")
def h100_file():
    """The built-in h100-sxm chalk-hardware/1 file as a dict."""
    with open(os.path.join(SOURCE_DIR, "data", "hardware", "h100-sxm.json")) as f:
        return json.load(f)
