"""What each panel shows: the paper's equation (by its LaTeX label) and what to look for.

Plain text only; rendered by :func:`dashboard.ui.teach` in an ``st.expander`` beside each panel.
"""

from __future__ import annotations

PANELS = {
    "metrics": {
        "title": "Eq. (N3) · prequential HL, micro-F1, AP",
        "latex": [
            r"\begin{aligned}\min_{\Phi}\ &\tfrac{\beta}{2}\|O-Y\|_F^2+\tfrac{1-\beta}{2}\|O-SO\|_F^2\\"
            r"&+\gamma\,\mathrm{Tr}(A^\top O)+\tfrac{\alpha}{2}\|\Phi\|_F^2,\quad O=H\Phi\end{aligned}",
            r"\hat y_{tj}=\mathbb{I}\{o_{tj}>0\},\quad o^i_t=h^i_t\,\Phi_{i-1}",
            r"\begin{aligned}\mathrm{HL}&=\tfrac{1}{Nq}\textstyle\sum_{t,j}\mathbb{I}\{\hat y_{tj}\ne g_{tj}\}\\"
            r"\text{micro-F1}&=\frac{2\sum TP}{2\sum TP+\sum FP+\sum FN}\end{aligned}",
        ],
        "text": (
            "Test-then-train: each chunk is first scored with the model learned from the chunks before "
            "it (Eq. (N3), solved exactly — see NOTES §1), against the **ground truth** $G$, never the "
            "noisy $Y$; then it is learned from its noisy labels. Chunk 0 only initialises ($D_0$).\n\n"
            "**Look for:** ELM-NCLD against *ELM (plain)* (β = 1, γ = 0, no noise correction) — the "
            "gap is what the graph term and the unbiased ranking buy under noise. Always compare with "
            "the trivial references: on sparse label sets *all-negative* has a very good Hamming loss. "
            "After a true change (dashed red), ELM-I / ELM-II should recover faster than ELM-O."
        ),
    },
    "cardinality": {
        "title": "Eq. (card) · unbiased label cardinality",
        "latex": [
            r"\widehat{LCard}(D_i)=\frac1N\sum_{t=1}^{N}\sum_{j=1}^{q}\mathbb{I}_{\{y_{tj}=1\}}\,\omega_{t,j}",
            r"\omega_{t,j}=\frac{P_D(y_{tj}\mid x_t)-\rho_{-y_{tj}}}{(1-\rho_+^j-\rho_-^j)\,P_D(y_{tj}\mid x_t)}",
            r"\begin{aligned}&\text{Eq. (NR):}\\ &p(y_{tj}=-1\mid g_{tj}=+1)=\rho_+^j\\"
            r"&p(y_{tj}=+1\mid g_{tj}=-1)=\rho_-^j\end{aligned}",
        ],
        "text": (
            "The learner never sees the true cardinality (black). The observed one (red dotted) is "
            "biased: flips $\\rho_-$ add positives to the many irrelevant labels, so it sits far above "
            "the truth and moves less at a change. Re-weighting every observed positive by $\\omega$ "
            "(Prop. 3) gives an estimate whose expectation is the true cardinality.\n\n"
            "**Look for:** the diamonds (estimate) following the black line, and jumping at a concept "
            "growth / reduction even when the red line barely moves. $P_D$ comes from a per-chunk "
            "probability model, so the estimate is noisy chunk to chunk."
        ),
    },
    "threshold": {
        "title": "Eq. (Hfd) · Hoeffding drift test",
        "latex": [
            r"\varepsilon_i=R_i\sqrt{\frac{\ln(2/\delta)}{2N}}",
            r"\begin{aligned}R_i=\ &\max_t\widehat{LCard}(x^i_t)\\&-\min_t\widehat{LCard}(x^i_t)\end{aligned}",
            r"\begin{aligned}&\text{drift at chunk } i \iff\\ &\big|\widehat{LCard}(D_i)-\widehat{LCard}(D_{i-1})\big|>\varepsilon_i\end{aligned}",
        ],
        "text": (
            "Bars: the change of the estimate between adjacent chunks; dashed: the threshold. A bar "
            "above its threshold is a firing (red ×).\n\n"
            "**Look for:** the threshold shrinks like $1/\\sqrt N$ (larger chunks detect smaller "
            "changes) and grows with the spread $R_i$ of the per-instance estimates. A larger δ lowers "
            "it: more detections, more false alarms. Try δ = 0.5 vs 0.01 on the growth preset."
        ),
    },
    "timeline": {
        "title": "Drift adaptation · ELM-I retrain, ELM-II adjust (Eq. Z_Update)",
        "latex": [
            r"\text{ELM-I: } \Phi_{i-1}:=0,\ P_i \text{ from } D_i \text{ only}",
            r"\text{ELM-II: } \Phi_{i-1}:=\Psi_{i-1}=\Phi_{i-1}+Z_{i-1}",
            r"\begin{aligned}Z_{i+1}=Z_i-P_{i+1}\big(&H_{i+1}^\top R_{i+1}H_{i+1}Z_i\\&-\gamma H_{i+1}^\top A_{i+1}\big)\end{aligned}",
        ],
        "text": (
            "Diamonds: true changes (the chunk holding the change position); shading: the single- / "
            "multi-label regime. A firing is a **detection** if it is the first one from a change's "
            "chunk up to the next change; its delay is counted in chunks. Every other firing is a "
            "**false alarm**. ELM-O only records firings; ELM-I restarts from the current chunk; "
            "ELM-II drops the old ranking statistics ($\\Psi$ solves Eq. (N2), no ranking term) and "
            "keeps the label-scoring ones.\n\n"
            "**Look for:** the detection delay (0 = same chunk) and false alarms before the change; "
            "with 'growth@2500' and chunks of 250 the change sits at the start of chunk 10."
        ),
    },
    "rates": {
        "title": "Flip rates · estimated online when the models are not told them",
        "latex": [
            r"\hat\rho_-=\frac{\#\{t\in B:\ y_t=+1\}}{|B|},\quad B=\text{the 30\,\% of each chunk the model scores lowest}",
            r"\hat\rho_+=\min\Big(1-\operatorname{mean}_{\text{chunks}}\,q_{0.99}\big(P_D(y=1\mid x)\big),\ \hat\rho_-\Big)",
        ],
        "text": (
            "Choose *The models are told: nothing (estimate)* in the sidebar. `rho_-` is the share of "
            "observed positives among the instances the model scored lowest *before* learning the chunk "
            "(they are almost all clean negatives, so their positives are flips); `rho_+` is an anchor "
            "point of the noisy class probability (Liu & Tao 2016), an upper bound, capped at `rho_-`. "
            "**Look for:** `rho_-` settles within a few hundredths; `rho_+` stays rough (it needs "
            "instances that are surely positive). docs/flip-rates.md has the measurements."
        ),
    },
    "summary": {
        "title": "Summary · cumulative metrics and drift scores",
        "latex": [r"\mathrm{GM}=\sqrt{(1-\mathrm{HL})\times\text{micro-F1}}"],
        "text": (
            "Cumulative metrics over every scored chunk (chunk 0 is not scored), total seconds (the "
            "ELM variants share each chunk's hidden layer, graph and P_D; the first in the table pays for them), and "
            "for the ELM-NCLD variants the firings, detected / missed changes, false alarms and mean "
            "delay (chunks). GM is the paper's tuning criterion (see the Sweep page)."
        ),
    },
    "sweep": {
        "title": "Parameter sensitivity · β × γ (the paper's Fig. Sens)",
        "latex": [
            r"\mathrm{GM}=\sqrt{\mathrm{Acc}\times\mathrm{F1}},\quad\mathrm{Acc}=1-\mathrm{HL}",
            r"K=\alpha I+\sum_i H_i^\top R_i H_i,\quad R_i=\beta I+(1-\beta)(I-S_i)^\top(I-S_i)",
            r"o^*_{tj}=\beta\,y_{tj}+(1-\beta)\sum_{n\in\mathcal N(t)}S_{t,n}\,o^*_{nj}\quad\text{(Eq. (P1))}",
        ],
        "text": (
            "β weighs fitting the observed (noisy) labels against agreeing with the graph neighbours "
            "(Eq. (Re), (N2)); γ weighs the unbiased ranking term (Eq. (RL_New)). The paper searches "
            "β ∈ [0.3, 0.8], γ ∈ {0, 2⁻⁸, …, 2⁻³} and reports (0.55, 2⁻⁶).\n\n"
            "**Mind NOTES §1:** the paper's Hessian (Eq. (Gra)) drops a $(1-\\beta)I$ term. This lab "
            "solves the exact objective, where the paper's β = 0.55 corresponds to β' = (2β−1)/β ≈ 0.18 "
            "— so the optimum sits lower here, and there is no collapse at β ≤ 0.5 (that drop is an "
            "artefact of the missing term)."
        ),
    },
}


PRESET_NOTES = {
    "clean vs noisy": "ELM-NCLD against a plain online ELM on flip rates drawn from U[0.2, 0.4]: what noise correction buys.",
    "concept growth": "Single-label instances first, multi-label from instance 2500 (chunk 10): watch the estimate jump and the firings.",
    "concept reduction": "The reverse: multi-label first, single-label from instance 2500.",
    "why beta matters": "β = 1, γ = 0 (no graph, no ranking term) — ELM-O becomes the plain ELM; compare with the Sweep page.",
}
