// The first-screen answer rule the error page's scripts share (try.js, divisors.js,
// calc.js): the values that pass nearest the user's, either side. One module, so that the
// three never disagree on one page. Pure functions: tests/js/try.test.mjs runs them.

// The divisors of n, ascending.
export function divisors(n) {
  const out = [];
  for (let d = 1; d * d <= n; d++) if (n % d === 0) out.push(d, n / d);
  return [...new Set(out)].sort((a, b) => a - b);
}

// The nearest of sorted `candidates` below and above `current` (both, when it is not one).
export function nearest(candidates, current) {
  const below = candidates.filter((c) => c < current).pop();
  const above = candidates.find((c) => c > current);
  return [below, above].filter((c) => c !== undefined);
}
