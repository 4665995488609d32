"""raider_demo's --task: all, or a comma-separated list of tasks; an unknown one is named."""
import pytest

from raider_ros.cli import demo


@pytest.mark.parametrize("arg, named", [("assistive,cooking", "'cooking'"), (",", "(none given)")])
def test_an_unknown_task_is_named_and_nothing_runs(arg, named, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(demo, "_run", lambda *a, **k: ran.append(a) or True)
    monkeypatch.setattr(demo, "_learning", lambda *a, **k: ran.append(a) or True)
    with pytest.raises(SystemExit) as exc:
        demo.main(["--task", arg])
    assert exc.value.code == 2 and named in capsys.readouterr().err and not ran


def test_tasks_run_in_the_demo_order(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(demo, "_run", lambda key, *a: ran.append(key) or True)
    monkeypatch.setattr(demo, "_learning", lambda *a: ran.append(demo.LEARNING) or True)
    assert demo.main(["--task", "learning, assistive"]) == 0
    assert ran == ["assistive", "learning"] and "Demo succeeded." in capsys.readouterr().out
