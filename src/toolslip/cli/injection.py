"""``toolslip injection [SUITE TASK]``: play one prompt-injection scenario and show every gate decision.

Without arguments it lists the suites, their tasks and their attacks. The approver is simulated: an
attentive user who approves exactly the actions the task asked for.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Literal

from ..core.errors import ConfigError
from . import EXIT_OK, UsageError
from .render import Renderer

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("injection", help="play a prompt-injection scenario and show the gate's decisions")
    p.add_argument("suite", nargs="?", help="issues, bank, mail or chat (omit to list everything)")
    p.add_argument("task", nargs="?", help="a benign task of the suite")
    p.add_argument("--attack", help="plant this attack in the suite's third-party data")
    p.add_argument("--phrasing", default="system", help="how the attack addresses the model (default: system)")
    p.add_argument("--model", choices=("honest", "gullible"), help="default: gullible with --attack, else honest")
    p.add_argument(
        "--defence",
        default="gate+approver",
        choices=("none", "spotlight", "gate+approver", "gate+nohuman"),
        help="default: gate+approver",
    )
    p.add_argument("--code", action="store_true", help="code mode: the model's calls go out as programs")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..testing.scenarios import SUITES, suite
    from ..testing.scenarios.harness import PHRASINGS, run_case

    if args.suite is None:
        for s in SUITES.values():
            print(f"{s.name}: {s.description}")
            print(f"  tasks:   {', '.join(t.id for t in s.tasks)}")
            print(f"  attacks: {', '.join(i.id for i in s.injections)}")
        print(f"phrasings: {', '.join(PHRASINGS)}")
        return EXIT_OK
    try:  # a name the suites do not have is a usage error here (the library's ConfigError names the choices)
        chosen = suite(args.suite)
        task = chosen.task(args.task) if args.task is not None else None
        attack = chosen.injection(args.attack) if args.attack and args.attack.strip() else None
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if task is None:
        raise UsageError(f"name a task of suite {chosen.name!r}: {', '.join(t.id for t in chosen.tasks)}")
    if args.phrasing not in PHRASINGS:
        raise UsageError(f"unknown phrasing {args.phrasing!r}; choose one of: {', '.join(PHRASINGS)}")
    if args.attack is not None and not args.attack.strip():
        raise UsageError("--attack is empty; name one of the suite's attacks (run `toolslip injection` to list them)")
    model: Literal["honest", "gullible"] = args.model or ("gullible" if attack else "honest")
    print(
        f"user: {task.prompt}\nmodel: {model}, defence: {args.defence}" + (f", attack: {attack.id}" if attack else "")
    )
    case = asyncio.run(
        run_case(
            chosen,
            task,
            injection=attack,
            phrasing=args.phrasing,
            model=model,
            defence=args.defence,
            on_event=Renderer(sys.stdout),
            mode="code" if args.code else "tool",
        )
    )
    print(f"\n{case.result.output}" if case.result.output else "")
    print(f"task completed: {'yes' if case.utility else 'no'}; approval prompts: {case.prompts}", end="")
    if attack is not None:
        reached = "YES" if case.attacked else "no"
        print(f"; attack seen: {'yes' if case.seen else 'no'}; attacker's goal reached: {reached}", end="")
    print()
    return EXIT_OK
