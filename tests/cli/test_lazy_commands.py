"""Sub-command modules are imported when their command is looked up: the commands, their order and every help
text are what the whole app registered at once gave, and a command imports its own module alone."""

from __future__ import annotations

import importlib
import subprocess
import sys

import typer
import typer.main
from typer.testing import CliRunner

import ctxgauge.cli._app as app_module
from ctxgauge.cli import app


# The modules in the order the app registered them up front (before the commands were loaded lazily).
EAGER_ORDER = tuple("query engines check demo determinism fingerprint qa battery replay cases report export runs "
                    "cache".split())


def _eager_app():
    """The app as it was before: every module registered on the app up front."""
    eager = typer.Typer(name="ctxgauge", help=app.info.help, no_args_is_help=True,
                        context_settings={"help_option_names": ["-h", "--help"]}, **app_module._SETTINGS)
    eager.registered_callback = app.registered_callback
    for name in EAGER_ORDER:
        importlib.import_module(f"ctxgauge.cli.{name}").register(eager)
    app_module._unwrap_help(eager)
    return eager


def _paths(group, prefix=()):
    for name in group.list_commands(None):
        sub = group.get_command(None, name)
        yield (*prefix, name)
        if hasattr(sub, "list_commands"):
            yield from _paths(sub, (*prefix, name))


def test_the_command_list_and_every_help_text_are_those_of_the_eager_app():
    eager = _eager_app()
    assert typer.main.get_command(app).commands == {}  # nothing imported before a command is looked up
    paths = list(_paths(typer.main.get_command(eager)))
    assert list(_paths(typer.main.get_command(app))) == paths
    assert len(paths) > 20 and ("qa", "run") in paths and ("determinism",) in paths
    for path in [(), *paths]:
        got = [CliRunner().invoke(root, [*path, "--help"], terminal_width=120) for root in (eager, app)]
        assert got[0].exit_code == got[1].exit_code == 0, (path, got[1].output)
        assert got[0].output == got[1].output, path
    # an unknown command still suggests from every command
    r = CliRunner().invoke(app, ["determ"])
    assert r.exit_code == 2 and "'determinism'" in r.output


def test_each_command_name_maps_to_the_module_that_registers_it():
    for name in app_module.MODULES:
        one = typer.Typer(**app_module._SETTINGS)
        one.callback()(lambda: None)
        importlib.import_module(f"ctxgauge.cli.{name}").register(one)
        for command in typer.main.get_command(one).commands:
            assert app_module.module_of(command) == name, command
    assert app_module.module_of("nosuch") is None


def test_a_command_imports_its_own_module_alone():
    code = ("import sys\nfrom ctxgauge.cli import app\ntry:\n    app(['determinism', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('ctxgauge.cli.') and not m[13:].startswith('_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['ctxgauge.cli.determinism']"
