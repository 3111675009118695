"""The paper folders' YAML is parsed once per content (afr_cli/store/yaml_cache.py): the same
text is served from the cache, a changed text is parsed again (never served stale), and a text
that fails to load raises as before and leaves nothing in the cache."""

from __future__ import annotations

import pytest
import yaml

from afr_cli.catalogue.knowledge import DATA_FILE, package_folders
from afr_cli.core.yaml_safe import load_yaml
from afr_cli.errors import AfrInputError
from afr_cli.store import yaml_cache
from afr_cli.store.cache import CACHE_ENV


@pytest.fixture
def counted(tmp_path, monkeypatch):
    """The cache in a fresh folder, and the list of texts the real loader was called on."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    calls = []

    def loader(text, source):
        calls.append(text)
        return load_yaml(text, source)

    monkeypatch.setattr(yaml_cache, "load_yaml", loader)
    return calls


def test_the_same_text_is_parsed_once_and_a_changed_one_again(counted):
    first = yaml_cache.load_yaml_cached("a: 1\nb: [x, y]\n", "f.yaml")
    again = yaml_cache.load_yaml_cached("a: 1\nb: [x, y]\n", "f.yaml")
    assert first == again == {"a": 1, "b": ["x", "y"]} and len(counted) == 1
    again["b"].append("z")  # each caller gets its own copy
    assert yaml_cache.load_yaml_cached("a: 1\nb: [x, y]\n", "f.yaml")["b"] == ["x", "y"]
    changed = yaml_cache.load_yaml_cached("a: 2\nb: [x, y]\n", "f.yaml")
    assert changed == {"a": 2, "b": ["x", "y"]} and len(counted) == 2


def test_a_text_that_fails_to_load_raises_and_caches_nothing(counted, tmp_path):
    with pytest.raises(AfrInputError, match="f.yaml"):
        yaml_cache.load_yaml_cached("a: 1\na: 2\n", "f.yaml")  # a duplicate key
    with pytest.raises(yaml.YAMLError):
        yaml_cache.load_yaml_cached("a: [1,\n", "f.yaml")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    with pytest.raises(AfrInputError):
        yaml_cache.load_yaml_cached("a: 1\na: 2\n", "f.yaml")  # not served from anywhere: raises again
    assert len(counted) == 3


def test_every_paper_data_file_loads_to_the_same_data_through_the_cache(counted):
    for folder in package_folders():
        text = (folder / DATA_FILE).read_text(encoding="utf-8")
        parsed = load_yaml(text, "x")
        assert yaml_cache.load_yaml_cached(text, "x") == parsed
        assert yaml_cache.load_yaml_cached(text, "x") == parsed  # the second from the cache
    assert len(counted) == len(package_folders())
