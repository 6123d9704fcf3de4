# SPDX-License-Identifier: Apache-2.0
"""The README's Python program runs as printed (against the suite's server) and counts right."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readmes_python_program_runs_and_its_count_is_exact(url, tmp_path):
    section = README.read_text().split("\n## Python\n", 1)[1]
    program = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'relock.Client("redis://127.0.0.1:6379")' in program
    script = tmp_path / "readme.py"
    script.write_text(program.replace("redis://127.0.0.1:6379", url))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "800" and lines[1].startswith("fencing token ")
