"""The LICENSE file states the licence that pyproject.toml declares."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_matches_the_declared_licence():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = project["license"]                       # an SPDX expression (PEP 639)
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert re.search(rf"^SPDX-License-Identifier: {re.escape(declared)}$", text, re.M)
    names = {"Apache-2.0": "Apache License, Version 2.0", "MIT": "MIT License"}
    assert names.get(declared, declared) in text
