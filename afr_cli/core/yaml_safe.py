"""YAML of users' files read safely: a key given twice is an error naming both lines, and a document
whose aliases would expand beyond ``MAX_NODES`` values is refused before it is built.

PyYAML's ``safe_load`` keeps the last of two equal keys (a typo passes silently) and builds an
alias once but lets every reference share it: the data look small until something walks them
(the manifest's JSON, a table), and a "billion laughs" document then fills memory. Here the node
graph is measured with its aliases expanded, memoised per node, so the measure itself stays cheap.
"""

from __future__ import annotations

from typing import Any

import yaml

from afr_cli.errors import AfrInputError

# No config comes near this (the largest reference config has a few hundred values); an alias
# bomb of ten levels of ten references already has ten billion.
MAX_NODES = 100_000


class _Loader(yaml.SafeLoader):
    """SafeLoader refusing duplicate keys; ``source`` names the file in messages."""

    source = "<yaml>"

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # '<<: *base' merges a mapping in; its keys may be overridden
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key: SafeLoader reports it below
            line = key_node.start_mark.line + 1
            if first is not None:
                raise AfrInputError(
                    f"{self.source}: line {line}: duplicate key {key!r} (first given on line "
                    f"{first}); each key may appear once in a mapping"
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def expanded_size(node: yaml.Node, limit: int = MAX_NODES) -> int:
    """The number of values ``node`` holds with every alias expanded (stops counting past ``limit``);
    a node that contains itself counts as unbounded."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in active:
            return limit + 1  # a recursive alias expands without end
        active.add(key)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            children = n.value
        elif isinstance(n, yaml.MappingNode):
            children = [c for pair in n.value for c in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                break
        active.discard(key)
        sizes[key] = min(total, limit + 1)
        return sizes[key]

    return size(node)


def load_yaml(text: str, source: str, limit: int = MAX_NODES) -> Any:
    """The data of one YAML document, as ``yaml.safe_load`` gives them, or AfrInputError naming
    ``source``: a duplicate key (both lines), an expansion beyond ``limit`` values. Malformed YAML
    raises ``yaml.YAMLError`` as before (the caller words it with the file's line and column)."""
    loader = _Loader(text)
    loader.source = source
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        count = expanded_size(node, limit)
        if count > limit:
            raise AfrInputError(
                f"{source}: the document expands to more than {limit} values (aliases "
                f"repeated within aliases?); a config is at most {limit} values"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()
