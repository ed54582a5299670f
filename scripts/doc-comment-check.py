#!/usr/bin/env python3
"""Fails, listing them, if a public symbol declared under SOURCES has no doc comment of its own.

Usage: doc-comment-check.py GRAPHS-DIR SOURCES-DIR

GRAPHS-DIR holds `*.symbols.json` symbol graphs (public symbols only), from `swift build -emit-symbol-graph` or
from `swift-symbolgraph-extract`. The compiler copies a protocol requirement's comment onto an undocumented
implementation; that does not count. Used by scripts/build-docs.sh and scripts/build-integration-docs.sh.
"""
import glob
import json
import os
import sys

graphs, sources = sys.argv[1], os.path.realpath(sys.argv[2])
missing = []
checked = 0
for path in sorted(glob.glob(os.path.join(graphs, "*.symbols.json"))):
    graph = json.load(open(path))
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") not in ("public", "open"):
            continue
        # `extension DispatchQueue: NotificationDeliveryQueue {}` is not a declaration of its own.
        if symbol["kind"]["identifier"] == "swift.extension":
            continue
        location = symbol.get("location", {}).get("uri", "")
        file = location.removeprefix("file://")
        # Only symbols declared in our sources: synthesized members (`!=`, `localizedDescription`) have no
        # location of ours and carry the standard library's comment.
        if not os.path.realpath(file).startswith(sources + os.sep):
            continue
        checked += 1
        comment = symbol.get("docComment")
        # A comment copied from a protocol requirement (`hash(into:)` without a comment of its own gets
        # Hashable's) points at another file or at none.
        if comment is None or comment.get("uri") != location:
            line = symbol["location"]["position"]["line"] + 1
            title = ".".join(symbol["pathComponents"])
            missing.append(f"{os.path.relpath(file)}:{line}: {symbol['kind']['displayName'].lower()} {title}")
# A graph without source locations (a module built without its .swiftsourceinfo) would check nothing: say so.
if checked == 0:
    sys.exit(f"error: no public symbol of {graphs} is located under {sources}: nothing was checked")
for entry in sorted(set(missing)):
    print(f"error: public symbol without a doc comment: {entry}")
if missing:
    sys.exit(f"{len(set(missing))} public symbol(s) lack a doc comment")
print(f"every public symbol has a doc comment ({checked} checked)")
