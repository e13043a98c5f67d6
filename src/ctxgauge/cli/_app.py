"""The command app: one Typer app, one module per sub-command registered on it, and the root options.

A sub-command's module is imported when the command is looked up, not when the app is: `ctxgauge
determinism ...` imports the determinism module alone (every module cost ~0.1 s of start-up per process,
paid by each of a suite's runs). Listing the commands (`--help`, an unknown command's suggestions) imports
them all, in the order they were always registered, so the list and every help text are unchanged.

Imported by `ctxgauge.cli.main` inside its guard, so that an exception raised while importing any of it (a
dependency broken under the app) is reported as every crash is (exit 70, one line naming a log file).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Optional

import typer
import typer.main
from typer.core import TyperGroup
from typer.exceptions import TyperException

from ctxgauge._output import EnvironmentProblem, environment_reason
from ctxgauge.cli._common import crash, fail
from ctxgauge.cli._text import resume_command
from ctxgauge.errors import EXIT_UNFINISHED, EngineError, UserError


class _Root(TyperGroup):
    """The root command: an unexpected exception in any sub-command is a bug, so it becomes `crash` (exit 70,
    its traceback in a log file named in one line) here, once for every command and for `CliRunner` alike.
    A usage error (an unknown option, a missing argument, a value out of range) becomes the one line every
    user error is, exit 2 (Typer's own is a usage line, a hint and a boxed message). What the user can mend,
    and Typer's own exits, pass on unchanged."""

    def get_command(self, ctx, name):
        if name not in self.commands:
            self._load(module_of(name))  # an unknown name loads every module: the suggestions read them all
        return self.commands.get(name)

    def list_commands(self, ctx):
        self._load(None)
        return list(self.commands)

    def _load(self, module: str | None) -> None:
        """Register `module`'s commands (None: every module's, in MODULES' order) on a Typer of the root's
        settings, and add the click commands Typer builds from it: the objects the whole app built before."""
        loaded = self.__dict__.setdefault("_loaded", set())
        wanted = [m for m in (MODULES if module is None else (module,)) if m not in loaded]
        if not wanted:
            return
        try:
            sub = typer.Typer(**_SETTINGS)
            for name in MODULES if module is None else wanted:
                importlib.import_module(f"ctxgauge.cli.{name}").register(sub)
            _unwrap_help(sub)
            built = typer.main.get_group(sub).commands
        except Exception as exc:  # a module that fails to import is a bug, reported as every crash is
            crash(exc)
        # Commands first, then groups, each in MODULES' order (Typer's own order), already built ones kept.
        self.commands = {n: self.commands.get(n, c) for n, c in built.items()} if module is None else \
            {**self.commands, **built}
        loaded.update(wanted)

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)  # the root's own options: `ctxgauge --bogus`
        except Exception as exc:
            if _is_usage_error(exc):
                _usage_line(exc)
            raise

    def make_context(self, info_name, args, parent=None, **extra):
        # The arguments as given, for the one `--resume` command an environment error prints.
        self.__dict__["_argv"] = list(args)
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (UserError, EngineError, typer.Exit, typer.Abort):
            raise
        except BrokenPipeError:
            raise  # a closed stdout (`ctxgauge ... | head`) is the reader's choice, not a bug: Click ends quietly
        except Exception as exc:
            if _is_usage_error(exc):
                _usage_line(exc)
            if isinstance(exc, TyperException):
                raise
            # The user's environment (a full disk, a read-only or wrong-type target) is never a bug: one line,
            # exit 2 before a run is recorded, exit 6 with the `--resume` command after (`ctxgauge._output`).
            if isinstance(exc, EnvironmentProblem):
                fail(f"{exc.reason}; the run is recorded as unfinished in {exc.run_dir}; continue it with: "
                     f"{resume_command(self.__dict__.get('_argv', []), exc.run_dir)}", code=EXIT_UNFINISHED)
            reason = environment_reason(exc)
            if reason is not None:
                fail(f"{reason}; nothing was written; free space, or choose a path you can write", code=2)
            crash(exc)


def _is_usage_error(exc: BaseException) -> bool:
    # By name: Typer vendors click (typer._click) from 0.2x on, and raises click's own before; either way
    # UsageError and its subclasses (BadParameter, MissingParameter, NoSuchOption). Not NoArgsIsHelpError:
    # `ctxgauge replay` alone shows the command's help, as it should.
    names = {c.__name__ for c in type(exc).__mro__}
    return "UsageError" in names and "NoArgsIsHelpError" not in names


def _usage_line(exc) -> None:
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "ctxgauge"
    fail(f"{exc.format_message().rstrip('.')}; see '{command} --help'", code=getattr(exc, "exit_code", 2))


# Every sub-command module (ctxgauge.cli.NAME, each with `register(app)`), in the order they register, which is
# the order `--help` lists their commands in (one string: a suite's name is a literal in its own modules only).
MODULES = tuple("query engines check demo determinism fingerprint qa battery replay cases report export runs cache"
                .split())
# The commands not named after their module (tests/cli/test_lazy_commands.py checks every name).
_OTHER_NAMES = {"compare": "fingerprint", "sign": "fingerprint", "verify": "fingerprint", "keygen": "fingerprint"}


def module_of(command: str) -> str | None:
    """The module that registers `command`; None for a name no module registers."""
    return _OTHER_NAMES.get(command, command if command in MODULES else None)


# The settings Typer builds commands with (the same for the root and for the Typer the modules register on).
_SETTINGS = {"add_completion": False, "pretty_exceptions_enable": False}

app = typer.Typer(
    cls=_Root,
    name="ctxgauge",
    help="Measure AI context engines: is it right, is it the same every time, does it help a model answer.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    **_SETTINGS,
)


def _unwrap_help(typer_app: typer.Typer) -> None:
    """Each command's help from its docstring with every paragraph on one line. Typer keeps a docstring's
    single line breaks in the commands panel of `--help` and in every paragraph after the first on the
    command's own page, so a docstring wrapped at the source's width showed as ragged half-lines there."""
    import inspect

    for info in typer_app.registered_commands:
        if info.help is None and info.callback is not None and info.callback.__doc__:
            paragraphs = inspect.cleandoc(info.callback.__doc__).split("\n\n")
            info.help = "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)
    for group in typer_app.registered_groups:
        _unwrap_help(group.typer_instance)


def _print_version(value: bool) -> None:
    # A parameter callback runs while the options are parsed, before Typer asks for a sub-command: in the
    # group callback itself, `ctxgauge --version` stopped at "Missing command." (exit 2).
    if value:
        import ctxgauge

        typer.echo(ctxgauge.__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version, expose_value=False),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="The work cache's directory (per-file tokens, parses, embeddings shared across runs; default: CTXGAUGE_CACHE, else the user's cache directory)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Read and write no work cache: every file is read, tokenised and embedded again."),
) -> None:
    # The choice travels in the environment so worker processes a command starts make the same one.
    if no_cache:
        os.environ["CTXGAUGE_CACHE"] = "off"
    elif cache_dir is not None:
        os.environ["CTXGAUGE_CACHE"] = str(cache_dir.expanduser().absolute())
