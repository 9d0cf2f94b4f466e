# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Federated learning with intermittent clients: three lessons
#
# A classroom notebook (jupytext percent format: open it with Jupyter + jupytext, or run it
# as a plain script). Each lesson shows the statement as a formula, simulates it, and puts
# the measurement next to the theory in one plot.
#
# 1. FedAvg can converge to the wrong model when clients alternate (FedLaAvg, Example 1).
# 2. Correlated availability: CA-Fed's error decomposition, optimisation error + bias.
# 3. FedAU's online weights: estimating $1/p_n$ from participation intervals.

# %%
import matplotlib.pyplot as plt
import numpy as np

from fedtheory.availability import AlternatingBlocks, Bernoulli, TwoStateMarkov
from fedtheory.bounds import cafed, fedau, fedlaavg
from fedtheory.problems import QuadraticProblem
from fedtheory.sim import AverageParticipating, FedAU, FedAvg, FixedWeights, simulate

# %% [markdown]
# ## 1. FedAvg on FedLaAvg's Example 1
#
# Two clients, $f_i(x)=(x-e_i)^2$, optimum $x^*=(e_1+e_2)/2$. Client 1 is available for
# $t_1$ rounds, then client 2 for $t_2$ rounds, periodically. FedAvg's period-end iterate
# converges to $X_B$, not to $x^*$:

# %%
fedlaavg.end_of_period  # noqa: B018  (Jupyter renders the formula)

# %%
e1, e2, t1, t2 = 0.0, 1.0, 9, 1
problem = QuadraticProblem.example1(e1, e2)
gammas = np.array([0.2, 0.05, 0.01])
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for gamma in gammas:
    run = simulate(
        problem,
        AlternatingBlocks(t1, t2),
        FedAvg(AverageParticipating(), lr=float(gamma)),
        rounds=400,
        w0=[3.0],
    )
    (line,) = ax1.plot(run.iterates[0, :, 0], lw=1, label=f"FedAvg, gamma={gamma:g}")
    x_b = fedlaavg.end_of_period.evaluate(e1=e1, e2=e2, gamma=gamma, t1=t1, t2=t2).total
    ax1.axhline(float(x_b), color=line.get_color(), ls="--", lw=0.8)
ax1.axhline((e1 + e2) / 2, color="k", label="optimum x*")
ax1.set(xlabel="round t", ylabel="iterate x_t", title="Unequal blocks (dashed: X_B)")
ax1.legend(fontsize=8)

# Equal blocks: the time average is right, the iterate oscillates with a known amplitude.
tau = 5
grid = np.geomspace(0.002, 0.4, 40)
amplitude = fedlaavg.equal_block_amplitude.evaluate(e1=e1, e2=e2, gamma=grid, tau=tau).total
measured = []
for gamma in gammas:
    x = simulate(
        problem,
        AlternatingBlocks(tau, tau),
        FedAvg(AverageParticipating(), lr=float(gamma)),
        rounds=2 * tau * 400,
    ).iterates[0, :, 0]
    measured.append(abs(x[-1] - x[-1 - tau]))
ax2.loglog(grid, amplitude, label="(1-rho)/(1+rho)|e1-e2|")
ax2.loglog(gammas, measured, "o", label="measured |x_A - x_B|")
ax2.set(xlabel="learning rate gamma", ylabel="amplitude", title=f"Equal blocks, tau={tau}")
ax2.legend(fontsize=8)

# %% [markdown]
# ## 2. CA-Fed: optimisation error plus bias
#
# With availability $\pi$ and server weights $q$, FedAvg minimises
# $F_B=\sum_kp_kF_k$, $p_k\propto\pi_kq_k$. Theorem 1 bounds the error on the target
# objective by an optimisation term and a bias term:

# %%
cafed.theorem1  # noqa: B018  (Jupyter renders the formula)

# %%
quad = QuadraticProblem.random(8, 3, mu=1.0, L=4.0, spread=2.0, noise_std=0.5, seed=0)
process = TwoStateMarkov(np.linspace(0.1, 0.9, 8), 0.8)
weights = FixedWeights(quad.alpha)  # q = alpha: the available clients get more weight
run = simulate(
    quad,
    process,
    FedAvg(weights, local_steps=2, lr=0.05),
    rounds=150,
    replicates=16,
    seed=0,
    w0=np.full(3, 3.0),
)
dec = cafed.decomposition(quad, run.iterates, weights.effective_weights(process.pi))
fig, ax = plt.subplots(figsize=(6, 4))
t = np.arange(dec.measured.shape[1])
ax.semilogy(t, np.median(dec.measured, 0), label="measured F(w_t) - F* (median)")
ax.semilogy(t, np.median(dec.theorem1.total, 0), label="Theorem 1 bound (median)")
ax.semilogy(t, np.median(dec.theorem3.total, 0), label="Theorem 3 bound (median)")
ax.axhline(float(dec.theorem1.terms["bias"].flat[0]), ls=":", label="Theorem 1 bias term")
ax.set(xlabel="round t", ylabel="error (objective units)", title="CA-Fed Theorems 1 and 3")
ax.legend(fontsize=8)
assert np.all(dec.measured <= dec.theorem1.total * (1 + 1e-9))

# %% [markdown]
# ## 3. FedAU's online weights
#
# FedAU does not know the participation probability $p_n$ of client $n$: it uses the mean of
# the observed participation intervals, each cut off at $K$ (Algorithm 2). An interval is
# $\min(G, K)$ with $G\sim\mathrm{Geom}(p)$, whose mean is

# %%
fedau.cutoff_mean  # noqa: B018  (Jupyter renders the formula)

# %% [markdown]
# so $p\,\omega_t\to1-(1-p)^K$: nearly unbiased for large $K$. The proof of Theorem 3 bounds
# the per-round weight error $\mathbb E[(p\,\omega_t-1)^2]$ by

# %%
fedau.theorem3_per_round  # noqa: B018  (Jupyter renders the formula)

# %%
p_n, cutoff, rounds = np.array([0.05, 0.2, 0.6]), 10, 80
mask = Bernoulli(p_n).sample(rounds, replicates=4000, seed=0)  # [R, T, N]
rule = FedAU(cutoff=cutoff)
state = rule.init(mask.shape[0], mask.shape[2])
error = np.empty((rounds, p_n.size))  # Monte-Carlo E[(p omega_t - 1)^2]
for t in range(rounds):
    error[t] = ((p_n * state.omega.numpy() - 1.0) ** 2).mean(axis=0)
    state = rule.update(state, mask[:, t])
t = np.arange(1, rounds)
fig, ax = plt.subplots(figsize=(6, 4))
for i, p in enumerate(p_n):
    bound = fedau.theorem3_per_round.evaluate(p=p, K=cutoff, t=t).total
    exact = fedau.weight_error_exact(p, cutoff, rounds)
    ax.loglog(t, error[1:, i], color=f"C{i}", label=f"Monte Carlo, p={p:g}")
    ax.loglog(t, exact[1:], ":", color=f"C{i}", label=f"exact, p={p:g}")
    ax.loglog(t, bound, "--", color=f"C{i}", label=f"Theorem 3 bound, p={p:g}")
ax.set(xlabel="round t", ylabel="E[(p omega_t - 1)^2]", title=f"FedAU weights, K={cutoff}")
ax.legend(fontsize=7)
