"""The package: stubs and docstrings current, docstrings from the C++ doc comments."""
import os
import subprocess
import sys

import chalk
from conftest import SOURCE_DIR


def test_stubs_and_docstrings_are_generated_from_the_current_sources():
    env = dict(os.environ, CHALK_PYTHON_BUILD=os.path.dirname(os.path.dirname(chalk.__file__)))
    out = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "python", "gen_stubs.py"), "--check"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_docstrings_are_the_cpp_doc_comments():
    assert "lecture 2:21-15:30" in chalk.Deployment.decode_step.__doc__
    assert "T_kv = B S kv_bytes_per_token / (n W eff)" in chalk.Deployment.decode_step.__doc__
    assert "Throws InputError for batch < 1, prompt < 1 or prefix < 0" in chalk.Deployment.prefill_step.__doc__
    assert "smallest replica" in chalk._chalk.deployment.__doc__


def test_the_package_ships_its_stubs():
    here = os.path.dirname(chalk.__file__)
    for name in ("__init__.pyi", "_chalk.pyi", "py.typed"):
        assert os.path.exists(os.path.join(here, name)), name
