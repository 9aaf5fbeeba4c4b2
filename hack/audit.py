#!/usr/bin/env python3
"""`make audit`: known advisories against every pin in constraints.txt, from PyPI's vulnerability data.

    hack/audit.py [constraints.txt]

pip-audit reads each pin's advisories from PyPI's per-release JSON. An index that does not serve that
endpoint makes pip-audit *skip* the pin and, without --strict, still report "No known vulnerabilities
found": a silent pass. So every skipped pin gets a second look here: when the pin is the project's
newest release, PyPI's project JSON lists that release's advisories, and those are used; otherwise the
pin stays unaudited.

Exit codes (CI reads them, .ci/run):
  0  every pin audited, no known advisory;
  1  a known advisory affects a pin (listed with its fixed versions): fix it;
  2  the audit itself could not run (pip-audit missing or crashed);
  3  no advisory found, but some pins could not be audited (listed, with why): not a pass.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT_JSON = "https://pypi.org/pypi/{name}/json"
TIMEOUT = 60  # seconds per PyPI request


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line):
            out[canonical(match[1])] = match[2]
    return out


def run_pip_audit(constraints: Path) -> list[dict[str, object]]:
    """pip-audit's per-dependency results (JSON format); exits 2 when it did not produce them."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "audit.json"
        argv = [
            sys.executable, "-m", "pip_audit", "--requirement", str(constraints), "--no-deps",
            "--disable-pip", "--vulnerability-service", "pypi", "--progress-spinner", "off",
            "--format", "json", "--output", str(report),
        ]  # fmt: skip
        # Its own summary is not shown: "No known vulnerabilities found" is printed even when it
        # skipped every pin. Its output is shown only when it failed.
        done = subprocess.run(
            argv, env={**os.environ, "PYTHONSAFEPATH": "1"}, capture_output=True, text=True, check=False
        )
        if done.returncode not in (0, 1) or not report.exists():
            print(done.stdout + done.stderr, file=sys.stderr)
            print(f"audit: FAILED, pip-audit exited {done.returncode} without a report", file=sys.stderr)
            sys.exit(2)
        deps: list[dict[str, object]] = json.loads(report.read_text())["dependencies"]
    return deps


def latest_release_advisories(name: str, version: str) -> tuple[list[dict[str, object]] | None, str]:
    """Advisories of `name==version` from the project JSON when it is the newest release, else None
    and why not."""
    try:
        with urllib.request.urlopen(PROJECT_JSON.format(name=name), timeout=TIMEOUT) as response:
            doc = json.load(response)
    except (urllib.error.URLError, TimeoutError, ValueError) as err:
        return None, f"PyPI project data unreachable ({err})"
    newest = str(doc.get("info", {}).get("version"))
    if newest != version:
        return None, f"per-release data not served and {version} is not the newest release ({newest})"
    return [v for v in doc.get("vulnerabilities") or [] if not v.get("withdrawn")], ""


def main(argv: list[str]) -> int:
    constraints = Path(argv[1] if len(argv) > 1 else ROOT / "constraints.txt").resolve()
    pinned = pins(constraints)
    findings: list[str] = []
    unaudited: list[str] = []
    via_project = 0
    for dep in run_pip_audit(constraints):
        name = canonical(str(dep["name"]))
        version = str(dep.get("version") or pinned.get(name, "?"))
        if "skip_reason" in dep:
            vulns, why = latest_release_advisories(name, version)
            if vulns is None:
                unaudited.append(f"{name}=={version}: {why}")
                continue
            via_project += 1
            findings += [f"{name}=={version}: {v['id']} fixed in {v.get('fixed_in') or '?'}" for v in vulns]
        else:
            vulns_list = dep.get("vulns") or []
            assert isinstance(vulns_list, list)
            findings += [
                f"{name}=={version}: {v['id']} fixed in {v.get('fix_versions') or '?'}" for v in vulns_list
            ]
    audited = len(pinned) - len(unaudited)
    print(
        f"audit: {audited} of {len(pinned)} pins audited ({via_project} from the newest release's data), "
        f"{len(findings)} known advisories",
        file=sys.stderr,
    )
    if findings:
        print("audit: FAILED, known advisories:\n  " + "\n  ".join(findings), file=sys.stderr)
        return 1
    if unaudited:
        print(
            f"audit: INCOMPLETE, {len(unaudited)} pins could not be audited (not a pass):\n  "
            + "\n  ".join(unaudited),
            file=sys.stderr,
        )
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
