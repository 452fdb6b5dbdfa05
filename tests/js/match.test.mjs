// match.js against generator/search/engine.py: the same cases (tests/search_cases.json), the
// corpus and the negatives, through the same index files; every answer must be the same.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { Index } from "../../templates/assets/match.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CASES = JSON.parse(readFileSync(join(REPO, "tests", "search_cases.json"), "utf8"));
const PYTHON = process.env.PYTHON || [join(REPO, ".venv", "bin", "python")].find(existsSync) || "python3";

let out;
let python;
before(() => {
  out = mkdtempSync(join(tmpdir(), "match-js-"));
  execFileSync(PYTHON, [join(REPO, "tests", "js", "parity.py"), out], {
    cwd: REPO,
    // REPO for tests.conftest; the caller's path after it (a worktree's errorkb, not the venv's)
    env: { ...process.env, PYTHONPATH: [REPO, process.env.PYTHONPATH].filter(Boolean).join(":") },
    stdio: ["ignore", "ignore", "inherit"],
  });
  python = JSON.parse(readFileSync(join(out, "python.json"), "utf8"));
});
after(() => rmSync(out, { recursive: true, force: true }));

// An Index that reads the files the site would serve, counting what it fetched.
function index(site) {
  const idx = new Index("/search/index.json", async (url) => {
    idx.fetched += 1;
    const body = readFileSync(join(out, site, url));
    return { json: async () => JSON.parse(body) };
  });
  idx.fetched = 0;
  return idx;
}

const plain = (value) => JSON.parse(JSON.stringify(value)); // null-prototype values as plain

describe("the shared cases", () => {
  for (const [n, c] of CASES.entries()) {
    test(c.name, async () => {
      const results = plain(await index("fixture").search(c.text));
      assert.deepEqual(results, python.fixture[n].results, "match.js and search.py differ");
      if (c.id === null) {
        assert.ok(results.every((r) => r.match === "similar"));
        return;
      }
      const top = results[0];
      assert.deepEqual([top.id, top.match, top.values, top.tied], [c.id, c.match, c.values, c.tied ?? false]);
      if (c.how) assert.equal(top.how, c.how);
    });
  }
});

const R3 = JSON.parse(readFileSync(join(REPO, "tests", "search_r3_cases.json"), "utf8"));

describe("issue #42's cases: the engine chosen, wrappers, quotes, fragments", () => {
  for (const [n, c] of R3.entries()) {
    test(c.name, async () => {
      const results = plain(await index("r3").search(c.text, c.engine ?? null));
      assert.deepEqual(results, python.r3[n], "match.js and search.py differ");
      if (c.id === null) {
        assert.ok(results.every((r) => r.match === "similar"));
        return;
      }
      assert.deepEqual([results[0].id, results[0].match], [c.id, c.match]);
      assert.equal(results[0].followed_by?.id, c.followed_by);
    });
  }
});

const REAL = process.env.ERRORKB_PARITY_FIXTURES_ONLY !== "1"; // tests/js/parity.py

test("the real content: 300 corpus pastes, the negatives and the real pastes answer alike", { skip: !REAL }, async () => {
  const differ = [];
  // At most: index.json, a shard per word, per lead key and per key of the words after an
  // opening value, a page per candidate (openings and holes too).
  const { query } = JSON.parse(readFileSync(join(out, "real", "search", "index.json"), "utf8"));
  const most = 1 + query.words + query.lead_keys + query.hole_keys + query.candidates + query.hedge + query.openings + query.holes;
  for (const want of python.real) {
    const idx = index("real");
    const got = plain(await idx.search(want.text));
    if (!isDeepStrictEqual(got, want.results)) differ.push(want.text.slice(0, 120));
    assert.ok(idx.fetched <= most, `${idx.fetched} files for one query`);
  }
  assert.deepEqual(differ, []);
  const exact = python.real.filter((w) => w.results[0]?.match === "exact").length;
  assert.ok(exact >= 200, `only ${exact} exact answers: the parity check would prove little`);
});

test("the stack fixture: results, their engine and the report's program answer alike", async () => {
  const engines = new Set();
  for (const want of python.stack) {
    const idx = index("stack");
    assert.deepEqual(plain(await idx.search(want.text)), want.results, want.text.slice(0, 120));
    assert.equal(await idx.reportUrl(want.text), want.report, want.text.slice(0, 120));
    if (want.results.length) engines.add(want.results[0].engine);
  }
  assert.deepEqual([...engines].sort(), ["", "sglang", "vllm"]); // the check would prove little else
});

test("the report link carries the paste, as search.py builds it", async () => {
  const paste = "RuntimeError: sprockets & gears / 100% broken\nsecond line";
  const idx = index("fixture");
  const want = python.fixture.find((a) => a.report)?.report;
  assert.ok(want, "the fixture site names its repository");
  const url = new URL(await idx.reportUrl(paste));
  assert.equal(url.origin + url.pathname, new URL(want).origin + new URL(want).pathname);
  assert.match(url.searchParams.get("title"), /^Unknown error: /);
  assert.ok(url.searchParams.get("body").includes(paste));
  for (const answer of python.fixture) {
    assert.equal(await index("fixture").reportUrl(answer.text), answer.report);
  }
});
