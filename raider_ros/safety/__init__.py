"""Safety Chip: natural-language constraints as LTLf, a runtime monitor over the symbolic world
state, pruning of unsafe actions and the material for corrective re-prompting (ROS-free).

Modules (docs/safety.md has the semantics and figures):

* :mod:`.ltl` -- formulas: ``parse``, ``to_text``, ``normalise``, ``atoms``; ``LTLSyntaxError``.
* :mod:`.semantics` -- ``holds(formula, trace)``: direct LTLf semantics (the test reference).
* :mod:`.automata` -- ``Compiler`` (MONA via ltlf2dfa, cached), ``DFA``, ``equivalent``,
  ``satisfiable``, ``joint_live``.
* :mod:`.predicates` -- ``SymbolicState`` (from a Scene, ``SimWorld.truth()`` or a scene-graph
  snapshot), ``evaluate``, ``check_atom``, ``resolve_action``, ``predict``.
* :mod:`.monitor` -- ``SafetyMonitor`` (add / remove / constraints / reset / check_action /
  check_plan / follow), ``CheckResult``, ``PlanCheck``, ``corrective_prompt``.
* :mod:`.translate` -- ``RulesTranslator`` ("rules (no LLM)"), ``LLMTranslator``,
  ``ChainTranslator``, ``canonical``; ``TranslationError``.
* :mod:`.english` -- ``to_english(formula)``.
* :mod:`.benchmark` -- the ``raider-safety/1`` loader and the pure-core runner.
"""
from .automata import CompileError, Compiler, equivalent, satisfiable
from .english import to_english
from .ltl import LTLError, LTLSyntaxError, normalise, parse, to_text
from .monitor import (
    PENDING, SAFE, UNSAFE, CheckResult, Constraint, ConstraintError, NoStateError, PlanCheck, SafetyMonitor,
    UnsatisfiableError, corrective_prompt,
)
from .predicates import ActionError, PredicateError, SymbolicState, predict, resolve_action
from .translate import ChainTranslator, LLMTranslator, RulesTranslator, Translation, TranslationError

__all__ = [
    "ActionError", "ChainTranslator", "CheckResult", "CompileError", "Compiler", "Constraint", "ConstraintError",
    "LLMTranslator", "LTLError", "LTLSyntaxError", "NoStateError", "PENDING", "PlanCheck", "PredicateError",
    "RulesTranslator", "SAFE", "SafetyMonitor", "SymbolicState", "Translation", "TranslationError", "UNSAFE",
    "UnsatisfiableError", "corrective_prompt", "equivalent", "normalise", "parse", "predict", "resolve_action",
    "satisfiable", "to_english", "to_text",
]
