"""The built wheel is what users get: it must carry the grammars and templates, and work alone.

The wheel is built once per session with pip (hatchling from this environment when it has one,
else pip's isolated build fetches it). The install test creates a plain virtualenv, installs
the wheel from PyPI's dependencies, and runs ``codec demo`` from outside the checkout so the
source tree cannot be imported. It needs the network to reach PyPI: set
``CODEC_SKIP_INSTALL_TEST=1`` to skip it where there is none (``.ci/run`` always runs it).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import codec
import codec.registry

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = sorted(path.name for path in (ROOT / "grammars").glob("*.lark"))
TEMPLATES = sorted(path.name for path in (ROOT / "templates").iterdir() if path.is_file())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not a source checkout (no pyproject.toml)")
    out = tmp_path_factory.mktemp("wheel")
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (built,) = out.glob("codec-*.whl")
    return built


def test_wheel_carries_grammars_templates_and_sources(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert GRAMMARS and {"glm.jinja", "SOURCES.toml"} <= set(TEMPLATES)
    for grammar in GRAMMARS:
        assert f"codec/grammars/{grammar}" in names
    for template in TEMPLATES:
        assert f"codec/templates/{template}" in names
    assert {"codec/__init__.py", "codec/cli/main.py", "codec/__main__.py", "codec/cli/demo.py"} <= names
    assert "codec/py.typed" in names  # the package's type hints are declared (PEP 561)
    families = {spec.family.name for spec in codec.registry.FORMATS.values()}
    assert all(f"codec/formats/{family}/__init__.py" in names for family in families)


def test_wheel_declares_the_codec_command(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    (entry_points,) = (name for name in archive.namelist() if name.endswith("entry_points.txt"))
    assert "codec = codec.cli:main" in archive.read(entry_points).decode()


def test_bundled_files_are_byte_identical_to_the_checkout(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    for folder, names in (("grammars", GRAMMARS), ("templates", TEMPLATES)):
        for name in names:
            assert archive.read(f"codec/{folder}/{name}") == (ROOT / folder / name).read_bytes()


@pytest.mark.skipif(
    bool(os.environ.get("CODEC_SKIP_INSTALL_TEST")), reason="CODEC_SKIP_INSTALL_TEST is set (installing needs PyPI)"
)
def test_installed_wheel_runs_the_demo_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr
    where = subprocess.run(
        [str(python), "-c", "import codec; print(codec.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv)
    demo = subprocess.run(
        [str(venv / "bin" / "codec"), "demo"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert demo.returncode == 0, demo.stderr
    assert "=== gemma4: " in demo.stdout
