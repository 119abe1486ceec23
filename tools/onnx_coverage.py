#!/usr/bin/env python3
"""ONNX conformance coverage: runs ONNX's backend test cases over hetnet (the same pytest module
as CI, tests/python/onnx/test_onnx_conformance.py, with the expected-failure list ignored) and
writes docs/onnx_coverage.md: per ONNX op, cases passed / total, and the overall pass rate.

    python3 tools/onnx_coverage.py [--build build] [--update-expected-failures]

A node case counts for the op it tests; model cases are listed by suite. CPU cases only (CUDA
cases skip without a GPU). --update-expected-failures rewrites tests/python/onnx/expected_failures.txt from the run.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_DIR = os.path.join(REPO, "tests", "python", "onnx")
TEST_MODULE = os.path.join(TEST_DIR, "test_onnx_conformance.py")
CATEGORIES = {"OnnxBackendNodeModelTest": "node", "OnnxBackendSimpleModelTest": "simple",
              "OnnxBackendPyTorchConvertedModelTest": "pytorch-converted",
              "OnnxBackendPyTorchOperatorModelTest": "pytorch-operator",
              "OnnxBackendRealModelTest": "real"}
# Failure causes, in the order the table shows them.
CAUSES = ("unsupported", "values", "shape/dtype", "run error")


def RunCases(build_dir, junit_path):
    env = dict(os.environ, HETNET_ONNX_CONFORMANCE_RAW="1",
               PYTHONPATH=os.pathsep.join([os.path.join(build_dir, "python"), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST_MODULE,
               "-k", "not test_expected_failures_list_is_current", "--tb=line", "--junitxml", junit_path]
    start = time.time()
    proc = subprocess.run(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.time() - start
    if not os.path.exists(junit_path) or not ReadResults(junit_path):
        sys.exit("pytest ran no conformance case (exit %d):\n%s" % (proc.returncode, proc.stdout[-4000:]))
    return seconds


def _FirstLine(text, limit=110):
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def Classify(message):
    """(cause, reason) of a failure from its junit message/text."""
    if "UnsupportedError" in message:
        # The importer lists every refused node as "- Op (opset N)" or "- Op (opset N): form".
        refused = re.findall(r"- ([\w:.]+) \(opset (\w+|\?)\)(?:: ([^\n]*))?", message)
        if refused:
            parts = sorted({"%s-%s%s" % (op, opset, " (%s)" % form.strip()[:70] if form else "")
                            for op, opset, form in refused})
            return "unsupported", "importer refuses " + "; ".join(parts)
        return "unsupported", "UnsupportedError: " + _FirstLine(message.split("UnsupportedError:", 1)[1])
    if "Not equal to tolerance" in message or "Arrays are not equal" in message and "Mismatched" in message:
        return "values", "numerics: values differ beyond the case's rtol/atol"
    if "incorrect shape" in message:
        return "shape/dtype", "wrong output shape"
    dtype = re.search(r"ACTUAL: dtype\('(\w+)'\)\s*DESIRED: dtype\('(\w+)'\)", message)
    if dtype:
        return "shape/dtype", "wrong output dtype (%s, expected %s)" % dtype.groups()
    cannot_hold = re.search(r"hetnet tensors cannot hold numpy dtype (\S+)", message)
    if cannot_hold:
        return "unsupported", "input dtype %s not supported by hetnet tensors" % cannot_hold.group(1)
    error = re.search(r"(\w+(?:Error|Exception)): (.*)", message)
    if error:
        return "run error", "%s: %s" % (error.group(1), _FirstLine(error.group(2), 90))
    return "run error", _FirstLine(message) or "failed"


def ReadResults(junit_path):
    """{test name: (category, outcome, cause, reason)}; outcome is passed / failed / skipped."""
    results = {}
    for case in ET.parse(junit_path).getroot().iter("testcase"):
        category = CATEGORIES.get(case.get("classname", "").rsplit(".", 1)[-1])
        if category is None:
            continue
        name = case.get("name")
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if case.find("skipped") is not None:
            results[name] = (category, "skipped", None, (case.find("skipped").get("message") or ""))
        elif problem is not None:
            text = (problem.get("message") or "") + "\n" + (problem.text or "")
            cause, reason = Classify(text)
            results[name] = (category, "failed", cause, reason)
        else:
            results[name] = (category, "passed", None, None)
    return results


def _OpUnderTest(model):
    """The op a one-op node case tests: its node, ignoring the Constant nodes that feed it."""
    ops = sorted({n.op_type for n in model.graph.node})
    if len(ops) > 1 and "Constant" in ops:
        ops.remove("Constant")
    return ops[0] if len(ops) == 1 else "+".join(ops)


def CaseOps():
    """({node case: (op under test, expanded?)}, {model case: sorted op types}); names without the
    device suffix. An expanded case (a function op written out in primitive ops) counts for the
    function op: its base case's op."""
    import onnx
    from onnx.backend.test.loader import load_model_tests
    with warnings.catch_warnings():  # onnx's case generators overflow/divide by zero on purpose
        warnings.simplefilter("ignore", RuntimeWarning)
        node_cases = {case.name: case for case in load_model_tests(kind="node")}
    node_ops = {}
    for name, case in node_cases.items():
        base = name.split("_expanded")[0]
        if base != name and base in node_cases:
            node_ops[name] = (_OpUnderTest(node_cases[base].model), True)
        else:
            node_ops[name] = (_OpUnderTest(case.model), False)
    model_ops = {}
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    for kind in ("simple", "pytorch-converted", "pytorch-operator", "real"):
        for case in load_model_tests(kind=kind):
            path = os.path.join(case.model_dir, "model.onnx") if case.model_dir else \
                os.path.join(light, "light_%s.onnx" % case.model_name)
            if os.path.exists(path):
                model = onnx.load(path, load_external_data=False)
                model_ops[case.name] = sorted({n.op_type for n in model.graph.node})
    return node_ops, model_ops


def _RefusedOutright(op, reason):
    """True when the importer refused the op itself (no converter for its opset), not a form of it."""
    if not reason:
        return False
    name = re.escape(op)
    return (re.search(r"(?:refuses |; )%s-\w+(?! \()" % name, reason) is not None or
            re.search(r"::%s-\w+ \(only the default ONNX domain" % name, reason) is not None)


def _Rate(passed, total):
    return "%.1f%%" % (100.0 * passed / total) if total else "-"


def _Cell(text):
    return str(text).replace("|", "\\|")


def WriteReport(results, case_ops, seconds, path):
    node_ops, model_ops = case_ops
    cpu = {n[:-len("_cpu")]: r for n, r in results.items() if n.endswith("_cpu")}
    per_category = collections.defaultdict(collections.Counter)
    per_op = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    model_failures = []
    for name, (category, outcome, cause, reason) in sorted(cpu.items()):
        if outcome == "skipped":
            per_category[category]["skipped"] += 1
            continue
        per_category[category]["total"] += 1
        per_category[category][outcome] += 1
        if outcome == "failed":
            reasons[reason] += 1
        if category != "node":
            if outcome == "failed":
                model_failures.append((category, name, reason))
            continue
        op, expanded = node_ops.get(name, ("(unknown)", False))
        prefix = "expanded " if expanded else ""
        per_op[op][prefix + "total"] += 1
        per_op[op][prefix + outcome] += 1
        if outcome == "failed" and not expanded:
            per_op[op][cause] += 1
            if _RefusedOutright(op, reason):
                per_op[op]["refused outright"] += 1
    total = sum(c["total"] for c in per_category.values())
    passed = sum(c["passed"] for c in per_category.values())
    node = per_category["node"]
    lines = ["# ONNX conformance coverage", "",
             "Generated by `python3 tools/onnx_coverage.py` (%s) with PyPI onnx %s: ONNX's backend test "
             "cases (`onnx.backend.test.BackendTest`) run through `hetnet.onnx.backend` on CPU, as "
             "`tests/python/onnx/test_onnx_conformance.py` runs them in CI (there, the failing cases are "
             "expected failures listed in `tests/python/onnx/expected_failures.txt`). CUDA cases are not "
             "counted (no GPU here). pytest took %.0f s." % (time.strftime("%Y-%m-%d"), _OnnxVersion(), seconds), "",
             "**Overall: %d of %d cases pass (%s); node cases: %d of %d (%s).**"
             % (passed, total, _Rate(passed, total), node["passed"], node["total"], _Rate(node["passed"], node["total"])),
             "", "| suite | passed | total | rate | skipped |", "|---|---:|---:|---:|---:|"]
    for category in CATEGORIES.values():
        c = per_category.get(category, collections.Counter())
        lines.append("| %s | %d | %d | %s | %d |" % (category, c["passed"], c["total"],
                                                       _Rate(c["passed"], c["total"]), c["skipped"]))
    # An op is claimed when the importer converts it in at least one direct case.
    claimed = {op: c for op, c in per_op.items() if c["total"] > c["refused outright"]}
    claimed_total = sum(c["total"] for c in claimed.values())
    claimed_passed = sum(c["passed"] for c in claimed.values())
    at_goal = sorted(op for op, c in claimed.items() if c["passed"] >= 0.9 * c["total"])
    below_goal = sorted(op for op, c in claimed.items() if c["passed"] < 0.9 * c["total"])
    lines += ["", "Ops the importer converts (in at least one case): %d of %d; their node cases: %d of %d pass (%s). "
              "At 90%% or more of their cases: %d (%s). Below: %d (%s)." % (
                  len(claimed), len(per_op), claimed_passed, claimed_total, _Rate(claimed_passed, claimed_total),
                  len(at_goal), ", ".join(at_goal), len(below_goal),
                  ", ".join("%s %s" % (op, _Rate(claimed[op]["passed"], claimed[op]["total"])) for op in below_goal))]
    failing_ops = sorted(per_op.items(), key=lambda kv: (-(kv[1]["total"] - kv[1]["passed"]), kv[0]))
    lines += ["", "Ops with the most failing node cases: " + ", ".join(
        "%s (%d)" % (op, c["total"] - c["passed"]) for op, c in failing_ops[:20] if c["total"] > c["passed"]) + ".",
        "", "## Per ONNX op (node cases)", "",
        "Each node case counts for the op it tests. *expanded* cases are function ops written out in "
        "primitive ops (they test those primitives, not a converter for the op). Failure causes of the "
        "direct cases: *unsupported* = the importer refuses the op or a form of it (or an input dtype has "
        "no hetnet tensor type); *values* = outputs differ beyond the case's tolerance; *shape/dtype* = "
        "an output has the wrong shape or dtype; *run error* = the imported net fails to run.", "",
        "| op | converted | passed | total | rate | expanded passed / total | " + " | ".join(CAUSES) + " |",
        "|---|---|---:|---:|---:|---:|" + "---:|" * len(CAUSES)]
    for op in sorted(per_op):
        c = per_op[op]
        expanded = "%d / %d" % (c["expanded passed"], c["expanded total"]) if c["expanded total"] else ""
        lines.append("| %s | %s | %d | %d | %s | %s | %s |" % (
            op, "yes" if op in claimed else "no", c["passed"], c["total"], _Rate(c["passed"], c["total"]), expanded,
            " | ".join(str(c[k] or "") for k in CAUSES)))
    lines += ["", "## Failing model cases", "", "| suite | case | ops | reason |", "|---|---|---|---|"]
    for category, name, reason in model_failures:
        lines.append("| %s | %s | %s | %s |" % (category, name, ", ".join(model_ops.get(name, [])), _Cell(reason)))
    lines += ["", "## Failure reasons (all suites)", "", "| reason | cases |", "|---|---:|"]
    for reason, count in reasons.most_common():
        lines.append("| %s | %d |" % (_Cell(reason), count))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return passed, total


def _OnnxVersion():
    import onnx
    return onnx.__version__


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"), help="the build directory")
    parser.add_argument("--output", default=os.path.join(REPO, "docs", "onnx_coverage.md"))
    parser.add_argument("--junit", help="junit XML of an earlier run to reuse; if absent, run and keep it there")
    parser.add_argument("--update-expected-failures", action="store_true",
                        help="rewrite tests/python/onnx/expected_failures.txt from this run")
    args = parser.parse_args()
    seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        junit = args.junit or os.path.join(tmp, "conformance.xml")
        if not os.path.exists(junit):
            seconds = RunCases(os.path.abspath(args.build), junit)
        results = ReadResults(junit)
        if not seconds:  # a reused run: pytest's own time for it
            suite = ET.parse(junit).getroot()
            suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
            seconds = float(suite.get("time", 0))
    passed, total = WriteReport(results, CaseOps(), seconds, args.output)
    print("%d of %d CPU cases pass; wrote %s" % (passed, total, args.output))
    if args.update_expected_failures:
        sys.path.insert(0, TEST_DIR)
        import expected_failures
        failures = {name: reason for name, (_, outcome, _, reason) in results.items() if outcome == "failed"}
        expected_failures.Write(failures)
        print("%d expected failures written to %s" % (len(failures), expected_failures.PATH))


if __name__ == "__main__":
    main()
