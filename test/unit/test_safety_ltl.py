"""LTL parser and printer, LTLf semantics, MONA automata, equivalence; the differential test of
the automata against the direct recursive semantics."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from raider_ros.safety import ltl
from raider_ros.safety.automata import (
    CompileError, Compiler, equivalent, joint_live, parse_mona_output, satisfiable,
)
from raider_ros.safety.ltl import Atom, Binary, Const, LTLSyntaxError, Not, Unary, parse, to_text
from raider_ros.safety.semantics import holds

COMPILER = Compiler()
a, b, c = Atom("a"), Atom("b"), Atom("c")


# --------------------------------------------------------------------------- parser
def test_predicate_atoms_as_the_paper_writes_them():
    f = parse("!agent_at(bathroom) U agent_at(livingroom)")
    assert f == Binary("U", Not(Atom("agent_at", ("bathroom",))), Atom("agent_at", ("livingroom",)))
    assert parse("handover(Medicine_2, Person_1)") == Atom("handover", ("Medicine_2", "Person_1"))


@pytest.mark.parametrize("text, expected", [
    ("a & b | c", "(a & b) | c"),
    ("a | b & c", "a | (b & c)"),
    ("a -> b -> c", "a -> (b -> c)"),            # implication: right associative
    ("a <-> b -> c", "a <-> (b -> c)"),
    ("!a U b", "(!a) U b"),                      # prefix operators bind tightest
    ("a U b U c", "a U (b U c)"),                # until: right associative
    ("a & b U c", "a & (b U c)"),                # until binds tighter than and
    ("G a -> F b", "(G a) -> (F b)"),
    ("X X a", "X (X a)"),
    ("WX a & a", "(WX a) & a"),
    ("F G !a", "F (G (!a))"),
    ("a W b R c", "a W (b R c)"),
    ("a & b & c", "(a & b) & c"),                # and/or: left associative
    ("~a && b || c => d <=> e", "(((!a & b) | c) -> d) <-> e"),
    ("true & FALSE", "true & false"),
])
def test_precedence_and_associativity(text, expected):
    assert parse(text) == parse(expected)


@pytest.mark.parametrize("text", [
    "G (holding(knife) -> agent_at(kitchen))", "!F (open(fridge) & X F open(fridge))",
    "a & (b & c)", "(a -> b) -> c", "!(a U b)", "X !a", "G F a", "(a | b) U c", "true", "WX (a R b)",
])
def test_printing_round_trips(text):
    f = parse(text)
    assert parse(to_text(f)) == f
    assert ltl.normalise(text) == to_text(f)


@pytest.mark.parametrize("text, column, words", [
    ("", 1, "empty formula"),
    ("a &", 4, "expected a formula after '&'"),
    ("(a & b", 7, "expected ')' to close the '(' at column 1"),
    ("a & b)", 6, "')' without a matching '('"),
    ("agent_at(bathroom", 18, "expected ',' or ')'"),
    ("agent_at()", 10, "expected an argument of agent_at"),
    ("a b", 3, "expected an operator"),
    ("G", 2, "expected a formula after 'G'"),
    ("a U", 4, "expected a formula after 'U'"),
    ("U a", 1, "'U' is an operator"),
    ("a # b", 3, "unexpected character '#'"),
    ("!", 2, "expected a formula after '!'"),
])
def test_syntax_errors_name_the_column(text, column, words):
    with pytest.raises(LTLSyntaxError) as err:
        parse(text)
    assert err.value.position == column - 1
    assert str(err.value).startswith(f"column {column}: ")
    assert words in str(err.value)


def test_shape_key_shares_automata_between_formulas_that_differ_in_atoms():
    k1, at1 = ltl.shape_key(parse("G !agent_at(bathroom)"))
    k2, at2 = ltl.shape_key(parse("G !holding(knife)"))
    assert k1 == k2 == "G !p0"
    assert at1 == (Atom("agent_at", ("bathroom",)),) and at2 == (Atom("holding", ("knife",)),)


# --------------------------------------------------------------------------- semantics
def T(*positions: str) -> list[frozenset[Atom]]:
    """A trace from strings of atom letters: T("ab", "", "c")."""
    return [frozenset(Atom(ch) for ch in p) for p in positions]


@pytest.mark.parametrize("formula, trace, expected", [
    ("a", T("a"), True), ("a", T("", "a"), False),
    ("!a", T(""), True),
    ("a & b", T("ab"), True), ("a & b", T("a"), False),
    ("a | b", T("b"), True), ("a -> b", T(""), True), ("a -> b", T("a"), False),
    ("a <-> b", T(""), True), ("a <-> b", T("a"), False),
    ("X a", T("", "a"), True), ("X a", T("a"), False),          # strong next: false at the end
    ("WX a", T("a"), True), ("WX a", T("", ""), False),          # weak next: true at the end
    ("!X a", T("a"), True), ("WX !a", T("a"), True),             # !X a == WX !a on finite traces
    ("F a", T("", "", "a"), True), ("F a", T("", ""), False),
    ("G a", T("a", "a"), True), ("G a", T("a", ""), False),
    ("a U b", T("a", "a", "b"), True), ("a U b", T("a", "a"), False), ("a U b", T("b"), True),
    ("a U b", T("a", "", "b"), False),
    ("a W b", T("a", "a"), True), ("a W b", T("a", ""), False),
    ("a R b", T("b", "b"), True), ("a R b", T("b", "ab", ""), True), ("a R b", T("b", ""), False),
    ("true", T(""), True), ("false", T("abc"), False),
    ("G (a -> F b)", T("a", "", "b"), True), ("G (a -> F b)", T("a", "b", "a"), False),
])
def test_each_operator_on_finite_traces(formula, trace, expected):
    f = parse(formula)
    assert holds(f, trace) is expected
    assert COMPILER.compile(f).accepts_trace(trace) is expected


def test_the_empty_trace_is_not_a_trace():
    with pytest.raises(ValueError):
        holds(parse("a"), [])


# --------------------------------------------------------------------------- automata
def test_dead_and_live_states():
    d = COMPILER.compile("G !a")
    q = d.step(d.initial, d.letter([]))
    assert not d.is_dead(q) and q in d.accepting
    q = d.step(q, d.letter([a]))
    assert d.is_dead(q)
    e = COMPILER.compile("F a")
    q = e.step(e.initial, 0)
    assert q not in e.accepting and not e.is_dead(q)     # an open obligation: pending


def test_unsatisfiable_formulas():
    assert not satisfiable("F a & G !a", COMPILER)
    assert not satisfiable("G false", COMPILER)          # no non-empty trace satisfies it
    assert satisfiable("G a", COMPILER) and satisfiable("a U b", COMPILER)


def test_joint_liveness_of_several_automata():
    ds = [COMPILER.compile(x) for x in ("F a", "G !a")]
    assert joint_live(ds) is False
    ds = [COMPILER.compile(x) for x in ("!b U a", "!a U b")]
    assert joint_live(ds) is True                         # a and b at the same step
    ds = [COMPILER.compile(x) for x in ("!b U a", "!a U b", "G !(a & b)")]
    assert joint_live(ds) is False
    ds = [COMPILER.compile(x) for x in ("G a", "G a")]
    assert joint_live(ds) is True                         # needs one position, then loops


def test_cache_is_keyed_by_shape_and_can_be_switched_off(tmp_path):
    comp = Compiler()
    comp.compile("G !agent_at(bathroom)")
    comp.compile("G !holding(knife)")
    assert comp.compiled == 1 and comp.cache_size() == 1
    cold = Compiler(cache=False)
    cold.compile("G !x")
    cold.compile("G !x")
    assert cold.compiled == 2
    disk = Compiler(cache_dir=tmp_path)
    d1 = disk.compile("a U b")
    again = Compiler(cache_dir=tmp_path)
    d2 = again.compile("c U d")
    assert again.compiled == 0 and d2.transitions == d1.transitions
    assert d2.atoms == (Atom("c"), Atom("d"))


def test_missing_mona_is_a_clear_error():
    with pytest.raises(CompileError, match="MONA binary .* is not installed"):
        Compiler(mona="/nonexistent/mona").compile("a")


def test_unreadable_mona_output_is_an_error():
    with pytest.raises(CompileError, match="cannot read MONA"):
        parse_mona_output("garbage", 0, [])


# --------------------------------------------------------------------------- equivalence
@pytest.mark.parametrize("f, g", [
    ("!(a U b)", "!a R !b"), ("F a", "a | X F a"), ("G a", "!F !a"), ("!X a", "WX !a"),
    ("a W b", "(a U b) | G a"), ("a -> b", "!a | b"), ("G (a & b)", "G a & G b"),
    ("F G a", "G F a"),                            # both: a at the last position (finite traces)
    ("!agent_at(bathroom) U agent_at(livingroom)", "!(agent_at(bathroom) R !agent_at(livingroom)) & true"),
])
def test_equivalent_formulas(f, g):
    assert equivalent(f, g, COMPILER).equivalent


@pytest.mark.parametrize("f, g", [
    ("X a", "WX a"), ("G (a -> F b)", "G (a -> X F b)"), ("a U b", "a W b"), ("F a", "G F a"),
    ("G !agent_at(bathroom)", "G !agent_at(bedroom)"),
])
def test_different_formulas_come_with_a_distinguishing_trace(f, g):
    res = equivalent(f, g, COMPILER)
    assert not res.equivalent and res.counterexample
    ff, gg = parse(f), parse(g)
    trace = list(res.counterexample)
    assert holds(ff, trace) != holds(gg, trace)
    assert holds(ff, trace) == (res.accepted_by == "first")


# --------------------------------------------------------------------------- differential test
ATOMS = (a, b, c)
leaf = st.one_of(st.sampled_from(ATOMS), st.sampled_from(ATOMS), st.booleans().map(Const))
formulas = st.recursive(
    leaf,
    lambda sub: st.one_of(
        sub.map(Not),
        st.tuples(st.sampled_from(ltl.UNARY_OPS), sub).map(lambda t: Unary(*t)),
        st.tuples(st.sampled_from(ltl.BINARY_OPS), sub, sub).map(lambda t: Binary(*t)),
    ),
    max_leaves=6,
)
positions = st.frozensets(st.sampled_from(ATOMS))
traces = st.lists(positions, min_size=1, max_size=7)
PAIRS_PER_FORMULA = 10
DIFF_EXAMPLES = 1000


def test_automata_agree_with_the_direct_semantics_on_10000_formula_trace_pairs():
    pairs, disagreements = [0], []

    @settings(max_examples=DIFF_EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(formulas, st.lists(traces, min_size=PAIRS_PER_FORMULA, max_size=PAIRS_PER_FORMULA))
    def check(f, trs):
        d = COMPILER.compile(f)
        for tr in trs:
            pairs[0] += 1
            q = d.initial
            for k, letter in enumerate(tr):          # every prefix: accepted == satisfied
                q = d.step(q, d.letter(letter))
                if (q in d.accepting) != holds(f, tr[:k + 1]):
                    disagreements.append((to_text(f), tr[:k + 1]))
        assert parse(to_text(f)) == f

    check()
    assert pairs[0] >= 10_000
    assert disagreements == []


def _extensions(atoms, max_len):
    letters = [frozenset(s) for r in range(len(atoms) + 1) for s in itertools.combinations(atoms, r)]
    for n in range(0, max_len + 1):
        yield from itertools.product(letters, repeat=n)


small_formulas = st.recursive(
    st.sampled_from((a, b)),
    lambda sub: st.one_of(sub.map(Not), st.tuples(st.sampled_from(ltl.UNARY_OPS), sub).map(lambda t: Unary(*t)),
                          st.tuples(st.sampled_from(ltl.BINARY_OPS), sub, sub).map(lambda t: Binary(*t))),
    max_leaves=4,
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(small_formulas, st.lists(st.frozensets(st.sampled_from((a, b))), min_size=1, max_size=4))
def test_dead_states_mean_no_continuation_satisfies(f, prefix):
    """The monitor's unsafe/pending/safe verdict against the direct semantics: unsafe exactly when
    no continuation (searched up to the automaton's size, which suffices) satisfies f."""
    d = COMPILER.compile(f)
    assume(d.n_states <= 5)
    q = d.run([d.letter(p) for p in prefix])
    # acceptance, if reachable, is reachable within n_states - 1 letters (state 0 is MONA's start)
    some = any(holds(f, list(prefix) + list(ext)) for ext in _extensions((a, b), d.n_states - 1))
    assert d.is_dead(q) == (not some)
    assert (q in d.accepting) == holds(f, list(prefix))
