// Tier-1 search: generator/search.py step for step, and its regular expressions from index.json
// (tests/search_cases.json runs through both).

const SPACE = /[ \t\n\r\f\v\u00a0\u2028\u2029]+/g;
const WORD = /[A-Za-z0-9]+/g;
const TRACEBACK = "Traceback (most recent call last):";
const has = Object.hasOwn;

const squash = (text) => text.replace(SPACE, " ").replace(/^ | $/g, "");

const words = (text) =>
  [...text.matchAll(WORD)].map((m) => m[0]).filter((w) => w.length > 1 && !/^[0-9]+$/.test(w))
    .map((w) => w.toLowerCase());

function compile(rules) {
  const re = (src, end = "") => new RegExp(`^(?:${src})${end}`);
  const types = Object.entries(rules.types);
  return {
    prefix: re(rules.prefix),
    exception: re(rules.exception),
    noise: re(rules.noise, "$"),
    pydantic: re(rules.pydantic),
    rankSuffix: new RegExp(rules.rank_suffix),
    quoted: new RegExp(rules.quoted, "g"),
    whole: Object.fromEntries(types.map(([k, src]) => [k, re(src, "$")])),
    leading: Object.fromEntries(types.map(([k, src]) => [k, re(src)])),
  };
}

// search.clean

function exceptionOf(rules, line) {
  const m = rules.exception.exec(line);
  if (!m) return [null, line];
  let message = line.slice(m[0].length);
  // str(KeyError(x)) is repr(x): the message arrives quoted.
  if (m[1].endsWith("KeyError") && message.length > 1 && message[0] === message.at(-1) &&
      `'"`.includes(message[0])) message = message.slice(1, -1);
  return [m[1], message];
}

function clean(text, rules, settings) {
  const blocks = [];
  let current = null;
  let inTraceback = false;
  let lastPrefix = null;
  for (const raw of text.replace(/\r\n?/g, "\n").split("\n")) {
    const prefix = rules.prefix.exec(raw)[0];
    const rest = raw.slice(prefix.length);
    if (inTraceback && (rest[0] === " " || rest[0] === "\t")) continue;
    inTraceback = false;
    let [exception, line] = exceptionOf(rules, squash(rest));
    if (!line || rules.noise.test(line)) {
      inTraceback = line === TRACEBACK;
      current = null;
      continue;
    }
    line = line.replace(rules.rankSuffix, "");
    const wrapped = rules.pydantic.exec(line);
    if (wrapped) line = wrapped[1];
    if (exception || wrapped || !current || (prefix && prefix !== lastPrefix)) {
      current = { exception, starts: Boolean(exception || wrapped), lines: [], size: 0 };
      blocks.push(current);
    }
    if (current.size < settings.block_chars) {
      current.lines.push(line);
      current.size += line.length + 1;
    }
    lastPrefix = prefix || lastPrefix;
  }
  const starting = blocks.filter((b) => b.starts);
  const chosen = new Map();
  for (const block of (starting.length ? starting : blocks).slice(-settings.blocks)) {
    const joined = block.lines.join(" ").slice(0, settings.block_chars);
    if (!chosen.has(joined)) chosen.set(joined, { exception: block.exception, text: joined });
  }
  return [...chosen.values()];
}

// search.quoted_words
function quotedWords(blocks, re) {
  const out = new Set(blocks.flatMap((b) => words(b.text.replace(re, " "))));
  return new Set(words(blocks.flatMap((b) => b.text.match(re) || []).join(" ")).filter((w) => !out.has(w)));
}

// search.verify: the shortest values that fit, a fit to the text's end first
function verify(rules, pat, text, typed, budget) {
  const kinds = pat.map((seg) => (typed && typeof seg !== "string" ? seg[1] : "any"));
  const valid = (kind, value) => !has(rules.whole, kind) || rules.whole[kind].test(value);
  for (const anchored of [true, false]) {
    const values = Object.create(null); // placeholder names are data: no prototype
    let steps = budget;
    const spend = () => --steps >= 0;
    const take = (name, value) => {
      if (value !== null) values[name] = value; // on the way back: a name used twice keeps its first
      return value !== null;
    };
    const finalValue = (kind, rest) => {
      if (anchored || !has(rules.leading, kind)) return valid(kind, rest) ? rest : null;
      return rules.leading[kind].exec(rest)?.[0] ?? null;
    };
    const at = (i, pos) => {
      if (i === pat.length) return !anchored || pos === text.length;
      const seg = pat[i];
      if (typeof seg === "string") {
        if (i > 0) return text.startsWith(seg, pos) && at(i + 1, pos + seg.length);
        for (let s = text.indexOf(seg); s >= 0 && spend(); s = text.indexOf(seg, s + 1)) {
          if (at(1, s + seg.length)) return true;
        }
        return false;
      }
      if (i + 1 === pat.length) return take(seg[0], finalValue(kinds[i], text.slice(pos)));
      for (let end = pos; end <= text.length && spend(); end++) {
        if (typeof pat[i + 1] === "string") {
          end = text.indexOf(pat[i + 1], end);
          if (end < 0) return false;
        }
        const value = text.slice(pos, end);
        if (valid(kinds[i], value) && at(i + 1, end)) return take(seg[0], value);
      }
      return false;
    };
    if (at(0, 0)) return values;
  }
  return null;
}

// search.search

// search.shard_of: FNV-1a
function shardOf(word, shards) {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
  return h & (shards - 1);
}

// Results sort by their keys: arrays of numbers, compared in order.
function byKey([a], [b]) {
  const i = a.findIndex((x, j) => x !== b[j]);
  return i < 0 ? 0 : a[i] - b[i];
}

export class Index {
  constructor(url, fetchImpl = (u) => fetch(u)) {
    Object.assign(this, { url, fetchImpl, files: new Map() });
  }

  get(url) {
    if (!this.files.has(url)) {
      this.files.set(url, this.fetchImpl(url).then((r) => r.json()));
    }
    return this.files.get(url);
  }

  // Ranked results: verified matches, then similar patterns (search.search).
  async search(text) {
    const meta = await this.get(this.url);
    this.rules ??= compile(meta.rules);
    const settings = meta.query;
    const blocks = clean(text, this.rules, settings);
    const wanted = [...new Set(blocks.flatMap((b) => words(b.text)))]
      .sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    const scores = await this.scores(meta, wanted.slice(0, settings.words), quotedWords(blocks, this.rules.quoted));
    const top = [...scores.keys()].sort((a, b) => scores.get(b) - scores.get(a) || a - b)
      .slice(0, settings.candidates);
    const docs = await Promise.all(top.map(async (pid) => {
      const page = await this.get(meta.patterns_url.replace("{}", Math.floor(pid / meta.page)));
      return page[pid % meta.page];
    }));
    const rated = top.map((pid, i) => this.rate(docs[i], blocks, scores.get(pid), pid, meta));
    const results = new Map();
    for (const [key, hit] of rated.filter(Boolean).sort(byKey)) {
      if (!results.has(hit.id)) results.set(hit.id, [`${key.slice(0, -1)}`, hit]);
    }
    const all = [...results.values()];
    for (const [alike, hit] of all) hit.tied = hit.exact && all.filter(([a]) => a === alike).length > 1;
    return all.map(([, hit]) => hit).slice(0, settings.results);
  }

  async scores(meta, wanted, quoted) {
    const scores = new Map();
    await Promise.all(wanted.map(async (word) => {
      const rows = await this.get(meta.words_url.replace("{}", shardOf(word, meta.shards)));
      const [w, ...ids] = has(rows, word) ? rows[word] : [0];
      const weight = quoted.has(word) ? Math.floor(w / meta.query.quoted) : w;
      for (const pid of ids) scores.set(pid, (scores.get(pid) || 0) + weight);
    }));
    return scores;
  }

  rate(doc, blocks, score, pid, meta) {
    const settings = meta.query;
    const pat = doc.pattern;
    const literal = pat.reduce((n, seg) => n + (typeof seg === "string" ? seg.length : 0), 0);
    const head = `${doc.exception}: `;
    for (const typed of [true, false]) {
      let fit = null;
      for (const block of blocks) {
        // The exception's name also when it did not look like an exception.
        const named = block.exception ? `.${block.exception}`.endsWith(`.${doc.exception}`) : block.text.startsWith(head);
        const text = !block.exception && named ? block.text.slice(head.length) : block.text;
        const values = verify(this.rules, pat, text, typed, settings.budget);
        if (values && (!fit || (named && !fit[0]))) fit = [named, values];
      }
      if (fit) return [[0, -literal, fit[0] ? 0 : 1, typed ? 0 : 1, pid], hit(meta, doc, true, fit[1])];
    }
    const coverage = doc.weight ? Math.floor((1000 * score) / doc.weight) : 0;
    return coverage < settings.coverage ? null : [[1, -coverage, -score, pid], hit(meta, doc, false, {})];
  }
}

function hit(meta, doc, exact, found) {
  // Values in the pattern's order (a name used twice once); null prototype: names are data.
  const values = Object.create(null);
  for (const seg of doc.pattern) if (typeof seg !== "string" && has(found, seg[0])) values[seg[0]] = found[seg[0]];
  const query = new URLSearchParams(values).toString();
  const url = meta.errors_url.replace("{}", doc.id) + (query && `?${query}`);
  const { id, title, exception, project, summary = "" } = doc;
  return { id, title, exception, project, summary, exact, values, url };
}
