#!/usr/bin/env python3
"""Checks every #include of the product against the layer table the build was configured with.

The table (build/mf_layers.txt) is written by mf_module() and mf_program() in CMake: one line per
module in layer order, with its directory, PUBLIC and PRIVATE module dependencies and the
third-party headers it may include. A file of module M may include:
  - its own headers and private headers (M's include/ and src/),
  - the public headers of the modules M links and of their PUBLIC dependencies, transitively,
  - the third-party headers M declares; a key declared as KEY@src/file only in the files so named
    (relative to M's directory), when a library is to stay behind one file of its module.
A public header of M may include only M's own headers and those of its PUBLIC dependencies
(otherwise every user of M would need a dependency it never declared). Relative includes that
climb ("../") are refused everywhere, tests included. Programs (mf-*/main.cpp) may include the
modules they link. Exit 0 when clean, 1 with one line per violation.

Usage: check_layers.py --layers build/mf_layers.txt --root .
       check_layers.py --self-test --layers build/mf_layers.txt --root .
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Third-party keys (mf_module's THIRD_PARTY) and the include paths each one covers.
THIRD_PARTY = {
    "rapidjson": re.compile(r"^rapidjson/"),
    "yaml_cpp": re.compile(r"^yaml-cpp/"),
    "lmdb": re.compile(r"^lmdb\.h$"),
    "openssl": re.compile(r"^openssl/"),
    "boost_process": re.compile(r"^boost/process"),
    "boost_program_options": re.compile(r"^boost/program_options"),
    "re2": re.compile(r"^re2/"),
    "utf8proc": re.compile(r"^utf8proc\.h$"),
    "curl": re.compile(r"^curl/"),
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".in")


class Module:
    def __init__(self, name, directory, public, private, third, rank):
        self.name = name
        self.directory = directory
        self.public = public
        self.private = private
        # third: the keys; third_files: key -> the only files (relative to directory) that may
        # include it, for keys declared as KEY@file.
        self.third = []
        self.third_files = {}
        for entry in third:
            key, _, file = entry.partition("@")
            if key not in self.third:
                self.third.append(key)
            if file:
                self.third_files.setdefault(key, []).append(file)
        self.rank = rank


def split(field):
    return [x for x in field.split(",") if x]


def read_table(path):
    modules, programs, problems = {}, {}, []
    rank = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, directory, public, private, third = line.split("|")
            if name.startswith("program:"):
                programs[name[len("program:"):]] = Module(name, directory, [], split(private), [], None)
                continue
            m = Module(name, directory, split(public), split(private), split(third), rank)
            for dep in m.public + m.private:
                if dep not in modules:
                    problems.append(f"{path}: module '{name}' depends on '{dep}', "
                                    "which is not a module of a lower layer")
            for key in m.third:
                if key not in THIRD_PARTY:
                    problems.append(f"{path}: module '{name}' names unknown third-party key '{key}'")
            modules[name] = m
            rank += 1
    for p in programs.values():
        for dep in p.private:
            if dep not in modules:
                problems.append(f"{path}: {p.name} links unknown module '{dep}'")
    return modules, programs, problems


def public_closure(modules, names):
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n in seen or n not in modules:
            continue
        seen.add(n)
        todo.extend(modules[n].public)
    return seen


def header_owners(root, modules):
    owners = {}
    for m in modules.values():
        inc = os.path.join(root, m.directory, "include")
        for dirpath, _, files in os.walk(inc):
            for fn in files:
                rel = os.path.relpath(os.path.join(dirpath, fn), inc)
                owners[rel] = m.name
    return owners


def files_under(path):
    for dirpath, _, files in os.walk(path):
        for fn in sorted(files):
            if fn.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, fn)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def check(root, modules, programs):
    problems = []
    owners = header_owners(root, modules)

    def check_file(path, who, visible, third, local_dirs, module=None):
        shown = os.path.relpath(path, root)
        for number, kind, target in includes(path):
            where = f"{shown}:{number}"
            if ".." in target.split("/"):
                problems.append(f"{where}: relative include '{target}' climbs out of its directory")
                continue
            if kind == "<":
                for key, pattern in THIRD_PARTY.items():
                    if not pattern.search(target):
                        continue
                    if key not in third:
                        problems.append(f"{where}: {who} includes <{target}> ({key}), "
                                        "which only the modules that declare it may include")
                    elif module is not None and key in module.third_files:
                        own = os.path.relpath(path, os.path.join(root, module.directory))
                        if own not in module.third_files[key]:
                            allowed = ", ".join(module.third_files[key])
                            problems.append(f"{where}: {who} includes <{target}> ({key}), "
                                            f"which only {allowed} of the module may include")
                continue
            owner = owners.get(target)
            if owner is None:
                if target.startswith("mf/"):
                    problems.append(f"{where}: '{target}' is not a public header of any module")
                elif not any(os.path.exists(os.path.join(d, target)) for d in local_dirs):
                    if target != "mf_build_info.hpp":  # generated into the cli module's build dir
                        problems.append(f"{where}: '{target}' is not a header of {who}")
                continue
            if owner not in visible:
                problems.append(f"{where}: {who} includes '{target}' of module '{owner}', "
                                "which it does not link")

    for m in modules.values():
        base = os.path.join(root, m.directory)
        src_visible = {m.name} | public_closure(modules, m.public + m.private)
        hdr_visible = {m.name} | public_closure(modules, m.public)
        local = [os.path.join(base, "src")]
        for path in files_under(os.path.join(base, "include")):
            check_file(path, f"module '{m.name}' (public header)", hdr_visible, m.third,
                       [os.path.dirname(path)], m)
        for path in files_under(os.path.join(base, "src")):
            check_file(path, f"module '{m.name}'", src_visible, m.third,
                       local + [os.path.dirname(path)], m)
    for p in programs.values():
        visible = public_closure(modules, p.private)
        third = set()
        for dep in visible:
            third |= {k for k in modules[dep].third if k.startswith("boost_program_options")}
        for path in files_under(os.path.join(root, p.directory)):
            check_file(path, p.name, visible, third, [os.path.dirname(path)])
    # Tests and benchmarks link what they like, but never climb into a module's directories.
    for top in ("tests", "bench"):
        for path in files_under(os.path.join(root, top)):
            for number, _, target in includes(path):
                if ".." in target.split("/"):
                    problems.append(f"{os.path.relpath(path, root)}:{number}: relative include "
                                    f"'{target}'; link the module (or its _internal target) instead")
    return problems


def run(layers, root):
    modules, programs, problems = read_table(layers)
    if not modules:
        return [f"{layers}: no modules"]
    return problems + check(root, modules, programs)


def self_test(layers, root, script):
    """Copies the tree, plants one violation at a time and expects each to be reported."""
    clean = run(layers, root)
    if clean:
        print("self-test: the tree itself has violations:\n" + "\n".join(clean))
        return 1
    modules, _, _ = read_table(layers)
    harness = os.path.join(modules["harness"].directory, "src", "compiler.cpp")
    json_src = os.path.join(modules["json"].directory, "src", "value.cpp")
    diag_hdr = os.path.join(modules["diag"].directory, "include", "mf", "diag", "diagnostic.hpp")
    trace_hdr = os.path.join(modules["trace"].directory, "include", "mf", "trace", "writer.hpp")
    store_src = os.path.join(modules["store"].directory, "src", "objects.cpp")
    plants = [
        (harness, '#include "mf/tools/pack.hpp"\n', "of module 'tools_pack', which it does not link"),
        (json_src, '#include "mf/store/store.hpp"\n', "of module 'store', which it does not link"),
        (diag_hdr, '#include "mf/json/value.hpp"\n', "of module 'json', which it does not link"),
        (trace_hdr, '#include "mf/io/file.hpp"\n', "of module 'io', which it does not link"),
        (json_src, "#include <lmdb.h>\n", "(lmdb), which only the modules"),
        (store_src, "#include <lmdb.h>\n", "(lmdb), which only src/environment.hpp of the module"),
        (harness, '#include "../../tools_pack/src/walk.hpp"\n', "climbs out of its directory"),
        (harness, '#include "mf/harness/nope.hpp"\n', "is not a public header of any module"),
    ]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        # One copy of the tree; each plant goes into its file and comes out again after its check.
        copy = os.path.join(tmp, "tree")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git", "build*", "target"))
        for rel, line, expected in plants:
            with open(os.path.join(copy, rel), encoding="utf-8") as f:
                text = f.read()
            with open(os.path.join(copy, rel), "w", encoding="utf-8") as f:
                f.write(line + text)
            out = subprocess.run([sys.executable, script, "--layers", layers, "--root", copy],
                                 capture_output=True, text=True)
            with open(os.path.join(copy, rel), "w", encoding="utf-8") as f:
                f.write(text)
            if out.returncode != 1 or expected not in out.stdout:
                print(f"self-test: planting {line.strip()!r} in {rel} was not reported "
                      f"(exit {out.returncode}): {out.stdout.strip()}")
                failures += 1
        # A table whose module depends on a later layer is refused.
        bad = os.path.join(tmp, "layers.txt")
        with open(layers, encoding="utf-8") as src, open(bad, "w", encoding="utf-8") as dst:
            for raw in src:
                if raw.startswith("json|"):
                    raw = raw.replace("|diag|", "|diag,store|", 1)
                dst.write(raw)
        out = subprocess.run([sys.executable, script, "--layers", bad, "--root", root],
                             capture_output=True, text=True)
        if out.returncode != 1 or "not a module of a lower layer" not in out.stdout:
            print("self-test: an upward dependency in the table was not reported")
            failures += 1
    print(f"self-test: {len(plants) + 1 - failures}/{len(plants) + 1} planted violations reported")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.layers, os.path.abspath(args.root), os.path.abspath(__file__))
    problems = run(args.layers, os.path.abspath(args.root))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
