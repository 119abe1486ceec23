"""Reads tests/python/onnx/expected_failures.txt: the conformance cases hetnet is known to fail.

Format: one Python regex per line (searched in the test name, e.g. ``^test_abs_cpu$``), then
``# reason``; blank lines and lines starting with ``#`` are comments. tools/onnx_coverage.py
rewrites the file from a real run (``--update-expected-failures``).
"""
import os
import re

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_failures.txt")


def Load(path=PATH):
    """[(regex, reason)] in file order; ValueError naming the line for a malformed entry."""
    entries = []
    if not os.path.exists(path):
        return entries
    with open(path) as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            pattern, sep, reason = text.partition(" #")
            pattern, reason = pattern.strip(), reason.strip()
            if not sep or not reason:
                raise ValueError("%s:%d: an expected failure needs '# reason': %r" % (path, number, text))
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError("%s:%d: bad regex %r: %s" % (path, number, pattern, e))
            entries.append((pattern, reason))
    return entries


def ExactNames(pattern):
    """The test names an entry written by Write() names exactly, or None for another regex."""
    for suffix, devices in (("_(cpu|cuda)$", ("_cpu", "_cuda")), ("$", ("",))):
        if pattern.startswith("^") and pattern.endswith(suffix):
            body = pattern[1:-len(suffix)]
            literal = re.sub(r"\\(.)", r"\1", body)
            if re.escape(literal) == body:
                return [literal + d for d in devices]
    return None


def Write(failures, path=PATH, header=""):
    """failures: {test name: reason}. Written grouped by reason (largest group first), one exact
    regex per case, so a case that starts passing shows up as XPASS. A CPU case's entry covers its
    CUDA twin too (the importer refuses an op whatever the device); CUDA cases never ran here."""
    groups = {}
    for name, reason in failures.items():
        groups.setdefault(reason, []).append(name)
    with open(path, "w") as f:
        f.write("# Conformance cases hetnet fails today (tests/python/onnx/test_onnx_conformance.py).\n"
                "# One regex per line (searched in the test name), then '# reason'.\n"
                "# Regenerate from a real run: python3 tools/onnx_coverage.py --update-expected-failures\n")
        if header:
            f.write("".join("# " + line + "\n" for line in header.splitlines()))
        for reason, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            f.write("\n# %s (%d)\n" % (reason, len(names)))
            for name in sorted(names):
                if name.endswith("_cpu"):
                    f.write("^%s_(cpu|cuda)$  # %s\n" % (re.escape(name[:-len("_cpu")]), reason))
                else:
                    f.write("^%s$  # %s\n" % (re.escape(name), reason))
