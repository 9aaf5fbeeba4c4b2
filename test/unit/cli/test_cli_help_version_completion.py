"""The command line as a newcomer meets it: help on every flag, `--version` with the commit, shell
completion, and user mistakes reported in one line without a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from dynamo_operator.__main__ import completion_script, git_commit, main, package_version, version_line
from dynamo_operator.api.v1alpha1 import DynamoGraphDeployment
from dynamo_operator.api.v1alpha1.crd import build_crd
from dynamo_operator.flags import build_parser

REPO = Path(__file__).resolve().parents[3]
EXE = Path(sys.executable).with_name("dynamo-operator")


def every_action(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    """(command, action) of the parser and each subcommand's parser."""
    out = [("", a) for a in parser._actions]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [(name, a) for a in sub._actions]
    return out


@pytest.mark.parametrize(
    ("command", "action"),
    [
        pytest.param(command, action, id=f"{command or 'run'}:{(action.option_strings or [action.dest])[0]}")
        for command, action in every_action(build_parser())
        if not isinstance(action, argparse._SubParsersAction)
    ],
)
def test_every_flag_has_help(command: str, action: argparse.Action) -> None:
    """No flag is undocumented or hidden from --help (the Dynamo flags had no help at all)."""
    assert action.help and action.help != argparse.SUPPRESS, action.option_strings


def test_version_flag_names_the_commit_from_the_environment() -> None:
    """The image passes its build commit through DYNAMO_OPERATOR_COMMIT."""
    line = version_line(environ={"DYNAMO_OPERATOR_COMMIT": "0123456789ab"})
    assert line == f"dynamo-operator {package_version()} (commit 0123456789ab)"


def test_version_flag_without_a_known_commit_prints_the_version_alone(tmp_path: Path) -> None:
    """Outside a checkout and without the variable, no commit is invented."""
    assert git_commit(environ={}, source=tmp_path) == ""
    assert version_line(environ={}, source=tmp_path) == f"dynamo-operator {package_version()}"


def test_version_flag_of_a_checkout_names_its_head() -> None:
    """`dynamo-operator --version` from `make venv`'s editable install: the checkout's HEAD."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    ).stdout.strip()
    if not head:
        pytest.skip("not a git checkout")
    env = {"PATH": "/usr/bin:/bin", "PYTHONSAFEPATH": "1"}
    out = subprocess.run([EXE, "--version"], capture_output=True, text=True, timeout=60, env=env, check=True)
    assert out.stdout.strip() == f"dynamo-operator {package_version()} (commit {head})"


def test_version_flag_exits_zero_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"dynamo-operator {package_version()}")


def complete(script: str, *words: str) -> list[str]:
    """What bash offers after `dynamo-operator <words...>` (the last word is the one being typed)."""
    line = " ".join(["dynamo-operator", *words])
    program = (
        f"{script}\n"
        f"COMP_WORDS=({line}); COMP_CWORD={len(words)}; _dynamo_operator\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.split()


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        pytest.param(("--log-f",), ["--log-format"], id="flag-prefix"),
        pytest.param(("--log-format", ""), ["json", "console"], id="flag-choices"),
        pytest.param(("ren",), ["render"], id="subcommand"),
        pytest.param(("render", "--with-l"), ["--with-lws"], id="subcommand-flag"),
        pytest.param(("completion", "z"), ["zsh"], id="positional-choice"),
    ],
)
def test_bash_completion_offers_flags_subcommands_and_choices(
    words: tuple[str, ...], offered: list[str]
) -> None:
    script = completion_script(build_parser(), "bash")
    assert sorted(complete(script, *words)) == sorted(offered)


def test_completion_subcommand_prints_a_valid_script() -> None:
    """`source <(dynamo-operator completion bash)`: the printed script parses."""
    out = subprocess.run([EXE, "completion", "bash"], capture_output=True, text=True, timeout=60, check=True)
    subprocess.run(["bash", "-n"], input=out.stdout, text=True, timeout=30, check=True)
    assert "complete -o default -F _dynamo_operator dynamo-operator" in out.stdout


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: [\n  b: c\n", id="broken-yaml"),
        pytest.param(
            "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\n"
            "spec:\n  services:\n    W: {componentType: worker, replicas: -1}\n",
            id="invalid-field",
        ),
    ],
)
def test_render_reports_a_users_mistake_in_one_line(tmp_path: Path, text: str) -> None:
    """`dynamo-operator render` of a bad file: exit 1, one line on stderr, no traceback, nothing on stdout."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    done = subprocess.run([EXE, "render", "-f", bad], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("dynamo-operator render: ")


def test_kubectl_get_dgd_shows_state_and_reason() -> None:
    """The DGD CRD's printer columns: Ready, State, Reason (of the Ready condition), Backend, Age."""
    [version] = build_crd(DynamoGraphDeployment)["spec"]["versions"]
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert list(columns) == ["Ready", "State", "Reason", "Backend", "Age"]
    assert columns["State"] == ".status.state"
    assert columns["Reason"] == '.status.conditions[?(@.type=="Ready")].reason'
