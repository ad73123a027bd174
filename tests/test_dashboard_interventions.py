"""The sidebar's drift schedule with noise changes (issue 38 item 3): a row per change, a factor box for a noise
change, read back into the settings and the link."""

from __future__ import annotations


def test_the_sidebar_shows_a_noise_change_as_a_row_with_its_factor_and_reads_it_back():
    from tests.apptest import open_app

    at = open_app({"schedule": "reduction@1000, noise@2500x1.5", "noise": "missing"}, timeout=90)
    assert at.session_state["ctx"].cfg.schedule == "reduction@1000, noise@2500x1.5" and at.session_state["ctx"].ok
    kinds = [s.value for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")]
    factors = [n for n in at.number_input if n.key and n.key.startswith("w_sched_factor_")]
    assert kinds == ["reduction", "noise"] and [f.value for f in factors] == [1.5]
    factors[0].set_value(3.0).run()  # 0.35 x 3 >= 1: refused under the schedule
    assert any("would give flip rates with ρ+ + ρ− up to 1.05" in e.value.replace("\\", "")
               for e in at.error), [e.value for e in at.error]
    [n for n in at.number_input if n.key and n.key.startswith("w_sched_factor_")][0].set_value(0.0).run()
    assert at.session_state["ctx"].cfg.schedule == "reduction@1000, noise@2500x0" and at.session_state["ctx"].ok
    assert at.query_params["schedule"] == "reduction@1000, noise@2500x0"
