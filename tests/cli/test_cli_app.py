"""The ``chaja`` entry: its version, and how it ends when its reader goes away."""
import pytest

from chaja.cli import main


def test_version(capsys):
    import chaja
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"chaja {chaja.__version__}"


def test_a_reader_that_goes_away_ends_the_command_quietly(store):
    """`chaja … | head`: the pipe closes before the command is done writing."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)                   # nobody will read: the first write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "chaja.cli", "stats", "--store", str(store), "--json"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
