// Tier-1 search: generator/search/engine.py step for step, its functions named alike (in
// snake case there) and in the same order; the rules, settings and words both read from
// index.json, as the site was built (tests/search_cases.json runs through both: tests/js/).

const SPACE = /[ \t\n\r\f\v\u00a0\u2028\u2029]+/g;
const WORD = /[A-Za-z0-9]+/g;
const TRACEBACK = "Traceback (most recent call last)";
const has = Object.hasOwn;

const squash = (text) => text.replace(SPACE, " ").replace(/^ | $/g, "");

const words = (text) =>
  [...text.matchAll(WORD)].map((m) => m[0]).filter((w) => w.length > 1 && !/^[0-9]+$/.test(w))
    .map((w) => w.toLowerCase());

// engine.fold: ASCII letters in lower case, and ("quotes") every quote mark as '
const fold = (text, how) =>
  text.replace(how === "quotes" ? /[A-Z"`]/g : /[A-Z]/g, (c) => (c === '"' || c === "`" ? "'" : c.toLowerCase()));
const QUOTES = "'\"`";
const alnum = (ch) => /^[A-Za-z0-9]$/.test(ch);

function compile(rules) {
  const re = (src, end = "", flags = "") => new RegExp(`^(?:${src})${end}`, flags);
  const types = Object.entries(rules.types);
  return {
    prefix: re(rules.prefix),
    emphasis: new RegExp(rules.emphasis, "g"),
    lineMark: new RegExp(rules.line_mark, "g"),
    looseMark: re(rules.loose_mark, "$"),
    flatTraceback: new RegExp(rules.flat_traceback, "g"),
    flatFrame: re(rules.flat_frame),
    box: new RegExp(rules.box, "g"),
    exception: re(rules.exception),
    noise: re(rules.noise, "$"),
    pydantic: re(rules.pydantic),
    rankSuffix: new RegExp(rules.rank_suffix),
    escape: new RegExp(rules.escape, "g"),
    version: rules.version,
    quoted: new RegExp(rules.quoted, "g"),
    raise: re(rules.raise),
    literalLine: re(rules.literal_line),
    literal: rules.literal,
    tuple: re(rules.tuple),
    tupleItem: new RegExp(rules.tuple_item, "g"),
    ellipsis: new RegExp(rules.ellipsis),
    quotedMessage: new RegExp(rules.quoted_message, "g"),
    jsonValue: new RegExp(rules.json_value, "g"),
    namedException: new RegExp(rules.named_exception, "g"),
    whole: Object.fromEntries(types.map(([k, src]) => [k, re(src, "$")])),
    leading: Object.fromEntries(types.map(([k, src]) => [k, re(src)])),
  };
}

// engine.clean

function exceptionOf(rules, line) {
  const m = rules.exception.exec(line);
  if (!m) return [null, line];
  let message = line.slice(m[0].length);
  // str(KeyError(x)) is repr(x): the message arrives quoted.
  if (m[1].endsWith("KeyError") && message.length > 1 && message[0] === message.at(-1) &&
      `'"`.includes(message[0])) message = message.slice(1, -1);
  return [m[1], message];
}

function add(block, line, raw, settings) {
  if (block.size < settings.block_chars) {
    block.lines.push(line);
    block.raws.push(raw);
    block.size += line.length + 1;
  }
}

// engine.unflatten: the lines a pasted line ran together
function unflatten(rules, line) {
  const start = rules.prefix.exec(line)[0].length;
  const marks = [...line.matchAll(rules.lineMark)].filter((m) => m.index > start);
  const groups = marks.length ? parenGroups(line) : new Map();
  const cuts = marks.filter((m) => !rules.looseMark.test(m[0]) || groups.get(m[0].trim()) > 1).map((m) => m.index);
  const out = [];
  [0, ...cuts].forEach((a, n) => {
    const piece = line.slice(a, n < cuts.length ? cuts[n] : line.length);
    const at = rules.prefix.exec(piece)[0].length;
    const spaces = [...piece.matchAll(rules.flatTraceback)].filter((m) => m.index > at);
    for (const part of splitAt(piece, spaces)) {
      const frame = rules.flatFrame.exec(part);
      if (frame && part.startsWith(" ")) out.push(frame[1], frame[2]);
      else out.push(part);
    }
  });
  return out;
}

// engine.paren_groups: how many times each innermost group "(...)" occurs in the line, a
// loose mark's repeats among them (one pass: a count per mark is quadratic)
function parenGroups(line) {
  const counts = new Map();
  for (const [group] of line.matchAll(/\([^()]*\)/g)) counts.set(group, (counts.get(group) || 0) + 1);
  return counts;
}

// engine.split_at: the text cut where each run of spaces is; a frame keeps a frame's indent
function splitAt(text, spaces) {
  const parts = [];
  let last = 0;
  for (const m of spaces) {
    parts.push(text.slice(last, m.index));
    last = m.index + m[0].length;
  }
  parts.push(text.slice(last));
  return parts.map((p, n) => (n && p.startsWith("File ") ? `  ${p}` : p));
}

const STAMP = /[0-9]{2}:[0-9]{2}:[0-9]{2}/;
const ENDED = /[.!?]\s*$/;
// engine.anew: a line under the same timed log header as the line above, which ended a
// sentence, that opens with a capital starts a record of its own
const anew = (prefix, current, line) => STAMP.test(prefix) && ENDED.test(current?.raws.at(-1) ?? "") && /^[A-Z]/.test(line);

function clean(text, rules, settings) {
  const blocks = [];
  let current = null;
  let held = null; // an exception's message a blank line may have parted
  let inTraceback = false;
  let lastPrefix = null;
  const open = (exception, starts, source = false, level = "") => {
    current = { exception, starts, source, level, lines: [], raws: [], size: 0 };
    blocks.push(current);
  };
  const last = settings.lines; // the paste's last lines (rules.py's QUERY says why)
  const lines = text.replace(/\r\n?/g, "\n").split("\n").slice(-last).flatMap((line) => unflatten(rules, line)).slice(-last);
  for (let raw of lines) {
    raw = raw.replace(rules.box, " ");
    const prefix = rules.prefix.exec(raw)[0];
    const rest = raw.slice(prefix.length);
    let line = squash(rest).replace(rules.emphasis, "");
    if (current?.source && rules.literalLine.test(line)) {
      add(current, line, rest, settings); // the raise statement goes on
      continue;
    }
    if (rules.raise.test(line)) {
      open(null, true, true);
      add(current, line, rest, settings);
      continue;
    }
    if (inTraceback && (rest[0] === " " || rest[0] === "\t")) continue;
    inTraceback = false;
    line = line.replace(rules.escape, (_, quote) => quote || " ");
    let exception;
    [exception, line] = exceptionOf(rules, line);
    if (!line || rules.noise.test(line)) {
      inTraceback = line.startsWith(TRACEBACK);
      held = !line && current?.starts ? current : null; // a message's paragraphs part at a blank line
      current = null;
      lastPrefix = prefix || lastPrefix;
      continue;
    }
    line = line.replace(rules.rankSuffix, "");
    const wrapped = rules.pydantic.exec(line);
    if (wrapped) line = wrapped[1];
    if (!current && held && !exception && !(prefix && prefix !== lastPrefix)) current = held;
    held = null;
    if (exception || wrapped || !current || current.source || (prefix && (prefix !== lastPrefix || anew(prefix, current, line)))) {
      open(exception, Boolean(exception || wrapped), false, levelOf(settings, raw));
    }
    add(current, line, rest, settings);
    lastPrefix = prefix || lastPrefix;
  }
  // A raise statement with no message on its first lines has none; but one a paste ran on
  // into the exception's line is read as prose (engine.clean)
  const kept = [];
  for (const b of blocks) {
    const statement = b.lines.join(" ").slice(0, settings.block_chars);
    if (b.source && ranOn(rules, statement)) {
      b.source = false;
      b.starts = false;
    } else if (b.source && !sourceText(rules, statement)) continue;
    kept.push(b);
  }
  const starting = kept.filter((b) => b.starts);
  const chosen = new Map();
  for (const block of (starting.length ? starting : kept).slice(-settings.blocks)) {
    const joined = block.lines.join(" ").slice(0, settings.block_chars);
    if (!chosen.has(joined)) chosen.set(joined, block);
  }
  // The last lines beside the errors that are no exception's: their fits rank after
  const beside = starting.length ? kept.filter((b) => !b.starts && !b.source) : [];
  for (const block of beside.slice(-settings.beside)) {
    block.beside = true;
    const joined = block.lines.join(" ").slice(0, settings.block_chars);
    if (!chosen.has(joined)) chosen.set(joined, block);
  }
  return [...chosen].map(([joined, block]) => withForms(rules, settings, block, joined));
}

// engine.level_of: the log level a line names as a word of its own, in capitals, or ""
function levelOf(settings, raw) {
  const m = new RegExp(`\\b(${settings.levels.join("|")})\\b`).exec(raw);
  return m ? m[1] : "";
}

// engine.with_forms
function withForms(rules, settings, block, text) {
  const out = { exception: block.exception, starts: block.starts, beside: Boolean(block.beside), level: block.level || "", text, forms: [] };
  if (block.source) {
    out.forms.push({ text: sourceText(rules, text), kind: wholeStatement(rules, text) ? "statement" : "source" });
    return out;
  }
  // A string literal quoted from the code, its holes unfilled: the template's whole text
  // (the first reading: as a message, its holes would fit only loosely)
  for (const q of text.matchAll(rules.quotedMessage)) {
    const inner = q[1].replace(/^ +| +$/g, "");
    if (QUOTES.includes(q[0].slice(-1) || "\0") && new RegExp(FORMAT_HOLE).test(inner)) {
      const code = squash(inner.replace(new RegExp(FORMAT_HOLE, "g"), "{}"));
      if (words(code).length >= settings.partial_words) out.forms.push({ text: code, kind: "code" });
    }
  }
  const stripped = text.replace(rules.ellipsis, "");
  out.forms.push({ text, kind: stripped === text ? "message" : "whole" });
  const joined = glued(block.raws, settings);
  if (joined) out.forms.push({ text: joined.slice(0, settings.block_chars), kind: "glued" });
  if (stripped !== text && stripped) out.forms.push({ text: stripped, kind: "cut" });
  if (rules.tuple.test(text)) out.forms.push({ text: tupleText(rules, text), kind: "tuple" });
  // (A span of one token in quotes is a value, `tensor_parallel_size`: no message.)
  const inners = [...text.matchAll(rules.quotedMessage)].map((q) => q[1].replace(/^ +| +$/g, "")).filter((q) => q.includes(" "));
  // A message in a JSON body: a key's string value (engine.with_forms)
  inners.push(...[...text.matchAll(rules.jsonValue)].map((j) => j[1].replace(/^ +| +$/g, "")).filter((j) => j.includes(" ")));
  // In a line that opens with no exception (a title, prose), the message after the last
  // exception it names
  const named = [...text.matchAll(rules.namedException)].filter((m) => m.index > 0);
  if (block.exception === null && named.length) {
    const m = named.at(-1);
    inners.push(text.slice(m.index + m[0].length).replace(/^ +| +$/g, ""));
  }
  for (const inner of inners) {
    if (inner !== text && words(inner).length >= settings.partial_words) out.forms.push({ text: inner, kind: "quoted" });
  }
  return out;
}

// engine.FORMAT_HOLE: a hole of a format string as the code spells it
const FORMAT_HOLE = String.raw`\{(?:[A-Za-z_][\w.]*|[0-9]*)(?:![rsa])?(?::[^{}]*)?\}|%(?:\(\w+\))?[-#0+]*[0-9]*(?:\.[0-9]+)?[sdrfgexi](?![A-Za-z0-9_])`;

function glued(raws, settings) {
  const width = Math.max(0, ...raws.slice(0, -1).map((r) => r.length));
  if (width < settings.wrap_width) return null;
  const joined = raws.slice(0, -1).map((r) => (r.length === width ? r : `${r} `)).join("");
  return squash(joined + raws.at(-1));
}

const unescape = (body) => body.replace(/\\(.)/g, (_, c) => ("nrt".includes(c) ? " " : c));

function sourceText(rules, statement) {
  const out = [];
  let end = rules.raise.exec(statement)[0].length;
  const literal = new RegExp(rules.literal, "g");
  literal.lastIndex = end;
  for (let m; (m = literal.exec(statement));) {
    if (/[A-Za-z0-9_]/.test(statement.slice(end, m.index))) out.push("{}");
    const body = unescape(m[3]);
    // An f-string's expressions are values, whose names are no words of the message.
    out.push(m[1].toLowerCase().includes("f") ? body.replace(/\{[^{}]*\}/g, "{}") : body);
    end = m.index + m[0].length;
  }
  return squash(out.join(""));
}

// engine.ran_on: a raise line a paste ran on into the exception's line (its breaks lost): an
// exception named in it before any string literal of the call
function ranOn(rules, statement) {
  const start = rules.raise.exec(statement)?.[0].length ?? 0;
  const named = new RegExp(rules.namedException.source, "g");
  const literal = new RegExp(rules.literal, "g");
  named.lastIndex = literal.lastIndex = start;
  const [n, l] = [named.exec(statement), literal.exec(statement)];
  return Boolean(n && (!l || n.index < l.index));
}

// engine.whole_statement: the raise statement shows its whole message (its last string
// literal closes, and so does the call): its text is all of the template
function wholeStatement(rules, statement) {
  const literal = new RegExp(rules.literal, "g");
  literal.lastIndex = rules.raise.exec(statement)?.[0].length ?? 0;
  let last = null;
  for (let m; (m = literal.exec(statement));) last = m;
  if (!last) return false;
  const closed = last[0].length > last[1].length + 1 && last[0].endsWith(last[2]);
  return closed && statement.slice(last.index + last[0].length).replace(/^ +| +$/g, "") === ")";
}

function tupleText(rules, text) {
  const items = [...text.slice(1).matchAll(rules.tupleItem)].map((m) => m[1] || m[2] || m[3] || "");
  return squash(items.map(unescape).join(" ")).replace(rules.ellipsis, "");
}

// engine.candidates: the best with quoted words cut, then the best few in full
// engine.leads_of: the first two words of a text and of what follows each of its first
// colons, and its first three
function leadsOf(settings, text) {
  const starts = [0, ...[...text.matchAll(/: /g)].slice(0, settings.leads).map((m) => m.index + 2)];
  return starts
    .map((start) => words(text.slice(start, start + settings.lead_chars)))
    .flatMap((first) => [2, 3].filter((n) => first.length >= n).map((n) => first.slice(0, n).join(" ")));
}

// engine.holes_of: the keys of the words after a text's first token (a value's), at its
// start and after each of its first colons: a template that opens with a value has them
const HOLE = "{} "; // engine.HOLE
function holesOf(settings, text) {
  const starts = [0, ...[...text.matchAll(/: /g)].slice(0, settings.leads).map((m) => m.index + 2)];
  return starts.flatMap((start) => {
    const head = text.slice(start, start + settings.lead_chars);
    const after = words(head.slice(tokenLen(head)[0]));
    return [2, 3].filter((n) => after.length >= n).map((n) => HOLE + after.slice(0, n).join(" "));
  });
}

// engine.hole_keys: the errors' before those of the lines beside them, the first few
function holeKeys(blocks, settings) {
  const byBeside = [...blocks.filter((b) => !b.beside), ...blocks.filter((b) => b.beside)];
  const keys = [...new Set(byBeside.flatMap((b) => b.forms.flatMap((f) => holesOf(settings, f.text))))];
  return keys.slice(0, settings.hole_keys ?? 0);
}

function candidates(scores, full, settings, order, opened, held) {
  const best = (table) => [...table.keys()].sort((a, b) => table.get(b) - table.get(a) || compare(order(a), order(b)) || a - b);
  const top = best(scores).slice(0, settings.candidates);
  top.push(...best(full).filter((pid) => !top.includes(pid)).slice(0, settings.hedge));
  // ...and those whose opening words the paste holds in a row the most (engine.candidates)
  top.push(...best(opened).filter((pid) => !top.includes(pid)).slice(0, settings.openings));
  // ...and those that open with a value, whose words after it follow the paste's first token
  return top.concat(best(held).filter((pid) => !top.includes(pid)).slice(0, settings.holes ?? 0));
}

// engine.quoted_words
const QUOTED_MESSAGE = 5; // engine.QUOTED_MESSAGE
function quotedWords(blocks, re, message) {
  const out = new Set(blocks.flatMap((b) => words(b.text.replace(re, " "))));
  // (A span of words in double quotes or backticks is a message quoted in prose, no value.)
  const said = new Set(blocks.flatMap((b) => [...b.text.matchAll(new RegExp(message.source, "g"))]
    .map((m) => words(m[1])).filter((ws) => ws.length >= QUOTED_MESSAGE).flat()));
  const quoted = words(blocks.flatMap((b) => b.text.match(re) || []).join(" ")).filter((w) => !out.has(w) && !said.has(w));
  // ...and the words only the lines beside the errors have
  const of = (beside) => new Set(blocks.filter((b) => b.beside === beside).flatMap((b) => b.forms.flatMap((f) => words(f.text))));
  const errors = of(false);
  return new Set([...quoted, ...[...of(true)].filter((w) => !errors.has(w))]);
}

// engine.token_len: an untyped value runs to the first space outside quotes and brackets
// that follows no comma; [length, whether it closes every group it opens]
const CLOSERS = { "(": ")", "[": "]", "{": "}", "<": ">" };
function tokenLen(text) {
  const stack = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const top = stack.at(-1);
    if (top === "'" || top === '"') {
      if (ch === top) stack.pop();
    } else if ((ch === "'" || ch === '"') && !(i && alnum(text[i - 1]))) {
      stack.push(ch);
    } else if (has(CLOSERS, ch)) {
      stack.push(CLOSERS[ch]);
    } else if (")]}".includes(ch)) {
      if (top !== ch) return [i, false];
      stack.pop();
    } else if (ch === ">" && top === ">") {
      stack.pop();
    } else if (ch === " " && !stack.length && !(i && text[i - 1] === ",")) {
      return [i, true];
    }
  }
  return [text.length, !stack.length];
}

function valid(rules, kind, value, cut = false) {
  if (kind === "text") return true;
  if (has(rules.whole, kind)) return rules.whole[kind].test(value);
  const [length, closed] = tokenLen(value);
  return value !== "" && length === value.length && (closed || cut);
}

// engine.fit_of: the fit of the text to the pattern, or null; folded ("case", "quotes"),
// letter case (and quote marks) are ignored
function fitOf(rules, settings, pat, text, strict, cut, folded = "") {
  const seen = folded ? fold(text, folded) : text;
  const segs = folded ? pat.map((seg) => (typeof seg === "string" ? fold(seg, folded) : seg)) : pat;
  for (const anchored of cut ? [true] : [true, false]) {
    const fit = new Fit(rules, settings, segs, seen, strict, anchored, cut, !folded);
    if (fit.at(0, 0)) {
      fit.values = Object.create(null); // placeholder names are data: no prototype
      for (const [name, [a, b]] of fit.spans) fit.values[name] = text.slice(a, b);
      return fit;
    }
  }
  return null;
}

const LED_IN = /[:\]] /g; // where a wrapper's words before a message end (engine.LED_IN)

class Fit {
  constructor(rules, settings, pat, text, strict, anchored, cut, inner) {
    Object.assign(this, { rules, pat, text, anchored, cut, inner, budget: settings.budget, stop: null, start: 0, end: 0 });
    this.kinds = pat.map((seg) => (typeof seg === "string" ? "" : strict ? seg[1] : "text"));
    this.spans = new Map();
  }

  at(i, pos) {
    const { pat, text } = this;
    if (i === pat.length) {
      this.end = pos; // where the fit ends (engine.Fit.end)
      return !this.anchored || pos === text.length;
    }
    if (this.cut && i > 0 && pos === text.length) return this.stopped(i, 0);
    const seg = pat[i];
    if (typeof seg === "string") {
      if (i > 0) {
        if (text.startsWith(seg, pos)) return this.at(i + 1, pos + seg.length);
        return this.cut && seg.startsWith(text.slice(pos)) && this.stopped(i, text.length - pos);
      }
      for (let s = text.indexOf(seg); s >= 0 && this.spend(); s = text.indexOf(seg, s + 1)) {
        if (this.at(1, s + seg.length)) {
          this.start = s; // where the text's fit begins (engine.Fit.start)
          return true;
        }
      }
      return this.cut && this.cutFirst(seg);
    }
    if (i === 0 && this.kinds[0] !== "" && this.kinds[0] !== "text" && !this.cut) {
      // A template that opens with a typed value: a wrapper's words may come before it,
      // ending as a wrapper ends its own (engine.LED_IN)
      for (const start of [0, ...[...text.matchAll(LED_IN)].map((m) => m.index + m[0].length)]) {
        if (this.spend() && this.hole(i, start)) {
          this.start = start;
          return true;
        }
      }
      return false;
    }
    return this.hole(i, pos);
  }

  // engine.Fit.hole: whether segments i... fit the text from pos on, segment i a hole
  hole(i, pos) {
    const { pat, text } = this;
    const seg = pat[i];
    if (i + 1 === pat.length) return this.take(seg[0], pos, this.finalEnd(this.kinds[i], pos));
    const nxt = pat[i + 1];
    for (let end = pos; end <= text.length && this.spend(); end++) {
      if (typeof nxt === "string") {
        end = text.indexOf(nxt, end);
        if (end < 0) break;
      }
      const value = text.slice(pos, end);
      if ((valid(this.rules, this.kinds[i], value) || this.empty(i, value)) && this.at(i + 1, end)) {
        return this.take(seg[0], pos, end);
      }
    }
    return this.cut && this.cutHole(i, pos);
  }

  // engine.Fit.empty: an untyped value the program printed empty, between two literals
  empty(i, value) {
    const kind = this.kinds[i];
    const pat = this.pat;
    return value === "" && kind !== "text" && !has(this.rules.whole, kind) && i > 0 && i < pat.length - 1 && typeof pat[i - 1] === "string" && typeof pat[i + 1] === "string";
  }

  // A cut text ends in the pattern's first literal, from its start or after a colon (unfolded).
  cutFirst(seg) {
    const { text } = this;
    let start = text.indexOf(seg[0], Math.max(0, text.length - seg.length));
    while (start >= 0 && !((start === 0 || (this.inner && start >= 2 && text.startsWith(": ", start - 2))) && seg.startsWith(text.slice(start)))) {
      start = text.indexOf(seg[0], start + 1);
    }
    return start >= 0 && this.stopped(0, text.length - start);
  }

  // A cut text ends in this hole, or in the literal after it.
  cutHole(i, pos) {
    const { text } = this;
    const nxt = this.pat[i + 1];
    const tail = typeof nxt === "string" ? nxt.length : 0;
    for (let end = Math.max(pos + 1, text.length - tail + 1); end <= text.length; end++) {
      const fits = typeof nxt !== "string" || nxt.startsWith(text.slice(end));
      if (fits && valid(this.rules, this.kinds[i], text.slice(pos, end), true) && this.at(i + 1, end)) {
        return this.take(this.pat[i][0], pos, end);
      }
    }
    return false;
  }

  finalEnd(kind, pos) {
    const rest = this.text.slice(pos);
    if (this.anchored) return valid(this.rules, kind, rest, this.cut) ? this.text.length : null;
    if (kind === "text") return this.text.length;
    if (has(this.rules.leading, kind)) {
      const m = this.rules.leading[kind].exec(rest);
      return m ? pos + m[0].length : null;
    }
    const [length, closed] = tokenLen(rest);
    return length && closed ? pos + length : null;
  }

  stopped(i, read) {
    this.stop = [i, read];
    return true;
  }

  // Set on the way back from a fit, so a placeholder used twice keeps its first value.
  take(name, start, end) {
    if (end !== null) this.spans.set(name, [start, end]);
    return end !== null;
  }

  spend() {
    return --this.budget >= 0;
  }
}

// engine.try_form: [tier, how, fit] of the best way a form fits the pattern (tier "loose": a
// generic fit only with values unlike its placeholders), or null
const SOURCES = ["source", "statement", "code"]; // a raise statement's readings, cut short or whole; a literal quoted from the code (engine.SOURCES)
function tryForm(ctx, pat, form, generic, wholeMessage = true) {
  const { rules, settings, how } = ctx;
  const fit = (...args) => fitOf(rules, settings, pat, form.text, ...args);
  const { kind, text } = form;
  if (SOURCES.includes(kind)) {
    // A whole statement is the template's whole text (a generic one's too); a cut one, its start
    const whole = kind !== "source";
    const found = generic && !whole ? null : fit(false, true);
    const f = found && whole && found.stop ? null : found;
    return f && partial(ctx, pat, f, text, kind === "code" ? (how.code ?? how.source) : how.source, { values: false });
  }
  if (kind === "tuple") {
    const f = generic ? null : fit(true, false) || fit(true, true);
    return f && partial(ctx, pat, f, text, how.tuple);
  }
  const whole = kind !== "cut";
  const exact = whole && fit(true, false);
  if (exact && !generic && wholeMessage && goesOn(pat, text, exact.end)) return ["partial", how.more ?? how.prefix, exact];
  if (exact) return generic ? ["generic", how.generic, exact] : ["exact", how[kind], exact];
  if (generic || kind === "glued") return null;
  const bare = whole && fitBare(rules, settings, pat, text);
  if (bare) return ["exact", how.bare, bare];
  // As printed, in other letter case, without the quotes around values or with others.
  for (const [folded, shape] of [["", pat], ["case", pat], ["quotes", unquoted(pat)]]) {
    const fitShape = (...args) => fitOf(rules, settings, shape, text, ...args);
    const f = (whole && folded && fitShape(true, false, folded)) || (kind !== "whole" && fitShape(true, true, folded));
    const found = f && partial(ctx, shape, f, text, null, { folded, cut: kind === "cut" });
    if (found) return found;
  }
  const loose = whole && fit(false, false);
  return loose ? ["loose", how.loose, loose] : null;
}

// engine.fit_bare: the fit with the quote marks of both pattern and text left out; the
// values are the paste's, read where they stand in it
// engine.goes_on: the paste's message goes on past a template that ends a sentence, with
// another sentence of its own; only of an engine's own message (wholeMessage), never a
// stack record's first sentences of another program's text
function goesOn(pat, text, end) {
  const last = pat.length ? pat[pat.length - 1] : "";
  if (typeof last !== "string") return false;
  if (/[.!?]$/.test(last.replace(/\s+$/, ""))) return /^ [A-Z]\S* \S+ \S+/.test(text.slice(end));
  // ...or its sentence goes on with more words
  return /[A-Za-z0-9]$/.test(last) && /^ [a-z]+\b/.test(text.slice(end));
}

const NO_QUOTES = /['"`]/g;
function fitBare(rules, settings, pat, text) {
  const literal = pat.filter((seg) => typeof seg === "string").join("");
  if (![...QUOTES].some((q) => literal.includes(q) || text.includes(q))) return null;
  const where = [];
  for (let i = 0; i < text.length; i++) if (!QUOTES.includes(text[i])) where.push(i);
  const bare = where.map((i) => text[i]).join("");
  const shape = pat.map((seg) => (typeof seg === "string" ? seg.replace(NO_QUOTES, "") : seg)).filter((seg) => seg !== "");
  const fit = fitOf(rules, settings, shape, bare, true, false);
  if (fit) {
    fit.values = Object.create(null);
    for (const [name, [a, b]] of fit.spans) fit.values[name] = b > a ? text.slice(where[a], where[b - 1] + 1) : "";
  }
  return fit;
}

// engine.fragment: [characters, words] of the longest run of a template's own words a paste
// holds in a row: at least fragment_words, or the whole of its longest literal part
function fragment(settings, pat, blocks, anywhere = true) {
  const parts = pat.filter((seg) => typeof seg === "string").map((seg) => words(seg));
  const longest = Math.max(0, ...parts.map((part) => part.length));
  const OPENING = 4; // engine.OPENING
  const first = pat.length && typeof pat[0] === "string" ? words(pat[0]) : [];
  const opening = first.length >= OPENING ? first.slice(0, OPENING) : [];
  let best = [];
  let most = 0;
  for (const block of blocks) {
    for (const form of block.beside ? [] : block.forms) {
      // Not anywhere (a stack record's), only a span the paste quotes whole that is a run
      if (SOURCES.includes(form.kind) || !(anywhere || form.kind === "quoted")) continue;
      const have = words(form.text);
      if (block.starts && (!opening.length || opening.some((w, n) => have[n] !== w))) continue;
      const at = new Map();
      have.forEach((word, n) => at.set(word, [...(at.get(word) || []), n]));
      let mine = [];
      for (const part of parts) {
        const got = runOf(part, have, at);
        if (!anywhere && got.join(" ") !== have.join(" ")) continue;
        const whole = part.length === longest && longest > settings.partial_words;
        const same = got.length === part.length;
        if (got.length && got.length > mine.length && (got.length >= settings.fragment_words || (whole && same))) mine = got;
      }
      if (mine.length) {
        const shown = Math.max(mine.join(" ").length, covered(parts, have, at, settings.partial_words));
        if (shown > most) [best, most] = [mine, shown];
      }
    }
  }
  return best.length ? [most, best] : [0, []];
}

// engine.covered: characters of a template's own text the paste shows in runs of `least` words or more
function covered(parts, have, at, least) {
  let total = 0;
  for (const part of parts) {
    let j = 0;
    while (j < part.length) {
      let k = 0;
      for (const n of at.get(part[j]) || []) {
        let m = 1;
        while (j + m < part.length && n + m < have.length && part[j + m] === have[n + m]) m++;
        k = Math.max(k, m);
      }
      if (k >= least) {
        total += part.slice(j, j + k).join(" ").length;
        j += k;
      } else j += 1;
    }
  }
  return total;
}

// engine.run_of: the longest run of part's words that have holds in a row (the first of the longest)
function runOf(part, have, at) {
  let [size, from] = [0, 0];
  part.forEach((word, j) => {
    for (const n of at.get(word) || []) {
      let k = 1;
      while (j + k < part.length && n + k < have.length && part[j + k] === have[n + k]) k++;
      if (k > size) [size, from] = [k, j];
    }
  });
  return part.slice(from, from + size);
}

// engine.unquoted: the pattern without the quote marks around its values
function unquoted(pat) {
  return pat.map((seg, i) => {
    if (typeof seg !== "string") return seg;
    const end = seg.length - (i + 1 < pat.length && seg.length > 1 && QUOTES.includes(seg.at(-1)) ? 1 : 0);
    return seg.slice(i > 0 && end > 1 && QUOTES.includes(seg[0]) ? 1 : 0, end);
  });
}

function partial(ctx, pat, fit, text, said, { values = true, folded = "", cut = false } = {}) {
  const [i, read] = fit.stop || [pat.length, 0];
  let shown = pat.slice(0, i).filter((seg) => typeof seg === "string").join("");
  let rest = "";
  if (i < pat.length && typeof pat[i] === "string") {
    shown += pat[i].slice(0, read);
    rest = pat[i].slice(read);
  }
  if (words(shown).length < ctx.settings.partial_words) return null;
  const how = said ?? cutHow(ctx.how, pat, fit.stop, text, rest, cut) + (folded ? ctx.how[folded] : "");
  if (!values) fit.values = Object.create(null);
  return ["partial", how, fit];
}

function cutHow(how, pat, stop, text, rest, cut) {
  if (!stop) return how.message;
  const last = stop[0] >= pat.length - 1;
  if (!cut && last && /^[.!?,;:]+$/.test(rest)) return how.punctuation;
  if (!cut && ".!?".includes(text.slice(-1)) && (rest[0] === " " || !rest)) return how.sentence;
  return how.prefix;
}

// engine.cut_short: a fit stops before its template's end, more than its closing punctuation left
function cutShort(pat, stop) {
  if (!stop) return false;
  const [i, read] = stop;
  const rest = i < pat.length && typeof pat[i] === "string" ? pat[i].slice(read) : "{}";
  return !(i === pat.length - 1 && /^[.!?,;:]+$/.test(rest));
}

// How many characters of the template's own text a fit shows.
function shownOf(pat, stop) {
  const [i, read] = stop || [pat.length, 0];
  const own = (seg) => seg.replace(/^['"`]+|['"`]+$/g, "").length; // quotes around a hole don't count
  return pat.slice(0, i).reduce((n, seg) => n + (typeof seg === "string" ? own(seg) : 0), 0) + read;
}

// engine.shard_of: FNV-1a
function shardOf(word, shards) {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
  return h & (shards - 1);
}

// engine.key_shard: a key of three words after an opening value is in its first two's shard
function keyShard(key, shards) {
  return shardOf(key.startsWith(HOLE) ? key.split(" ").slice(0, 3).join(" ") : key, shards);
}

// Results sort by their keys: arrays of numbers, compared in order.
function byKey([a], [b]) {
  const i = a.findIndex((x, j) => x !== b[j]);
  return i < 0 ? 0 : a[i] - b[i];
}

// The projects a paste points at: its name in the text, or a line of its own logger (engine.named_projects).
function namedProjects(text, hints) {
  const said = text.toLowerCase();
  return new Set(Object.entries(hints)
    .filter(([project, pattern]) => said.includes(project.toLowerCase()) || new RegExp(pattern).test(text))
    .map(([project]) => project));
}

// The keys of the serving engines the paste points at (engine.named_engines).
function namedEngines(named, programs) {
  return new Set([...named].filter((name) => programs[name]?.engine).map((name) => programs[name].key));
}

// The program a paste's error comes from (engine.guess_program): a message opening with
// "<name> error", a dotted exception's package, the traceback's last frame's package, a name
// in the message.
function guessProgram(text, blocks, programs) {
  const names = new Map();
  for (const [name, program] of Object.entries(programs)) {
    for (const alias of [name, program.key, program.key.replaceAll("-", "_")]) {
      if (!names.has(alias.toLowerCase())) names.set(alias.toLowerCase(), name);
    }
  }
  const last = blocks.at(-1);
  const message = last ? last.text : squash(text);
  const opening = /^([A-Za-z][\w.-]*) error\b/i.exec(message);
  if (opening && names.has(opening[1].toLowerCase())) return names.get(opening[1].toLowerCase());
  const dotted = /^[A-Za-z_]\w*(?:\.\w+)+(?=: )/.exec(message); // one the cleaning did not take
  const exception = last?.exception || (dotted ? dotted[0] : "");
  if (exception.includes(".")) {
    const pkg = exception.split(".")[0];
    return names.get(pkg.toLowerCase()) ?? pkg;
  }
  const frames = [...text.matchAll(/[/\\](?:site|dist)-packages[/\\]([A-Za-z_]\w*)/g)];
  if (frames.length) {
    const pkg = frames.at(-1)[1];
    return names.get(pkg.toLowerCase()) ?? pkg;
  }
  let best = null;
  for (const [alias, name] of names) {
    const m = new RegExp(`\\b${alias.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).exec(message.toLowerCase());
    if (m && (!best || m.index < best[0] || (m.index === best[0] && name < best[1]))) best = [m.index, name];
  }
  return best ? best[1] : null;
}

// The release the paste names of each project, as numbers (engine.said_versions), and as
// written (engine.said_releases).
const release = (version) => (version.match(/[0-9]+/g) || []).map(Number);
function saidReleases(rules, text, hints) {
  const found = {};
  for (const project of Object.keys(hints)) {
    const name = project.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const m = new RegExp(`\\b${name}${rules.version}`, "i").exec(text);
    if (m) found[project] = m[1];
  }
  return found;
}
function saidVersions(rules, text, hints) {
  return Object.fromEntries(Object.entries(saidReleases(rules, text, hints)).map(([p, v]) => [p, release(v)]));
}

// Lists of numbers compared as Python compares them.
function compare(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// Results that fit alike from two engines as one, led by the project the paste points at
// (else by the first); the others are named in its `also`. A stack project's fit is no copy:
// it keeps its own place among them (engine.one_per_message).
function onePerMessage(ranked, order, mets, fitItems, programs) {
  const copied = (hit) => programs[hit.project]?.engine ?? true;
  const out = [];
  for (let i = 0; i < ranked.length;) {
    let j = i;
    const fit = `${ranked[i][0].slice(0, fitItems)}`;
    while (j < ranked.length && `${ranked[j][0].slice(0, fitItems)}` === fit) j++;
    const run = ranked.slice(i, j);
    i = j;
    if (run[0][1].match === "similar") {
      out.push(...run);
      continue;
    }
    const copies = run.filter(([, hit]) => copied(hit));
    copies.sort(([, a], [, b]) => compare(order(a.project, mets.get(a.id) || 0), order(b.project, mets.get(b.id) || 0)));
    let placed = false;
    for (const item of run) {
      if (!copied(item[1])) out.push(item);
      else if (!placed) {
        placed = true;
        out.push(...led(copies));
      }
    }
  }
  return out;
}

// engine.led: the first copy's results (its project's), the others named in its `also`
function led(copies) {
  const lead = copies[0][1];
  const out = [];
  for (const [key, hit] of copies) {
    if (hit === lead || hit.project === lead.project) out.push([key, hit]);
    else if (!lead.also.some((a) => a.project === hit.project)) {
      lead.also.push({ id: hit.id, project: hit.project, url: hit.url });
    }
  }
  return out;
}

const FIT = 4; // a sort key's first items: how a pattern fits (engine.FIT)

// engine.titled_projects: the projects whose tracker's issue titles open as the paste does
function titledProjects(text, programs) {
  const opening = text.replace(/^\s+/, "").slice(0, 40);
  return new Set(Object.entries(programs)
    .filter(([, p]) => p.titles && new RegExp(`^(?:${p.titles})`).test(opening))
    .map(([name]) => name));
}

// engine.untitled: a pasted issue title's reading without its tracker's tag ("[Bug]: ")
function untitled(blocks, programs, settings) {
  for (const block of blocks) {
    if (block.exception || block.source) continue;
    for (const p of Object.values(programs)) {
      const m = p.titles ? new RegExp(`^(?:${p.titles})`).exec(block.text) : null;
      const rest = m ? block.text.slice(m[0].length).replace(/^ +| +$/g, "") : "";
      if (words(rest).length >= settings.partial_words) {
        block.forms.push({ text: rest, kind: "quoted" });
        break;
      }
    }
  }
}

// engine.lead_order: the order copies of one message lead in, as a key of (project, met)
function leadOrder(named, chosen, titled, programs) {
  return (project, met) => [named.has(project) ? 0 : 1, chosen.has(project) ? 0 : 1,
    titled.has(project) ? 0 : 1, -met, programs[project]?.default ? 0 : 1];
}

// engine.project_of: the project whose run of patterns holds this pattern id
function projectOf(pid, starts) {
  let found = "";
  for (const [start, name] of starts) {
    if (start > pid) break;
    found = name;
  }
  return found;
}

// engine.elsewhere: an exact fit by another engine's record than the one the paste points at is partial
function elsewhere(hits, pointed, programs, how) {
  if (!pointed.size) return;
  for (const hit of hits) {
    if (hit.match === "exact" && programs[hit.project]?.engine && !pointed.has(hit.project)) {
      hit.match = "partial";
      hit.exact = false;
      hit.how += how.elsewhere ?? "";
    }
  }
}

// engine.follow_on: the first result, an error shown beside a wrapper's line, names the line
function followOn(hits, flagged) {
  const lead = hits[0];
  if (!lead || flagged.has(lead.id) || (lead.match !== "exact" && lead.match !== "partial")) return;
  const next = hits.slice(1).find((hit) => flagged.has(hit.id) && hit.match !== "similar");
  if (next) lead.followed_by = { id: next.id, title: next.title, url: next.url };
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

  async context() {
    const meta = await this.get(this.url);
    this.ctx ??= { meta, rules: compile(meta.rules), settings: meta.query, how: meta.how };
    return this.ctx;
  }

  // Ranked results: exact, partial and generic fits, then similar patterns (engine.search);
  // `engine`: the key of the engine the user runs, when known (a twin opens its copy).
  async search(text, engine = null) {
    const ctx = await this.context();
    const { meta, rules, settings } = ctx;
    const blocks = clean(text, rules, settings);
    untitled(blocks, meta.programs || {}, settings);
    // The longest first; a line's beside the errors after theirs (engine.query_words)
    const besideOnly = new Map();
    for (const b of blocks) {
      for (const f of b.forms) for (const w of words(f.text)) besideOnly.set(w, (besideOnly.get(w) ?? true) && b.beside);
    }
    // ...and those seen only in quotes or brackets (values) after the others
    const quoted = quotedWords(blocks, rules.quoted, rules.quotedMessage);
    const wanted = [...besideOnly.keys()]
      .sort((a, b) => besideOnly.get(a) - besideOnly.get(b) || quoted.has(a) - quoted.has(b) || b.length - a.length || (a < b ? -1 : 1));
    // Lead keys; a short paste leaves keys unfetched: its pairs of words, in order, too.
    const pairs = blocks.filter((b) => !b.starts).flatMap((b) => b.forms.flatMap((f) => {
      const ws = words(f.text);
      return ws.slice(1).map((w, n) => `${ws[n]} ${w}`);
    }));
    const byBeside = [...blocks.filter((b) => !b.beside), ...blocks.filter((b) => b.beside)];
    const leadsOnly = [...new Set(byBeside.flatMap((b) => b.forms.flatMap((f) => leadsOf(settings, f.text))))];
    // ...then its runs of three, probes that only find the templates they open (engine.probes)
    const own = new Set(leadsOnly);
    const probes = new Set(blocks.filter((b) => !b.starts).flatMap((b) => b.forms.flatMap((f) => {
      const ws = words(f.text);
      return ws.slice(2).map((w, n) => `${ws[n]} ${ws[n + 1]} ${w}`);
    })).filter((key) => !own.has(key)));
    const leads = [...new Set([...leadsOnly, ...pairs, ...probes])];
    const few = wanted.slice(0, settings.words);
    const short = few.length <= Math.floor(settings.words / 2);
    const keys = [...few, ...(short ? leads : leadsOnly).slice(0, short ? settings.lead_keys + settings.words - few.length : settings.lead_keys)];
    const [scores, full] = await this.scores(meta, keys.filter((k) => !probes.has(k)), quoted);
    const opened = short ? await this.opened(meta, keys.filter((k) => k.includes(" "))) : new Map();
    const held = await this.opened(meta, holeKeys(blocks, settings));
    const hints = meta.hints || {};
    const said = saidVersions(rules, text, hints);
    const named = namedProjects(text, hints);
    const programs = meta.programs || {};
    const engines = namedEngines(named, programs);
    const chosen = new Set(Object.entries(programs).filter(([, p]) => engine && p.key === engine).map(([name]) => name));
    const titled = titledProjects(text, programs);
    const order = leadOrder(named, chosen, titled, programs);
    const starts = meta.starts || [];
    const top = candidates(scores, full, settings, (pid) => order(projectOf(pid, starts), 0), opened, held);
    const docs = await Promise.all(top.map(async (pid) => {
      const page = await this.get(meta.patterns_url.replace("{}", Math.floor(pid / meta.page)));
      return page[pid % meta.page];
    }));
    const mets = new Map();
    const flagged = new Set();
    for (const doc of docs) {
      mets.set(doc.id, Math.max(mets.get(doc.id) || 0, doc.met || 0));
      if (doc.wrapper) flagged.add(doc.id);
    }
    // Fragments of an engine's own messages only (the stack's are other programs' texts)
    const engineDoc = (doc) => programs[doc.project]?.engine ?? true;
    const rated = unwrapped(ctx, top.map((pid, i) => rate(ctx, docs[i], blocks, scores.get(pid) || 0, pid, said, engines, engineDoc(docs[i]))), flagged).sort(byKey);
    const similarRank = meta.ranks.similar;
    const least = rated.some(([key]) => key[0] < similarRank) ? settings.coverage : settings.near_coverage;
    const results = new Map();
    let similar = 0;
    for (const [key, hit] of rated) {
      if (hit.match === "similar" && (++similar > settings.nearest || -key[1] < least)) continue;
      if (!results.has(hit.id)) results.set(hit.id, [key.slice(0, -1), hit]);
    }
    const all = onePerMessage([...results.values()], order, mets, FIT, programs);
    const alike = all.map(([key]) => `${key}`);
    for (const [n, [, hit]] of all.entries()) {
      hit.tied = hit.match !== "similar" && alike.filter((a) => a === alike[n]).length > 1;
    }
    const out = all.map(([, hit]) => hit).slice(0, settings.results);
    // The engine the user runs, as leadOrder reads it: the paste's own, else the one chosen, else its tracker's
    const ofEngines = (names) => new Set([...names].filter((name) => programs[name]?.engine));
    const pointed = [ofEngines(named), chosen, ofEngines(titled)].find((set) => set.size) ?? new Set();
    elsewhere(out, pointed, programs, meta.how);
    followOn(out, flagged);
    return withReleases(out, saidReleases(rules, text, hints));
  }

  // engine.scores: with quoted words cut, and in full
  async scores(meta, wanted, quoted) {
    const scores = new Map();
    const full = new Map();
    await Promise.all(wanted.map(async (word) => {
      const rows = await this.get(meta.words_url.replace("{}", keyShard(word, meta.shards)));
      const [w, ...ids] = has(rows, word) ? rows[word] : [0];
      const cut = quoted.has(word) ? Math.floor(w / meta.query.quoted) : w;
      for (const pid of ids) {
        scores.set(pid, (scores.get(pid) || 0) + cut);
        full.set(pid, (full.get(pid) || 0) + w);
      }
    }));
    return [scores, full];
  }

  // engine.opened: each pattern's sum of the weights of the lead keys it is listed under
  // (or of the keys of its words after an opening value: holeKeys)
  async opened(meta, keys) {
    const opened = new Map();
    for (const key of keys) {
      const rows = await this.get(meta.words_url.replace("{}", keyShard(key, meta.shards)));
      const [w, ...ids] = has(rows, key) ? rows[key] : [0];
      for (const pid of ids) opened.set(pid, (opened.get(pid) || 0) + w);
    }
    return opened;
  }

  // A new issue on the knowledge base's repository with the paste in it (engine.report_url).
  async reportUrl(text) {
    const { meta, rules, settings } = await this.context();
    if (!meta.report) return null;
    const blocks = clean(text, rules, settings);
    const errors = blocks.filter((b) => !b.beside);  // a line beside them names none
    const named = errors.length ? errors : blocks;
    const first = named.length ? named.at(-1).text : squash(text);
    const program = guessProgram(text, named, meta.programs || {});
    const title = `${program || "Unknown"} error: ${first.slice(0, settings.report_title)}`;
    const body = settings.report_body.replace("{}", text.slice(0, settings.report_chars).replace(/^\n+|\n+$/g, ""));
    return meta.report.replace("%7Btitle%7D", encodeURIComponent(title)).replace("%7Bbody%7D", encodeURIComponent(body));
  }
}

// engine.with_releases: the release the paste names of a result's project, in its address
// (?v=: its page opens on that release's wording), unless a placeholder is named v
function withReleases(hits, releases) {
  for (const hit of hits) {
    if (!has(releases, hit.project) || has(hit.values, "v")) continue;
    hit.release = releases[hit.project];
    hit.url += `${hit.url.includes("?") ? "&" : "?"}${new URLSearchParams({ v: hit.release })}`;
  }
  return hits;
}

// engine.standing: an explained record, then a wording the release the paste names printed
function standing(doc, said) {
  const named = said[doc.project];
  const [first, last] = doc.versions || [];
  const printed = !named || Boolean(first && compare(release(first), named) <= 0 && compare(named, release(last)) <= 0);
  return [-(doc.explained || 0), -(doc.met || 0), printed ? 0 : 1];
}

// engine.unwrapped: wrappers' fits (a short text whose value after a colon holds a stack
// fit's text, sharing no word of that one's) and fits another exact or partial fit (no wrapper)
// holds in a value, ranked after the others
function unwrapped(ctx, rated, flagged) {
  const programs = ctx.meta.programs || {};
  const enough = ctx.settings.partial_words;
  const count = (own) => words(own.join(" ")).length;
  const holds = (values, own) => values.some((value) => own.every((piece) => value.includes(piece)));
  const shown = rated.filter(([, , own]) => count(own) >= enough).map(([, hit, own]) => [hit.id, own]);
  const stack = new Set(rated.filter(([, hit]) => has(programs, hit.project) && !programs[hit.project].engine).map(([, hit]) => hit.id));
  // (A fit of a line beside the errors, ranked after theirs, is no cause nor holder.)
  const first = rated.filter(([key]) => key[0] < ctx.meta.ranks.aside);
  const causes = first.filter(([, hit]) => (hit.match === "exact" || hit.match === "partial") && !flagged.has(hit.id));
  // engine.within: a cause is another message, not a shorter wording of the wrapper's own
  const within = (own, mine) => {
    const text = fold(mine.join(" "), "case");
    return own.length > 0 && own.every((piece) => text.includes(fold(piece, "case")));
  };
  const wrappers = new Set(
    rated
      .filter(([, hit, mine, held]) => {
        if (flagged.has(hit.id) && causes.some(([, , own]) => !within(own, mine))) return true;
        const mineTopic = topic(mine);
        return count(mine) <= ctx.settings.wrapper_words && shown.some(([id, own]) =>
          id !== hit.id && stack.has(id) && ![...topic(own)].some((w) => mineTopic.has(w)) && holds(held, own));
      })
      .map(([, hit]) => hit.id),
  );
  const holders = first
    .filter(([, hit]) => (hit.match === "exact" || hit.match === "partial") && !wrappers.has(hit.id))
    .map(([, hit]) => [hit.id, Object.values(hit.values).map((value) => fold(value, "quotes"))]);
  // A wrapper's line beside an error no record fits: no answer of it (engine.unwrapped)
  const kept = rated.filter(([key, hit]) => !(key[0] === ctx.meta.ranks.aside && flagged.has(hit.id) && !causes.length));
  return kept.map(([key, hit, own]) => {
    const held = count(own) >= enough && holders.some(([id, values]) => id !== hit.id && holds(values, own));
    return [wrappers.has(hit.id) || held ? [ctx.meta.ranks.aside, ...key.slice(1)] : key, hit];
  });
}

// engine.topic: the words of four letters or more of a template's own text, in lower case
const topic = (own) => new Set(words(own.join(" ")).filter((w) => w.length >= 4).map((w) => w.toLowerCase()));

// engine.held: the values of the holes after a colon, where a wrapper puts what it caught
function held(pat, values) {
  const after = pat.flatMap((seg, i) => (i && typeof pat[i - 1] === "string" && pat[i - 1].endsWith(": ") && typeof seg !== "string" ? [seg[0]] : []));
  return after.filter((name) => has(values, name)).map((name) => fold(values[name], "quotes"));
}

// engine.own_text: the pieces of the template's own text a fit shows
function ownText(pat, stop) {
  const [i, read] = stop || [pat.length, 0];
  const shown = pat.slice(0, i).filter((seg) => typeof seg === "string");
  if (i < pat.length && typeof pat[i] === "string") shown.push(pat[i].slice(0, read));
  return shown.map((seg) => fold(seg, "quotes").replace(/^['"` ]+|['"` ]+$/g, "")).filter(Boolean);
}

// engine.rate: [key, hit, own text shown, values held after a colon] of a candidate's best
// fit, or of how much of its words the paste has
function rate(ctx, doc, blocks, score, pid, said, engines, fragments = true) {
  const pat = doc.pattern;
  const removed = doc.removed ? 1 : 0;
  // A log level that reports (INFO): after the fits of warnings, errors, exceptions
  const quiet = ctx.settings.quiet.includes(doc.exception) ? 1 : 0;
  const rest = standing(doc, said);
  const head = `${doc.exception}: `;
  let best = null;
  for (const block of blocks) {
    // The exception's name also when it did not look like an exception (engine.names_in).
    const named = block.exception ? `.${block.exception}`.endsWith(`.${doc.exception}`) : (block.level && block.level === doc.exception) || namesIn(block.text, doc.exception);
    for (let form of block.forms) {
      if (!SOURCES.includes(form.kind) && !block.exception && form.text.startsWith(head)) {
        form = { ...form, text: form.text.slice(head.length) };
      }
      const found = tryForm(ctx, pat, form, Boolean(doc.generic), fragments);
      if (!found) continue;
      const [fitTier, how, fit] = found;
      // search: a cut template (the program prints more than it holds) is never exact
      const cutTier = fitTier === "exact" && doc.cut ? "partial" : fitTier;
      // A loose fit (values unlike its placeholders') is a generic one that ranks with the
      // fragments (engine.rate)
      const ranked = ctx.meta.ranks[cutTier] ?? ctx.meta.ranks.generic;
      const tier = cutTier === "loose" ? "generic" : cutTier;
      // A logger's line an exception's message runs on into, after its own text: beside it
      const inside = Boolean(block.exception) && ctx.settings.levels.includes(doc.exception);
      const rank = block.beside || (inside && fit.start > 0) ? ctx.meta.ranks.aside : ranked;
      // ...and a line the paste logs as a warning after an error's (engine.quietness)
      const loud = quiet ? 2 : (ctx.settings.warn ?? []).includes(block.level) ? 1 : 0;
      const key = [rank, loud, -shownOf(pat, fit.stop), cutShort(pat, fit.stop) ? 1 : 0, removed, named ? 0 : 1, ...rest, pid];
      if (!best || byKey([key], best) < 0) {
        best = [key, hit(ctx.meta, doc, tier, how, fit.values, engines), ownText(pat, fit.stop), held(pat, fit.values)];
      }
    }
  }
  if (best) return best;
  const [shown] = !doc.generic ? fragment(ctx.settings, pat, blocks, fragments) : [0];
  if (shown) {
    const key = [ctx.meta.ranks.fragment, 2 * quiet, -shown, 1, removed, 1, ...rest, pid];
    return [key, hit(ctx.meta, doc, "partial", ctx.how.fragment, {}, engines), [], []];
  }
  const coverage = doc.weight ? Math.floor((1000 * score) / doc.weight) : 0;
  return [[ctx.meta.ranks.similar, -coverage, -score, removed, 0, ...rest, pid], hit(ctx.meta, doc, "similar", ctx.how.similar, {}, engines), [], []];
}

// engine.names_in, of a line that opens with no exception: the name anywhere in it, followed by
// ": " or "(" ("E   RuntimeError: ..." in pytest's output, 'RuntimeError("...")' in a title)
function namesIn(text, exception) {
  for (let at = exception ? text.indexOf(exception) : -1; at >= 0; at = text.indexOf(exception, at + 1)) {
    const after = text.slice(at + exception.length, at + exception.length + 2);
    if ((at === 0 || !/[A-Za-z0-9_]/.test(text[at - 1])) && (after === ": " || after[0] === "(")) return true;
  }
  return false;
}

function hit(meta, doc, match, how, found, engines) {
  // Values in the pattern's order (a name used twice once); null prototype: names are data.
  const values = Object.create(null);
  for (const seg of doc.pattern) if (typeof seg !== "string" && has(found, seg[0])) values[seg[0]] = found[seg[0]];
  // A stack record's: the one engine the paste points at, whose advice its page shows first.
  const named = (doc.engines || []).filter((key) => engines.has(key));
  const engine = named.length === 1 ? named[0] : "";
  const params = new URLSearchParams(values);
  if (engine) params.set("engine", engine);
  const query = params.toString();
  const url = meta.errors_url.replace("{}", doc.id) + (query && `?${query}`);
  const { id, title, exception, project, summary = "", wording = "", today = null, upgrade = "" } = doc;
  return { id, title, exception, project, summary, match, how, values, wording, also: [], engine, today, upgrade, release: "", followed_by: null, wrapper: Boolean(doc.wrapper), exact: match === "exact", url };
}
