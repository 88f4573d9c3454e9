"""The four serving metrics: TTFT, TPOT, throughput and cost, and how they add up for one request.

- TTFT (time to first token): the wait before the first output token; prefill plus queueing.
- TPOT (time per output token): the gap between later tokens; one decode step.
- Throughput: output tokens per second over all requests served at once. Each of B concurrent requests
  gets one token per decode step, so throughput = B / TPOT.
- Cost: GPU rental per hour spread over the tokens made in that hour.

End-to-end latency counts TPOT once per output token: e2e = TTFT + TPOT × N (the reference lessons'
convention: 200 ms + 25 ms × 500 = 12.7 s). Strictly the first token arrives with TTFT, so only N − 1
gaps follow; the convention overstates by one TPOT, under 0.2% at N = 500.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.physics.validate import check_int, check_positive

SECONDS_PER_HOUR = 3600
TOKENS_PER_MILLION = 1_000_000
MAX_OUTPUT_TOKENS = 10_000_000
MAX_CONCURRENT = 1_000_000
MAX_CALLS = 1_000_000


@dataclass(frozen=True)
class Request:
    """One request's timeline: TTFT, then N output tokens at TPOT each."""

    ttft_s: float
    tpot_s: float
    output_tokens: int

    @property
    def decode_s(self) -> float:
        """Time spent producing output tokens after the first wait: TPOT × N."""
        return self.tpot_s * self.output_tokens

    @property
    def e2e_s(self) -> float:
        """End-to-end latency: TTFT + TPOT × N."""
        return self.ttft_s + self.decode_s

    @property
    def ttft_share(self) -> float:
        """Fraction of the end-to-end latency spent waiting for the first token."""
        return self.ttft_s / self.e2e_s

    @property
    def tpot_share(self) -> float:
        """Fraction of the end-to-end latency spent on TPOT × N."""
        return self.decode_s / self.e2e_s

    @property
    def stream_tokens_per_s(self) -> float:
        """The speed at which one reader sees tokens arrive once they start: 1 / TPOT."""
        return 1 / self.tpot_s


def request(ttft_s: float, tpot_s: float, output_tokens: int) -> Request:
    """A validated Request (each argument checked, ValueError naming the bad one)."""
    return Request(
        ttft_s=check_positive("ttft_s", ttft_s),
        tpot_s=check_positive("tpot_s", tpot_s),
        output_tokens=check_int("output_tokens", output_tokens, 1, MAX_OUTPUT_TOKENS),
    )


def chain_s(r: Request, calls: int) -> float:
    """Wall time of `calls` requests made one after another (an agent waits for each answer): calls × e2e."""
    return check_int("calls", calls, 1, MAX_CALLS) * r.e2e_s


def throughput_tokens_per_s(concurrent: int, tpot_s: float) -> float:
    """Output tokens per second over `concurrent` requests decoded together: one token each per TPOT."""
    return check_int("concurrent", concurrent, 1, MAX_CONCURRENT) / check_positive("tpot_s", tpot_s)


def cost_per_million_tokens(dollars_per_hour: float, tokens_per_s: float) -> float:
    """Dollars per million output tokens: $/h ÷ (tokens/s × 3600 s/h) × 1e6."""
    per_hour = check_positive("tokens_per_s", tokens_per_s) * SECONDS_PER_HOUR
    return check_positive("dollars_per_hour", dollars_per_hour) / per_hour * TOKENS_PER_MILLION
