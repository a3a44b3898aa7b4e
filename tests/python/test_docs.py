"""The PyTorch example of docs/python.md, run as it stands (from the
repository's top, in a scratch folder's copy of the paths it writes)."""
import os
import re
import subprocess
import sys

from conftest import BUILD, ROOT


def test_pytorch_workflow_example(tmp_path):
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    block = re.search(r"## In a PyTorch workflow.*?```python\n(.*?)```", text, re.S).group(1)
    assert len(block.strip().splitlines()) <= 12
    code = block.replace('"swish.onnx"', repr(str(tmp_path / "swish.onnx"))).replace(
        '"build/plugins/demo/demo.yaml"', repr(os.path.join(BUILD, "plugins", "demo", "demo.yaml")))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "graphcc agrees with torch:" in r.stdout
