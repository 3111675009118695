"""``plugins:`` in a config: a family in a file beside the config is found by every command
with no PYTHONPATH; a plugin that cannot be used is a one-line error; the family API is
documented."""

from __future__ import annotations

import inspect
import os

import pytest
from conftest import assert_one_line_error, run_afr
from own_family_fixture import SHARP_FAMILY_MODULE, assert_mine_equals_same, write_sharp_config

import afr_cli.family_api as api


def _config(tmp_path, plugins, family="sharp-abrf"):
    return write_sharp_config(tmp_path / "conf" / "exp.yaml", family, plugins)


def _env_without(tmp_path):
    """The test's environment; the plugin's directory is on no path."""
    path = os.environ.get("PYTHONPATH", "")
    assert str(tmp_path) not in path
    return dict(os.environ)


@pytest.mark.slow
def test_a_plugin_file_beside_the_config_is_found_by_validate_run_and_the_workers(tmp_path):
    (tmp_path / "conf" / "families").mkdir(parents=True)
    (tmp_path / "conf" / "families" / "sharp.py").write_text(SHARP_FAMILY_MODULE)
    env = _env_without(tmp_path)
    config = _config(tmp_path, ["families/sharp.py"])
    proc = run_afr("validate", config, env=env, cwd=tmp_path)
    assert proc.returncode == 0 and "2 models" in proc.stdout, proc.stderr
    out = tmp_path / "store"
    proc = run_afr("run", config, "--out", str(out), "-q", "-j", "2", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert_mine_equals_same(out)
    # module:Class of the plugin file works too
    assert run_afr("validate", _config(tmp_path, ["families/sharp.py"], "sharp:SharpABRF"), env=env).returncode == 0


def test_a_plugin_that_cannot_be_used_is_a_one_line_error(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "broken.py").write_text("import no_such_module_at_all\n")
    (tmp_path / "conf" / "clash.py").write_text(SHARP_FAMILY_MODULE.replace('"sharp-abrf"', '"eps-abrf"'))
    cases = [
        (["missing.py"], "plugins[0]: cannot read", "relative to the config"),
        (["broken.py"], "plugins[0]: broken.py (line", "ModuleNotFoundError"),
        (["clash.py"], "family name 'eps-abrf'", "already taken"),
        (["no_such_pkg.families"], "plugins[0]: cannot import module 'no_such_pkg.families'"),
        ("one.py", "plugins: must be a list"),
    ]
    for plugins, *needles in cases:
        assert_one_line_error(run_afr("validate", _config(tmp_path, plugins)), "exp.yaml", *needles)


def test_the_family_api_is_documented_in_one_place():
    """Every exported name, and every public method or property of an exported class, has a docstring."""
    missing = []
    for name in api.__all__:
        obj = getattr(api, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        if not inspect.getdoc(obj):
            missing.append(name)
        for attr, value in vars(obj).items() if inspect.isclass(obj) else ():
            if attr.startswith("_"):
                continue
            func = value.fget if isinstance(value, property) else getattr(value, "func", value)
            func = getattr(func, "__func__", func)
            if callable(func) and not func.__doc__:
                missing.append(f"{name}.{attr}")
    assert missing == []
    assert "docs/tutorial-own-family.md" in api.__doc__
