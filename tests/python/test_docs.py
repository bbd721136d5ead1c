"""The Python examples of the docs run against the built module: every ```python block of
README.md and python/README.md, each in a fresh namespace, in a temporary directory (the files
they write, map.png and window.png, land there). tests/docs/ runs the docs' shell commands."""
import os
import re

import pytest

from conftest import SOURCE_DIR

DOCS = ["README.md", "python/README.md"]


def python_blocks(path):
    text = open(os.path.join(SOURCE_DIR, path), encoding="utf-8").read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_each_doc_has_examples():
    assert [len(python_blocks(p)) >= 1 for p in DOCS] == [True, True]


@pytest.mark.parametrize("path, index", [(p, k) for p in DOCS for k in range(len(python_blocks(p)))])
def test_example_runs(tmp_path, monkeypatch, path, index):
    pytest.importorskip("matplotlib").use("Agg")
    monkeypatch.chdir(tmp_path)
    code = python_blocks(path)[index]
    exec(compile(code, "%s python block %d" % (path, index + 1), "exec"), {"__name__": "__doc_example__"})
    for name in re.findall(r'savefig\("([^"]+)"', code):  # a picture it says it writes, it writes
        assert os.path.getsize(tmp_path / name) > 1000
    import matplotlib.pyplot as plt
    plt.close("all")
