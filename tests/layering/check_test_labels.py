#!/usr/bin/env python3
"""Every CTest test carries its labels: `ctest -L <label>` (and scripts/test.sh's passes) select by them. A list
of labels that reached set_tests_properties split ("LABELS unit onnx" instead of "LABELS unit;onnx") leaves
the test without the second label and gives it a property named after it; this check finds both.

usage: check_test_labels.py CTEST BUILD_DIR   (lists the tests with `CTEST --show-only=json-v1` there)
       check_test_labels.py --self-test"""
import json
import re
import subprocess
import sys

PROPERTY_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")  # CTest's properties; the project's labels are lower case


def problems(listing):
    """The problems of a `ctest --show-only=json-v1` listing, one line each."""
    out = []
    for test in listing.get("tests", []):
        name = test["name"]
        if name.endswith("_NOT_BUILT"):  # an executable not built in this tree: ctest fails on it anyway
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        if not props.get("LABELS"):
            out.append(f"{name}: no LABELS (give it one: tests/CMakeLists.txt lists them)")
        for prop in props:
            if not PROPERTY_NAME.match(prop):
                out.append(f"{name}: a property named '{prop}' (a label list split by set_tests_properties? "
                           f"labels: {props.get('LABELS')})")
    return out


def self_test():
    good = {"tests": [{"name": "A.b", "properties": [{"name": "LABELS", "value": ["unit", "onnx"]},
                                                      {"name": "TIMEOUT", "value": 60}]},
                      {"name": "x_NOT_BUILT", "properties": []}]}
    split = {"tests": [{"name": "A.b", "properties": [{"name": "LABELS", "value": ["unit"]},
                                                       {"name": "onnx", "value": "RUN_SERIAL"}]}]}
    unlabelled = {"tests": [{"name": "A.c", "properties": [{"name": "TIMEOUT", "value": 60}]}]}
    assert problems(good) == [], problems(good)
    assert len(problems(split)) == 1 and "property named 'onnx'" in problems(split)[0], problems(split)
    assert len(problems(unlabelled)) == 1 and "no LABELS" in problems(unlabelled)[0], problems(unlabelled)
    print("self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ctest, build = sys.argv[1:]
    listing = json.loads(subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True, capture_output=True,
                                        text=True).stdout)
    found = problems(listing)
    for line in found:
        print(line, file=sys.stderr)
    print(f"{len(listing.get('tests', []))} tests, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
