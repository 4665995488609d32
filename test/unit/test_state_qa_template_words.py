"""The truthfulness scorer does not take the answerer's own template words for invented names:
the words come from the template data (answers.yaml, facts.yaml, modules.yaml), so every
template, wherever it stands in an answer (after "|", after an age suffix "(robot body, 7 s ago)"), passes - and a name
no summary holds is still caught."""
from __future__ import annotations

import re

from raider_ros.state_qa.evaluation import invented_names, template_words, truthful
from raider_ros.state_qa.rules import fill, load_answer_texts, load_fact_templates
from raider_ros.state_qa.summary import StateSummary

SUMMARY = StateSummary("issue_detector", 10.0, "The path to Counter_1 is blocked by Chair_1.",
                       (("explanation", "The path to Counter_1 is blocked by Chair_1."),))


def _filled(template: str) -> str:
    return re.sub(r"\{[a-z_]+\}", "thing", template)


def test_every_template_mid_sentence_names_nothing():
    texts = list(load_answer_texts().values()) + [t.say for t in load_fact_templates().values()]
    assert any(re.search(r"(?<!^)\b[A-Z][a-z]", t) or t[:1].isupper() for t in texts)
    for t in texts:
        # after "|" and after a suffix "(module, age)", where the scorer sees no start of a sentence
        for answer in (f'skills: a | {_filled(t)}', f'I hold Chair_1. (robot body, 7 s ago) {_filled(t)}'):
            assert invented_names(answer, [SUMMARY]) == [], (t, answer)


def test_earlier_after_an_age_suffix_is_the_template_word_not_a_name():
    answer = ('My check found: blocked. (issue detector, 3 s ago) Earlier (12 s ago), my issue detector '
              'reported: The path to Counter_1 is blocked by Chair_1.')
    assert invented_names(answer, [SUMMARY]) == []
    assert truthful(answer, expected=["Chair_1"], summaries=[SUMMARY]).truthful
    assert "earlier" in template_words() and "reported" in template_words()


def test_a_name_in_no_summary_is_still_invented():
    answer = "skills: a | Earlier (12 s ago), my dialogue reported: it was Zorblax who took Chair_1."
    assert invented_names(answer, [SUMMARY]) == ["Zorblax"]
    assert not truthful(answer, expected=["Chair_1"], summaries=[SUMMARY]).truthful
